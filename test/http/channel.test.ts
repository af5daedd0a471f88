// The msgpack batch channel (/stream) and `application/msgpack` on the HTTP routes, against a real
// server: same parsers, same answers, same error codes as JSON.

import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { ChannelError, LatchChannelClient } from '../../src/client/index.js';
import { MiniWebSocket } from '../../src/client/ws.js';
import { decodeMsgpack, encodeMsgpack } from '../../src/domain/msgpack.js';
import { call, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;
let store = '';
let client: LatchChannelClient;

beforeAll(async () => {
  server = await start();
  store = await storeWithModel(server.base, 'channel');
  const writes = Array.from({ length: 50 }, (_, i) => ({ user: `user:u${i}`, relation: 'owner', object: `doc:${i}` }));
  expect((await call(server.base, 'POST', `/stores/${store}/write`, { writes: { tuple_keys: writes } })).status).toBe(
    200,
  );
  client = await LatchChannelClient.connect(`ws://127.0.0.1:${server.port}/stream`);
});

afterAll(async () => {
  await client.close();
  await server.close();
});

describe('msgpack channel', () => {
  test('checks coalesce into one frame and answer true/false', async () => {
    const keys = Array.from({ length: 200 }, (_, i) => ({
      user: `user:u${i % 50}`,
      relation: 'viewer',
      object: `doc:${i % 60}`,
    }));
    const answers = await Promise.all(keys.map((k) => client.check(store, k)));
    expect(answers).toEqual(keys.map((k) => k.user.slice(6) === k.object.slice(4)));
  });

  test('batch: mixed ops answered by id, errors per request', async () => {
    const answers = await client.batch([
      { op: 'check', store_id: store, body: { tuple_key: { user: 'user:u1', relation: 'owner', object: 'doc:1' } } },
      { op: 'check', store_id: store, body: { tuple_key: { user: 'user 1', relation: 'owner', object: 'doc:1' } } },
      {
        op: 'write',
        store_id: store,
        body: { writes: { tuple_keys: [{ user: 'user:new', relation: 'owner', object: 'doc:new' }] } },
      },
      { op: 'read', store_id: store, body: { tuple_key: { object: 'doc:1' } } },
      { op: 'list-objects', store_id: store, body: { type: 'doc', relation: 'owner', user: 'user:u2' } },
      { op: 'get-store', store_id: store },
      { op: 'no-such-op', store_id: store },
      {
        op: 'check',
        store_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV',
        body: { tuple_key: { user: 'user:u1', relation: 'owner', object: 'doc:1' } },
      },
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 400, 200, 200, 200, 200, 404, 404]);
    expect(answers[0]?.body).toEqual({ allowed: true, resolution: '' });
    expect(answers[1]?.error?.code).toBe('validation_error');
    expect(answers[2]?.body).toEqual({});
    expect((answers[3]?.body as { tuples: unknown[] }).tuples).toHaveLength(1);
    expect(answers[4]?.body).toEqual({ objects: ['doc:2'] });
    expect((answers[5]?.body as { id: string }).id).toBe(store);
    expect(answers[6]?.error?.code).toBe('undefined_endpoint');
    expect(answers[7]?.error?.code).toBe('store_id_not_found');
    expect(await client.check(store, { user: 'user:new', relation: 'viewer', object: 'doc:new' })).toBe(true);
  });

  test("one result-cache decision on every transport: HTTP Check, the channel's check op and BatchCheck items", async () => {
    const hits = (): number => server.latch.stats().cache.hits;
    const key = { user: 'user:u7', relation: 'owner', object: 'doc:7' };
    // The channel's `check` op (the client's check() sends check-ids, the bulk form: no cache).
    const viaCheckOp = async (k: typeof key, extra: Record<string, unknown> = {}): Promise<unknown> =>
      (await client.batch([{ op: 'check', store_id: store, body: { tuple_key: k, ...extra } }]))[0]?.body;
    const ALLOWED = { allowed: true, resolution: '' };
    // Filled by an HTTP Check, then answered from the cache by each transport.
    expect((await call(server.base, 'POST', `/stores/${store}/check`, { tuple_key: key })).json).toEqual({
      allowed: true,
      resolution: '',
    });
    let before = hits();
    expect(await viaCheckOp(key)).toEqual(ALLOWED);
    expect(hits()).toBe(before + 1);
    before = hits();
    const batch = await call(server.base, 'POST', `/stores/${store}/batch-check`, {
      checks: [{ tuple_key: key, correlation_id: 'a' }],
    });
    expect(batch.json).toEqual({ result: { a: { allowed: true } } });
    expect(hits()).toBe(before + 1);
    // HIGHER_CONSISTENCY, a context or contextual tuples bypass it on the channel as over HTTP.
    before = hits();
    expect(await viaCheckOp(key, { consistency: 'HIGHER_CONSISTENCY' })).toEqual(ALLOWED);
    expect(await viaCheckOp(key, { context: { x: 1 } })).toEqual(ALLOWED);
    expect(
      (await call(server.base, 'POST', `/stores/${store}/check`, { tuple_key: key, consistency: 'HIGHER_CONSISTENCY' }))
        .json,
    ).toEqual({ allowed: true, resolution: '' });
    expect(hits()).toBe(before);
    // A miss on the channel fills the cache for HTTP.
    const other = { user: 'user:u8', relation: 'viewer', object: 'doc:8' };
    expect(await viaCheckOp(other)).toEqual(ALLOWED);
    before = hits();
    expect((await call(server.base, 'POST', `/stores/${store}/check`, { tuple_key: other })).json).toEqual({
      allowed: true,
      resolution: '',
    });
    expect(hits()).toBe(before + 1);
  });

  test('check errors reject with the API code', async () => {
    await expect(client.check(store, { user: 'user:u1', relation: 'nope', object: 'doc:1' })).rejects.toBeInstanceOf(
      ChannelError,
    );
  });

  test('a malformed frame gets an id-less error answer and the connection stays usable', async () => {
    const ws = await MiniWebSocket.connect(`ws://127.0.0.1:${server.port}/stream`);
    const frames: unknown[] = [];
    ws.onMessage = (data) => frames.push(decodeMsgpack(data));
    ws.send(new Uint8Array([0xc1]));
    ws.send(encodeMsgpack({ not: 'an array' }));
    ws.send(
      encodeMsgpack([
        {
          id: 9,
          op: 'check',
          store_id: store,
          body: { tuple_key: { user: 'user:u3', relation: 'owner', object: 'doc:3' } },
        },
      ]),
    );
    await vi.waitFor(() => expect(frames.flat().length).toBeGreaterThanOrEqual(3), { timeout: 30_000, interval: 10 });
    const all = frames.flat() as { id: unknown; status: number }[];
    expect(all.filter((a) => a.id === null).map((a) => a.status)).toEqual([400, 400]);
    expect(all.find((a) => a.id === 9)).toEqual({ id: 9, status: 200, body: { allowed: true, resolution: '' } });
    ws.close();
  });

  test('the records subprotocol is accepted when offered, and only then', async () => {
    const url = `ws://127.0.0.1:${server.port}/stream`;
    const withRecords = await MiniWebSocket.connect(url, ['other', 'latch-msgpack-records']);
    const plain = await MiniWebSocket.connect(url, ['other']);
    expect(withRecords.protocol).toBe('latch-msgpack-records');
    expect(plain.protocol).toBe('');
    withRecords.close();
    plain.close();
  });

  test('many frames in flight: every request answered once', async () => {
    const n = 20_000;
    const keys = Array.from({ length: n }, (_, i) => ({
      user: `user:u${i % 50}`,
      relation: 'owner',
      object: `doc:${(i * 7) % 50}`,
    }));
    const answers = await Promise.all(keys.map((k) => client.check(store, k)));
    expect(answers.filter(Boolean)).toHaveLength(keys.filter((k) => k.user.slice(6) === k.object.slice(4)).length);
    expect(server.inFlight()).toBe(0);
  });
});

describe('application/msgpack over HTTP', () => {
  test('msgpack body in, msgpack answer out', async () => {
    const r = await fetch(`${server.base}/stores/${store}/check`, {
      method: 'POST',
      headers: { 'content-type': 'application/msgpack', accept: 'application/msgpack' },
      body: encodeMsgpack({ tuple_key: { user: 'user:u4', relation: 'viewer', object: 'doc:4' } }),
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/msgpack');
    expect(r.headers.get('openfga-authorization-model-id')).toMatch(/^[0-9A-Z]{26}$/);
    expect(decodeMsgpack(new Uint8Array(await r.arrayBuffer()))).toEqual({ allowed: true, resolution: '' });
  });

  test('msgpack errors use the same codes', async () => {
    const r = await fetch(`${server.base}/stores/${store}/check`, {
      method: 'POST',
      headers: { 'content-type': 'application/msgpack', accept: 'application/msgpack' },
      body: encodeMsgpack({ tuple_key: { user: 'user:u4', relation: 'viewer' } }),
    });
    expect(r.status).toBe(400);
    expect(decodeMsgpack(new Uint8Array(await r.arrayBuffer()))).toMatchObject({ code: 'validation_error' });
    const bad = await call(server.base, 'POST', `/stores/${store}/check`, new Uint8Array([0xc1]), {
      'content-type': 'application/msgpack',
    });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ code: 'validation_error' });
  });

  test('JSON in, msgpack out', async () => {
    const r = await fetch(`${server.base}/stores/${store}/list-objects`, {
      method: 'POST',
      headers: { accept: 'application/msgpack' },
      body: JSON.stringify({ type: 'doc', relation: 'owner', user: 'user:u7' }),
    });
    expect(decodeMsgpack(new Uint8Array(await r.arrayBuffer()))).toEqual({ objects: ['doc:7'] });
  });
});
