// ListUsers lists a plain user only when some path grants it by name: a user that appears only in
// the subtracted branch of a `but not`, or whose named path a subtracted typed wildcard removes,
// is covered by the listed `user:*`, never listed itself, even though Check accepts it through the
// wildcard. The two reproductions below, on every path that answers ListUsers: embedded (unpaged
// and paged), HTTP JSON, the msgpack channel, AuthZEN subject search, and a permission index's materialised set.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TupleKey } from '../../src/domain/types.js';
import type { Latch, ListedUser } from '../../src/engine/contract.js';
import { dslToModel } from '../../src/model/dsl.js';
import { LatchChannelClient } from '../../src/client/index.js';
import { call, start } from '../http/helpers.js';
import { active, snapshotSet, tripleKey } from '../permission-index/harness.js';

const CASES = [
  {
    name: 'A: a user named only by the subtracted branch, beside a granted wildcard',
    dsl: `model
  schema 1.1
type user
type group
  relations
    define member: [user]
    define writer: [user:*]
    define manager: [user] but not member
    define viewer: writer or manager
`,
    tuples: [
      { object: 'group:g', relation: 'member', user: 'user:u' },
      { object: 'group:g', relation: 'writer', user: 'user:*' },
    ],
    relation: 'viewer',
  },
  {
    name: 'B: a named path that a subtracted wildcard removes, beside a granted wildcard',
    dsl: `model
  schema 1.1
type user
type group
  relations
    define member: [user:*]
    define can_share: [user] but not member
    define maintainer: can_share or member
`,
    tuples: [
      { object: 'group:g', relation: 'can_share', user: 'user:u' },
      { object: 'group:g', relation: 'member', user: 'user:*' },
    ],
    relation: 'maintainer',
  },
] as const;

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;
beforeAll(async () => {
  server = await start();
});
afterAll(() => server.close());

async function storeFor(
  latch: Latch,
  dsl: string,
  tuples: readonly TupleKey[],
): Promise<{ storeId: string; modelId: string }> {
  const storeId = (await latch.createStore('wild')).id;
  const modelId = await latch.writeModel(storeId, dslToModel(dsl));
  await latch.write({ storeId, writes: [...tuples], deletes: [], onDuplicate: 'error', onMissing: 'error' });
  return { storeId, modelId };
}

const WILDCARD_ONLY: ListedUser[] = [{ wildcard: { type: 'user' } }];

describe('ListUsers beside a typed wildcard lists only users a path names', () => {
  for (const c of CASES) {
    it(`${c.name}: [user:*] on every path`, async () => {
      const latch = server.latch;
      const { storeId, modelId } = await storeFor(latch, c.dsl, c.tuples);
      const input = {
        storeId,
        object: { type: 'group', id: 'g' },
        relation: c.relation,
        userFilters: [{ type: 'user' }],
        contextualTuples: [],
        consistency: 'MINIMIZE_LATENCY' as const,
      };
      // Check accepts user:u (through the wildcard): the answer differs only in ListUsers.
      const check = await latch.check({
        ...input,
        tupleKey: { user: 'user:u', relation: c.relation, object: 'group:g' },
      });
      expect(check.allowed).toBe(true);
      expect((await latch.listUsers(input)).users).toEqual(WILDCARD_ONLY);
      expect((await latch.listUsers({ ...input, page: { size: 10 } })).users).toEqual(WILDCARD_ONLY);

      const http = await call(server.base, 'POST', `/stores/${storeId}/list-users`, {
        object: { type: 'group', id: 'g' },
        relation: c.relation,
        user_filters: [{ type: 'user' }],
      });
      expect(http.status).toBe(200);
      expect(http.json).toEqual({ users: WILDCARD_ONLY });

      const channel = await LatchChannelClient.connect(`ws://127.0.0.1:${server.port}/stream`);
      try {
        const a = await channel.request('list-users', storeId, {
          object: { type: 'group', id: 'g' },
          relation: c.relation,
          user_filters: [{ type: 'user' }],
        });
        expect(a.body).toEqual({ users: WILDCARD_ONLY });
      } finally {
        await channel.close();
      }

      const subjects = await call(server.base, 'POST', `/stores/${storeId}/access/v1/search/subject`, {
        subject: { type: 'user' },
        action: { name: c.relation },
        resource: { type: 'group', id: 'g' },
      });
      expect(subjects.status).toBe(200);
      expect(subjects.json).toEqual({ results: [{ type: 'user', id: '*' }] });

      const index = await latch.createPermissionIndex({
        storeId,
        name: 'wild',
        relations: [{ object_type: 'group', relation: c.relation }],
      });
      const f = { latch, storeId, modelId };
      await active(f, index.record.id);
      expect(await snapshotSet(f, index.record.id)).toEqual(new Set([tripleKey('user:*', c.relation, 'group:g')]));
    });
  }
});
