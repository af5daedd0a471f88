// The dictionary form of Check on the msgpack channel (define-strings / check-ids), against a real
// server: every answer and every error code equals the JSON Check of the same tuple key, on the
// inline path and on the worker pool, across writes that add new strings, with conditions.

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  CHECK_ALLOWED,
  CHECK_DENIED,
  CHECK_ERROR,
  ChannelError,
  LatchChannelClient,
  type CheckKey,
} from '../../src/client/index.js';
import { MiniWebSocket } from '../../src/client/ws.js';
import { decodeMsgpack, encodeMsgpack } from '../../src/domain/msgpack.js';
import { call, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;
let store = '';
let client: LatchChannelClient;

beforeAll(async () => {
  server = await start();
  store = await storeWithModel(server.base, 'bulk');
  const writes = [
    ...Array.from({ length: 60 }, (_, i) => ({ user: `user:u${i}`, relation: 'owner', object: `doc:${i}` })),
    { user: 'group:eng#member', relation: 'viewer', object: 'doc:shared' },
    { user: 'user:u1', relation: 'member', object: 'group:eng' },
    { user: 'user:cond', relation: 'viewer', object: 'doc:office', condition: { name: 'office' } },
  ];
  for (let at = 0; at < writes.length; at += 50) {
    expect(
      (await call(server.base, 'POST', `/stores/${store}/write`, { writes: { tuple_keys: writes.slice(at, at + 50) } }))
        .status,
    ).toBe(200);
  }
  client = await LatchChannelClient.connect(`ws://127.0.0.1:${server.port}/stream`);
});

afterAll(async () => {
  await client.close();
  await server.close();
});

/** The JSON Check answer of `key`: true / false or the error code. */
async function jsonCheck(key: CheckKey, extra: Record<string, unknown> = {}): Promise<boolean | string> {
  const r = await call(server.base, 'POST', `/stores/${store}/check`, { tuple_key: key, ...extra });
  const body = r.json as { allowed?: boolean; code?: string };
  return r.status === 200 ? (body.allowed as boolean) : `${r.status} ${body.code ?? ''}`;
}

function bulkAnswer(
  r: { results: Uint8Array; errors: ReadonlyMap<number, ChannelError> },
  i: number,
): boolean | string {
  const b = r.results[i];
  if (b === CHECK_ERROR) {
    const e = r.errors.get(i);
    return `${e?.status ?? 0} ${e?.code ?? ''}`;
  }
  expect([CHECK_ALLOWED, CHECK_DENIED]).toContain(b);
  return b === CHECK_ALLOWED;
}

const KEYS: CheckKey[] = [
  { user: 'user:u1', relation: 'viewer', object: 'doc:1' },
  { user: 'user:u2', relation: 'viewer', object: 'doc:1' },
  { user: 'user:u1', relation: 'owner', object: 'doc:1' },
  { user: 'user:u1', relation: 'viewer', object: 'doc:shared' },
  { user: 'user:u2', relation: 'viewer', object: 'doc:shared' },
  { user: 'group:eng#member', relation: 'viewer', object: 'doc:shared' },
  { user: 'user:nobody', relation: 'viewer', object: 'doc:1' },
  { user: 'user:u1', relation: 'viewer', object: 'doc:never-written' },
  { user: 'user:*', relation: 'viewer', object: 'doc:1' },
  { user: 'user:cond', relation: 'viewer', object: 'doc:office' },
  // Invalid for the edge (patterns) or for the model: each must fail exactly as JSON Check does.
  { user: 'user 1', relation: 'viewer', object: 'doc:1' },
  { user: 'user:u1', relation: 'no such', object: 'doc:1' },
  { user: 'user:u1', relation: 'viewer', object: 'd' },
  { user: 'user:u1', relation: 'nope', object: 'doc:1' },
  { user: 'user:u1', relation: 'viewer', object: 'nodoc:1' },
  { user: 'user:u1', relation: 'viewer', object: 'doc:*' },
  { user: 'anne', relation: 'viewer', object: 'doc:1' },
  { user: 'ghost:anne', relation: 'viewer', object: 'doc:1' },
  { user: 'group:eng#nope', relation: 'viewer', object: 'doc:1' },
  { user: 'user:u1', relation: 'member', object: 'doc:1' },
];

describe('bulk checks (define-strings / check-ids)', () => {
  test('checkMany answers every key as JSON Check does (values and error codes)', async () => {
    const expected = await Promise.all(KEYS.map((k) => jsonCheck(k)));
    expect(expected.filter((e) => typeof e === 'string').length).toBeGreaterThanOrEqual(9);
    const r = await client.checkMany(store, KEYS);
    expect(KEYS.map((_, i) => bulkAnswer(r, i))).toEqual(expected);
    // Second time every string is resolved already: same answers.
    const again = await client.checkMany(store, KEYS);
    expect(KEYS.map((_, i) => bulkAnswer(again, i))).toEqual(expected);
  });

  test('check() is transparent: booleans, and ChannelErrors with the JSON code', async () => {
    const expected = await Promise.all(KEYS.map((k) => jsonCheck(k)));
    const got = await Promise.all(
      KEYS.map((k) => client.check(store, k).catch((e: ChannelError) => `${e.status} ${e.code}`)),
    );
    expect(got).toEqual(expected);
  });

  test('request context reaches conditions; a missing parameter is the JSON error', async () => {
    const key = { user: 'user:cond', relation: 'viewer', object: 'doc:office' };
    for (const ip of ['10.0.0.1', '10.0.0.2']) {
      const r = await client.checkMany(store, [key, KEYS[0] as CheckKey], { context: { ip } });
      expect(bulkAnswer(r, 0)).toEqual(await jsonCheck(key, { context: { ip } }));
      expect(bulkAnswer(r, 1)).toBe(true);
    }
    const r = await client.checkMany(store, [key], { context: {} });
    expect(bulkAnswer(r, 0)).toEqual(await jsonCheck(key, { context: {} }));
    expect(r.errors.get(0)?.code).toBe('validation_error');
  });

  test('large requests go through the worker pool with the same answers', async () => {
    const keys = Array.from({ length: 20_000 }, (_, i) => ({
      user: `user:u${i % 60}`,
      relation: i % 3 === 0 ? 'owner' : 'viewer',
      object: `doc:${i % 61}`,
    }));
    keys[7] = { user: 'user:cond', relation: 'viewer', object: 'doc:office' };
    keys[11] = { user: 'user:u1', relation: 'nope', object: 'doc:1' };
    const r = await client.checkMany(store, keys, { context: { ip: '10.0.0.1' } });
    for (let i = 0; i < keys.length; i++) {
      if (i === 7) expect(r.results[i]).toBe(CHECK_ALLOWED);
      else if (i === 11) expect(r.errors.get(i)?.code).toBe('validation_error');
      else {
        const k = keys[i] as CheckKey;
        expect(r.results[i], `${k.object}#${k.relation}@${k.user}`).toBe(
          k.user.slice(6) === k.object.slice(4) ? CHECK_ALLOWED : CHECK_DENIED,
        );
      }
    }
  });

  test('writes after strings were resolved: new objects and users are seen', async () => {
    const key = { user: 'user:late', relation: 'viewer', object: 'doc:late' };
    expect(await client.check(store, key)).toBe(false);
    expect(
      (
        await call(server.base, 'POST', `/stores/${store}/write`, {
          writes: { tuple_keys: [{ ...key, relation: 'owner' }] },
        })
      ).status,
    ).toBe(200);
    expect(await client.check(store, key)).toBe(true);
    expect(
      (
        await call(server.base, 'POST', `/stores/${store}/write`, {
          writes: { tuple_keys: [{ user: 'user:*', relation: 'viewer', object: 'doc:2' }] },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await call(server.base, 'POST', `/stores/${store}/write`, {
          deletes: { tuple_keys: [{ ...key, relation: 'owner' }] },
        })
      ).status,
    ).toBe(200);
    expect(await client.check(store, key)).toBe(false);
  });

  test('request-level faults reject the whole request', async () => {
    const ok = [{ user: 'user:u1', relation: 'owner', object: 'doc:1' }];
    await expect(client.checkMany('01ARZ3NDEKTSV4RRFFQ69G5FAV', ok)).rejects.toMatchObject({
      status: 404,
      code: 'store_id_not_found',
    });
    await expect(
      client.checkMany(store, ok, { authorization_model_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' }),
    ).rejects.toMatchObject({ code: 'authorization_model_not_found' });
    await expect(client.checkMany(store, ok, { context: { 'bad\u0001key': 1 } })).rejects.toMatchObject({
      code: 'validation_error',
    });
  });

  test('checkMany with contextual tuples falls back to check requests', async () => {
    const key = { user: 'user:ctx', relation: 'viewer', object: 'doc:1' };
    const contextual_tuples = { tuple_keys: [{ user: 'user:ctx', relation: 'owner', object: 'doc:1' }] };
    const r = await client.checkMany(store, [key, KEYS[1] as CheckKey], { contextual_tuples });
    expect([bulkAnswer(r, 0), bulkAnswer(r, 1)]).toEqual([true, false]);
  });
});

describe('bulk checks on the wire', () => {
  /** Sends raw frames on a fresh connection and returns the answers of one frame, by id. */
  async function raw(
    frame: unknown[],
  ): Promise<
    Map<unknown, { status: number; body?: Record<string, unknown>; error?: { code: string; message: string } }>
  > {
    const ws = await MiniWebSocket.connect(`ws://127.0.0.1:${server.port}/stream`);
    const got = new Map<
      unknown,
      { status: number; body?: Record<string, unknown>; error?: { code: string; message: string } }
    >();
    await new Promise<void>((resolve) => {
      ws.onMessage = (data) => {
        for (const a of decodeMsgpack(data) as { id: unknown; status: number }[]) got.set(a.id, a);
        if (got.size >= frame.length) resolve();
      };
      ws.send(encodeMsgpack(frame));
    });
    ws.close();
    return got;
  }

  const u32le = (...v: number[]): Buffer => {
    const b = Buffer.alloc(v.length * 4);
    v.forEach((x, i) => b.writeUInt32LE(x, i * 4));
    return b;
  };

  test('ids declared earlier in the same frame; faults answered per request', async () => {
    const a = await raw([
      { id: 1, op: 'define-strings', body: { first: 0, strings: ['doc:1', 'owner', 'user:u1', 'user:u2'] } },
      { id: 2, op: 'check-ids', store_id: store, body: { checks: u32le(0, 1, 2, 0, 1, 3, 0, 1, 9) } },
      { id: 3, op: 'define-strings', body: { first: 7, strings: ['x:y'] } },
      { id: 4, op: 'check-ids', store_id: store, body: { checks: u32le(0, 1) } },
      { id: 5, op: 'check-ids', store_id: store, body: { checks: 'text' } },
      {
        id: 6,
        op: 'check-ids',
        store_id: store,
        body: {
          checks: u32le(0, 1, 2),
          contextual_tuples: { tuple_keys: [{ user: 'user:u1', relation: 'owner', object: 'doc:2' }] },
        },
      },
      { id: 7, op: 'define-strings', body: { first: 4, strings: ['x'.repeat(513)] } },
    ]);
    expect(a.get(1)).toEqual({ id: 1, status: 200, body: { first: 0, count: 4 } });
    expect(a.get(2)?.status).toBe(200);
    expect([...(a.get(2)?.body?.results as Uint8Array)]).toEqual([CHECK_ALLOWED, CHECK_DENIED, CHECK_ERROR]);
    expect(a.get(2)?.body?.errors).toEqual([
      { index: 2, status: 400, code: 'validation_error', message: expect.any(String) as unknown },
    ]);
    for (const id of [3, 4, 5, 6, 7]) expect(a.get(id)?.error?.code, `request ${id}`).toBe('validation_error');
  });
});
