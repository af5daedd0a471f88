// Expiring tuples (`expires_at`, a latch extension) against a real server with an injected clock:
// one millisecond before the expiry every query path grants, at the expiry instant none does —
// Check (and its result cache), BatchCheck (its items cached too), Check's explanation, AuthZEN
// evaluation, the msgpack channel's string and id forms (a batch large enough for the worker
// pool), ListObjects (walk-only and confirmed paths, paged and streamed), ListUsers, Expand. Also: Read and ReadChanges show expires_at, bad values are 400
// validation_error, and the sweeper deletes expired tuples with one changelog entry each.

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LatchChannelClient } from '../../src/client/index.js';
import { CHECK_ALLOWED, CHECK_DENIED } from '../../src/engine/contract.js';
import { dslToModel } from '../../src/model/dsl.js';
import { call, start } from './helpers.js';

const DSL = `model
  schema 1.1
type user
type group
  relations
    define member: [user]
type doc
  relations
    define viewer: [user, group#member, user with office]
    define blocked: [user]
    define reader: viewer but not blocked
condition office(ip: string) {
  ip == "10.0.0.1"
}
`;

const T0 = Date.parse('2026-06-01T00:00:00.000Z');
const EXPIRES = '2026-06-01T00:01:00.000Z';
const E = Date.parse(EXPIRES);
let now = T0;

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;
let store = '';
let client: LatchChannelClient;
const post = (path: string, body: Record<string, unknown>) =>
  call(server.base, 'POST', `/stores/${store}${path}`, body);

beforeAll(async () => {
  server = await start({ clock: () => now, expirySweepMs: 0 });
  const created = await call(server.base, 'POST', '/stores', { name: 'expiry' });
  store = (created.json as { id: string }).id;
  expect((await post('/authorization-models', dslToModel(DSL) as unknown as Record<string, unknown>)).status).toBe(201);
  const writes = [
    { user: 'user:anne', relation: 'viewer', object: 'doc:1', expires_at: '2026-06-01T01:01:00+01:00' }, // = EXPIRES
    { user: 'user:keep', relation: 'viewer', object: 'doc:1' },
    { user: 'user:bob', relation: 'member', object: 'group:eng', expires_at: EXPIRES },
    { user: 'group:eng#member', relation: 'viewer', object: 'doc:2' },
    {
      user: 'user:carl',
      relation: 'viewer',
      object: 'doc:3',
      condition: { name: 'office' },
      expires_at: '2026-06-01T00:01:00.0009Z',
    },
  ];
  const w = await post('/write', { writes: { tuple_keys: writes } });
  expect(w.status, w.text).toBe(200);
  client = await LatchChannelClient.connect(`ws://127.0.0.1:${server.port}/stream`);
});

afterAll(async () => {
  await client.close();
  await server.close();
});

const check = async (
  user: string,
  relation: string,
  object: string,
  context?: Record<string, unknown>,
): Promise<boolean> => {
  const r = await post('/check', { tuple_key: { user, relation, object }, ...(context ? { context } : {}) });
  expect(r.status, r.text).toBe(200);
  return (r.json as { allowed: boolean }).allowed;
};

