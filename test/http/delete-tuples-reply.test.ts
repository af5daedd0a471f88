// The delete-tuples reply (src/api/delete-tuples.ts): its JSON is written straight into bytes for
// plain tuple keys, and must be byte for byte what JSON.stringify makes of the reply's body; keys
// JSON escapes or that are not ASCII take JSON.stringify itself; the msgpack channel gets the same
// body as an object.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LatchChannelClient } from '../../src/client/index.js';
import type { TupleKey } from '../../src/domain/types.js';
import { call, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;

let server: Server;
let client: LatchChannelClient;

beforeAll(async () => {
  server = await start({ engine: { maxTuplesPerWrite: 1000 } });
  client = await LatchChannelClient.connect(`ws://127.0.0.1:${server.port}/stream`);
});

afterAll(async () => {
  await client.close();
  await server.close();
});

/** A store holding `keys` (MODEL's types). */
async function storeOf(name: string, keys: readonly TupleKey[]): Promise<string> {
  const store = await storeWithModel(server.base, name);
  const w = await call(server.base, 'POST', `/stores/${store}/write`, { writes: { tuple_keys: keys } });
  expect(w.status).toBe(200);
  return store;
}

/** The keys as OpenFGA renders a tuple key without condition: every field, condition null. */
const rendered = (keys: readonly TupleKey[]): unknown[] =>
  keys.map((k) => ({ user: k.user, relation: k.relation, object: k.object, condition: null }));

describe('delete-tuples reply', () => {
  it('plain keys: the bytes are JSON.stringify of the body, field by field; paging by limit', async () => {
    const viewers = Array.from({ length: 25 }, (_, i) => ({
      user: i % 5 === 0 ? `group:g${i}#member` : `user:u${i}`,
      relation: 'viewer',
      object: `doc:d${String(i).padStart(2, '0')}`,
    }));
    const owners = viewers.map((k, i) => ({ user: `user:o${i}`, relation: 'owner', object: k.object }));
    const store = await storeOf('reply-plain', [...viewers, ...owners]);
    const got: unknown[] = [];
    for (const more of [true, true, false]) {
      const r = await call(server.base, 'POST', `/stores/${store}/delete-tuples`, {
        filter: { object_type: 'doc', relation: 'viewer' },
        limit: 10,
      });
      expect(r.status).toBe(200);
      expect(r.text).toBe(JSON.stringify(r.json));
      const body = r.json as { tuple_keys: unknown[]; more: boolean; dry_run: boolean; revision: number };
      expect(Object.keys(body)).toEqual(['tuple_keys', 'more', 'dry_run', 'revision']);
      expect(body.more).toBe(more);
      expect(body.dry_run).toBe(false);
      got.push(...body.tuple_keys);
    }
    expect(got).toEqual(rendered(viewers));
    // A dry run renders the same way.
    const dry = await call(server.base, 'POST', `/stores/${store}/delete-tuples`, {
      filter: { object_type: 'doc' },
      dry_run: true,
      limit: 3,
    });
    expect(dry.text).toBe(JSON.stringify(dry.json));
    expect((dry.json as { tuple_keys: unknown[] }).tuple_keys).toEqual(rendered(owners.slice(0, 3)));
    expect((dry.json as { dry_run: boolean }).dry_run).toBe(true);
  });

  it('keys that are not plain ASCII come out as JSON.stringify writes them', async () => {
    const keys = [
      { user: 'user:plain', relation: 'viewer', object: 'doc:a' },
      { user: 'user:\u00fc\u{1f600}', relation: 'viewer', object: 'doc:b\u00e9' },
      { user: 'user:x', relation: 'viewer', object: 'doc:c' },
    ];
    const store = await storeOf('reply-unicode', keys);
    const r = await call(server.base, 'POST', `/stores/${store}/delete-tuples`, {
      filter: { object_type: 'doc' },
      limit: 10,
    });
    expect(r.status).toBe(200);
    expect(r.text).toBe(JSON.stringify(r.json));
    expect((r.json as { tuple_keys: unknown[] }).tuple_keys).toEqual(rendered(keys));
  });

  it('over the msgpack channel the body is the same object', async () => {
    const keys = Array.from({ length: 12 }, (_, i) => ({
      user: `user:u${i}`,
      relation: 'viewer',
      object: `doc:m${i}`,
    }));
    const store = await storeOf('reply-channel', keys);
    const [answer] = await client.batch([
      { op: 'delete-tuples', store_id: store, body: { filter: { object_type: 'doc' }, limit: 10 } },
    ]);
    expect(answer?.status).toBe(200);
    const body = answer?.body as { tuple_keys: unknown[]; more: boolean; dry_run: boolean };
    expect(body.tuple_keys).toEqual(rendered([...keys].sort((a, b) => (a.object < b.object ? -1 : 1)).slice(0, 10)));
    expect(body.more).toBe(true);
    expect(body.dry_run).toBe(false);
  });
});
