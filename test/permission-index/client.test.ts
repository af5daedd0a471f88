// Permission indexes through `latch/client` (the msgpack channel's `read-expansions` live stream)
// and the `latch index` commands, against a real server.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LatchChannelClient, type ExpansionStreamEvent } from '../../src/client/index.js';
import { call, start } from '../http/helpers.js';
import { latch, type Run } from '../cli/helpers.js';
import { dslToModel } from '../../src/model/dsl.js';

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;
let store: string;
let model: string;
let env: Record<string, string>;

const DSL = `model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type doc
  relations
    define viewer: [user, group#member]
`;

const json = <T>(r: Run): T => {
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as T;
};

async function write(...tuples: [string, string, string][]): Promise<void> {
  const r = await call(server.base, 'POST', `/stores/${store}/write`, {
    writes: { tuple_keys: tuples.map(([object, relation, user]) => ({ object, relation, user })) },
  });
  expect(r.status, r.text).toBe(200);
}

beforeAll(async () => {
  server = await start();
  env = { LATCH_API_URL: server.base };
  store = ((await call(server.base, 'POST', '/stores', { name: 'pi-client' })).json as { id: string }).id;
  model = (
    (await call(server.base, 'POST', `/stores/${store}/authorization-models`, JSON.stringify(dslToModel(DSL))))
      .json as { authorization_model_id: string }
  ).authorization_model_id;
  await write(['group:eng', 'member', 'user:anne'], ['doc:1', 'viewer', 'group:eng#member']);
});
afterAll(async () => server.close());

describe('latch index commands and latch/client', () => {
  it('create, list, get, watch and delete from the command line', async () => {
    const created = json<{ index_id: string; status: string }>(
      await latch(['index', 'create', '--store-id', store, '--name', 'viewers', '--relation', 'doc#viewer'], env),
    );
    const id = created.index_id;
    expect(['BUILDING', 'ACTIVE']).toContain(created.status);
    expect(
      json<{ indexes: { index_id: string }[] }>(await latch(['index', 'list', '--store-id', store], env)).indexes.map(
        (i) => i.index_id,
      ),
    ).toEqual([id]);
    const watched = await latch(['index', 'watch', '--store-id', store, '--index-id', id, '--max-events', '1'], env);
    expect(watched.code, watched.err).toBe(0);
    const first = JSON.parse(watched.out.trim().split('\n')[0] as string) as {
      expansion: { operation: string; user: string; object: string };
    };
    expect(first.expansion).toMatchObject({ operation: 'INSERT', user: 'user:anne', object: 'doc:1' });
    expect(
      json<{ status: string; expansions_count: number }>(
        await latch(['index', 'get', '--store-id', store, '--index-id', id], env),
      ),
    ).toMatchObject({ status: 'ACTIVE', expansions_count: 1 });
    expect(
      json<{ deleted: string }>(await latch(['index', 'delete', '--store-id', store, '--index-id', id], env)).deleted,
    ).toBe(id);
    const gone = await latch(['index', 'get', '--store-id', store, '--index-id', id], env);
    expect(gone.code).not.toBe(0);
    expect(gone.err).toMatch(/not found/);
    const bad = await latch(['index', 'create', '--store-id', store, '--name', 'x', '--relation', 'doc'], env);
    expect(bad.code).not.toBe(0);
  });

  it('streams the current set and live events on the msgpack channel; leaving the loop cancels', async () => {
    const created = await call(server.base, 'POST', `/stores/${store}/indexes`, {
      name: 'chan',
      relations: [{ object_type: 'doc', relation: 'viewer' }],
    });
    const id = (created.json as { index_id: string }).index_id;
    const client = await LatchChannelClient.connect(`ws://127.0.0.1:${server.port}/stream`);
    try {
      const seen: string[] = [];
      let written = false;
      for await (const e of client.expansions(store, id, { authorization_model_id: model, heartbeat_ms: 200 })) {
        const ev = e as ExpansionStreamEvent;
        if ('expansion' in ev)
          seen.push(`${ev.expansion.operation} ${ev.expansion.object}#${ev.expansion.relation}@${ev.expansion.user}`);
        if ('freshness' in ev && !written) {
          written = true;
          await write(['group:eng', 'member', 'user:bob']);
        }
        if (seen.length === 2) break;
      }
      expect(seen).toEqual(['INSERT doc:1#viewer@user:anne', 'INSERT doc:1#viewer@user:bob']);
      const bad = client.expansions(store, id, { authorization_model_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' });
      await expect(bad.next()).rejects.toMatchObject({ status: 400 });
    } finally {
      await client.close();
    }
  });
});