/** Every query path's view of the three expiring grants, as one comparable record. */
async function allPaths(): Promise<Record<string, unknown>> {
  const batch = await post('/batch-check', {
    checks: [
      { correlation_id: 'a', tuple_key: { user: 'user:anne', relation: 'viewer', object: 'doc:1' } },
      { correlation_id: 'b', tuple_key: { user: 'user:bob', relation: 'viewer', object: 'doc:2' } },
      {
        correlation_id: 'c',
        tuple_key: { user: 'user:carl', relation: 'viewer', object: 'doc:3' },
        context: { ip: '10.0.0.1' },
      },
    ],
  });
  const result = (batch.json as { result: Record<string, { allowed: boolean }> }).result;
  const bulkKeys = Array.from({ length: 5000 }, (_, i) => ({
    user: i % 2 === 0 ? 'user:anne' : 'user:bob',
    relation: 'reader',
    object: i % 2 === 0 ? 'doc:1' : 'doc:2',
  }));
  const bulk = await client.checkMany(store, bulkKeys);
  const lo = async (user: string, relation: string, extra: Record<string, unknown> = {}): Promise<string[]> =>
    (
      (await post('/list-objects', { type: 'doc', relation, user, ...extra })).json as { objects: string[] }
    ).objects.sort();
  const streamed = await post('/streamed-list-objects', { type: 'doc', relation: 'viewer', user: 'user:bob' });
  const lu = async (object: string, extra: Record<string, unknown> = {}): Promise<string[]> =>
    (
      (
        await post('/list-users', {
          object: { type: 'doc', id: object },
          relation: 'reader',
          user_filters: [{ type: 'user' }],
          ...extra,
        })
      ).json as { users: { object: { id: string } }[] }
    ).users
      .map((u) => u.object.id)
      .sort();
  const explain = (
    await post('/check/explain', { tuple_key: { user: 'user:bob', relation: 'viewer', object: 'doc:2' } })
  ).json as { allowed: boolean };
  const authzen = (
    await post('/access/v1/evaluation', {
      subject: { type: 'user', id: 'anne' },
      resource: { type: 'doc', id: '1' },
      action: { name: 'reader' },
    })
  ).json as { decision: boolean };
  const expand = (await post('/expand', { tuple_key: { object: 'doc:1', relation: 'viewer' } })).json as {
    tree: { root: { leaf: { users?: { users: string[] } } } };
  };
  return {
    check: [
      await check('user:anne', 'viewer', 'doc:1'),
      await check('user:bob', 'viewer', 'doc:2'),
      await check('user:carl', 'viewer', 'doc:3', { ip: '10.0.0.1' }),
    ],
    batch: [result.a?.allowed, result.b?.allowed, result.c?.allowed],
    explain: explain.allowed,
    authzen: authzen.decision,
    channel: [
      await client.check(store, { user: 'user:anne', relation: 'reader', object: 'doc:1' }),
      await client.check(store, { user: 'user:bob', relation: 'reader', object: 'doc:2' }),
    ],
    bulk: [bulk.errors.size, new Set(bulk.results)],
    listObjects: [
      await lo('user:anne', 'viewer'),
      await lo('user:bob', 'reader'),
      await lo('user:carl', 'viewer', { context: { ip: '10.0.0.1' } }),
    ],
    paged: (
      (await post('/list-objects', { type: 'doc', relation: 'reader', user: 'user:bob', page_size: 10 })).json as {
        objects: string[];
      }
    ).objects,
    streamed: streamed.text
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { result: { object: string } }).result.object),
    listUsers: [await lu('1'), await lu('2'), await lu('1', { page_size: 5 })],
    expand: expand.tree.root.leaf.users?.users ?? [],
  };
}

describe('expires_at', () => {
  test('written, shown by Read and ReadChanges in normal form', async () => {
    const read = (await post('/read', { tuple_key: { object: 'doc:1', relation: 'viewer' } })).json as {
      tuples: { key: Record<string, unknown> }[];
    };
    const anne = read.tuples.find((t) => t.key.user === 'user:anne');
    const keep = read.tuples.find((t) => t.key.user === 'user:keep');
    expect(anne?.key).toEqual({
      user: 'user:anne',
      relation: 'viewer',
      object: 'doc:1',
      condition: null,
      expires_at: EXPIRES,
    });
    expect(keep?.key).toEqual({ user: 'user:keep', relation: 'viewer', object: 'doc:1', condition: null });
    const carl = (await post('/read', { tuple_key: { object: 'doc:3', relation: 'viewer', user: 'user:carl' } }))
      .json as { tuples: { key: Record<string, unknown> }[] };
    expect(carl.tuples[0]?.key.expires_at).toBe(EXPIRES); // sub-millisecond digits cut, never rounded up
    const changes = (await call(server.base, 'GET', `/stores/${store}/changes`)).json as {
      changes: { tuple_key: Record<string, unknown> }[];
    };
    expect(changes.changes.find((c) => c.tuple_key.user === 'user:bob')?.tuple_key.expires_at).toBe(EXPIRES);
  });

  test('every query path grants until the instant before expiry and nothing from it on', async () => {
    now = E - 1;
    const before = await allPaths();
    expect(before).toEqual({
      check: [true, true, true],
      batch: [true, true, true],
      explain: true,
      authzen: true,
      channel: [true, true],
      bulk: [0, new Set([CHECK_ALLOWED])],
      listObjects: [['doc:1'], ['doc:2'], ['doc:3']],
      paged: ['doc:2'],
      streamed: ['doc:2'],
      listUsers: [['anne', 'keep'], ['bob'], ['anne', 'keep']],
      expand: ['user:anne', 'user:keep'],
    });
    now = E;
    const after = await allPaths();
    expect(after).toEqual({
      check: [false, false, false],
      batch: [false, false, false],
      explain: false,
      authzen: false,
      channel: [false, false],
      bulk: [0, new Set([CHECK_DENIED])],
      listObjects: [[], [], []],
      paged: [],
      streamed: [],
      listUsers: [['keep'], [], ['keep']],
      expand: ['user:keep'],
    });
    // The tuple that never expires is untouched.
    expect(await check('user:keep', 'viewer', 'doc:1')).toBe(true);
  });

  test('past, malformed, beyond the horizon, on a contextual tuple → 400 validation_error', async () => {
    now = T0;
    const bad = [
      '2026-05-31T23:59:59.999Z',
      '2026-06-01T00:00:00Z',
      'tomorrow',
      '2026-02-30T00:00:00Z',
      '2026-06-01T24:00:00Z',
      '2026-06-01 00:02:00Z',
      '2037-01-01T00:00:00Z',
      42,
    ];
    for (const expires_at of bad) {
      const r = await post('/write', {
        writes: { tuple_keys: [{ user: 'user:x', relation: 'viewer', object: 'doc:9', expires_at }] },
      });
      expect([r.status, (r.json as { code: string }).code], String(expires_at)).toEqual([400, 'validation_error']);
    }
    const ctx = await post('/check', {
      tuple_key: { user: 'user:x', relation: 'viewer', object: 'doc:9' },
      contextual_tuples: { tuple_keys: [{ user: 'user:x', relation: 'viewer', object: 'doc:9', expires_at: EXPIRES }] },
    });
    expect([ctx.status, (ctx.json as { code: string }).code]).toEqual([400, 'validation_error']);
    expect((await post('/read', { tuple_key: { object: 'doc:9' } })).json).toEqual({
      tuples: [],
      continuation_token: '',
    });
    // The same key with another expiry is a conflicting duplicate (like another condition).
    const dup = await post('/write', {
      writes: {
        tuple_keys: [{ user: 'user:anne', relation: 'viewer', object: 'doc:1', expires_at: '2026-06-01T00:02:00Z' }],
        on_duplicate: 'ignore',
      },
    });
    expect(dup.status).toBe(409);
    const same = await post('/write', {
      writes: {
        tuple_keys: [{ user: 'user:anne', relation: 'viewer', object: 'doc:1', expires_at: EXPIRES }],
        on_duplicate: 'ignore',
      },
    });
    expect(same.status).toBe(200);
  });

  test('the sweeper deletes expired tuples, one changelog entry each, and nothing else', async () => {
    now = E - 1;
    expect(await server.latch.sweepExpired()).toBe(0);
    now = E;
    expect(await server.latch.sweepExpired()).toBe(3);
    expect(await server.latch.sweepExpired()).toBe(0);
    const changes = (await call(server.base, 'GET', `/stores/${store}/changes?page_size=100`)).json as {
      changes: { tuple_key: Record<string, unknown>; operation: string }[];
    };
    const deletes = changes.changes.filter((c) => c.operation === 'TUPLE_OPERATION_DELETE');
    expect(
      deletes
        .map((c) => `${c.tuple_key.object}#${c.tuple_key.relation}@${c.tuple_key.user} ${c.tuple_key.expires_at}`)
        .sort(),
    ).toEqual([
      `doc:1#viewer@user:anne ${EXPIRES}`,
      `doc:3#viewer@user:carl ${EXPIRES}`,
      `group:eng#member@user:bob ${EXPIRES}`,
    ]);
    const read = (await post('/read', {})).json as { tuples: { key: { user: string } }[] };
    expect(read.tuples.map((t) => t.key.user).sort()).toEqual(['group:eng#member', 'user:keep']);
    expect(await check('user:keep', 'viewer', 'doc:1')).toBe(true);
  });
});
