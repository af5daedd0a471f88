// The per-listing token signer (src/api/tokens.ts `signer`, over src/api/sha256.ts) makes exactly
// the tokens `encode` makes, which `decode` accepts and a changed byte breaks; and a paged
// StreamedListObjects longer than one batch of lines, over object ids that need JSON escaping,
// carries on every line a token that resumes right after it.

import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TokenCodec } from '../../src/api/tokens.js';
import { LatchChannelClient } from '../../src/client/index.js';
import { SHA256_IV, compress, digestInto, pad } from '../../src/api/sha256.js';
import { call, start, storeWithModel } from './helpers.js';

const cursors = [
  '',
  'd',
  'doc:1',
  'doc:é✓😀',
  'doc:"quoted"\\',
  'a'.repeat(55),
  'doc:x',
  'a'.repeat(56),
  'a'.repeat(64),
  'b'.repeat(70),
  'doc:2',
  'z'.repeat(700),
  'doc:3',
];

describe('token signer', () => {
  test('SHA-256 blocks agree with node:crypto across padding boundaries', () => {
    for (const n of [0, 1, 55, 56, 63, 64, 65, 119, 120, 200]) {
      const bytes = new Uint8Array(n + 72 + 64);
      for (let i = 0; i < n; i++) bytes[i] = (i * 31 + 7) & 0xff;
      const state = Int32Array.from(SHA256_IV);
      compress(state, bytes, 0, pad(bytes, n - (n % 64), n, n));
      const out = new Uint8Array(32);
      digestInto(state, out, 0, 8);
      const want = createHash('sha256').update(bytes.subarray(0, n)).digest();
      expect(Buffer.from(out).toString('hex'), `length ${n}`).toBe(want.toString('hex'));
    }
  });

  test('the same tokens as encode, for any store, filter and cursor; decode accepts them', () => {
    for (const codec of [new TokenCodec(), new TokenCodec('a configured secret')]) {
      for (const [storeId, filter] of [
        ['01JABCDEFGHJKMNPQRSTVWXYZ0', 'abcdefghijklmnopqrstuv'],
        ['s', ''],
        ['x'.repeat(60), 'y'.repeat(130)],
        ['x'.repeat(26), 'y'.repeat(23)],
      ] as const) {
        const sign = codec.signer('list-objects', storeId, filter);
        for (const cursor of cursors) {
          const token = sign(cursor);
          expect(token).toBe(codec.encode('list-objects', { storeId, filter, cursor }));
          expect(codec.decode('list-objects', storeId, token)).toEqual({ storeId, filter, cursor });
        }
      }
    }
  });

  test('a token with any byte changed is invalid_continuation_token', () => {
    const codec = new TokenCodec('k');
    const sign = codec.signer('list-objects', 'store', 'filter');
    const raw = Buffer.from(sign('doc:abc'), 'base64url');
    // The MAC is HMAC-SHA256 under the codec's key, truncated to 16 bytes (tokens.ts wire form).
    const key = createHmac('sha256', 'latch continuation tokens').update('k').digest();
    expect(raw.subarray(0, 16)).toEqual(createHmac('sha256', key).update(raw.subarray(16)).digest().subarray(0, 16));
    for (let i = 0; i < raw.length; i++) {
      const bad = Buffer.from(raw);
      bad[i] = (bad[i] as number) ^ 0x01;
      let code = '';
      try {
        codec.decode('list-objects', 'store', bad.toString('base64url'));
      } catch (err) {
        code = (err as { code: string }).code;
      }
      expect(code, `byte ${i}`).toBe('invalid_continuation_token');
    }
  });
});

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;
let store = '';
// More than one batch of lines (1,024), ids that JSON escapes, sorted as the listing is.
const ids = Array.from(
  { length: 2500 },
  (_, i) => `doc:${String(i).padStart(4, '0')}${i % 7 === 0 ? '"é\\' : ''}`,
).sort();

beforeAll(async () => {
  server = await start();
  store = await storeWithModel(server.base, 'stream-tokens');
  for (let i = 0; i < ids.length; i += 100) {
    const writes = ids.slice(i, i + 100).map((object) => ({ user: 'user:anne', relation: 'owner', object }));
    const r = await call(server.base, 'POST', `/stores/${store}/write`, { writes: { tuple_keys: writes } });
    expect(r.status, r.text).toBe(200);
  }
});

afterAll(async () => {
  await server.close();
});

describe('paged StreamedListObjects over several batches', () => {
  const LO = { type: 'doc', relation: 'viewer', user: 'user:anne' };
  const lines = async (body: Record<string, unknown>): Promise<{ object: string; continuation_token: string }[]> => {
    const r = await call(server.base, 'POST', `/stores/${store}/streamed-list-objects`, body);
    expect(r.status, r.text).toBe(200);
    return r.text
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { result: { object: string; continuation_token: string } }).result);
  };

  test('every line, in order, with a token that resumes right after it; the last carries ""', async () => {
    const all = await lines({ ...LO, page_size: 100_000 });
    expect(all.map((l) => l.object)).toEqual(ids);
    expect(all.slice(0, -1).every((l) => /^[A-Za-z0-9_-]+$/.test(l.continuation_token))).toBe(true);
    expect(all[all.length - 1]?.continuation_token).toBe('');
    for (const at of [0, 1023, 1024, 2047, 2498]) {
      const next = await lines({ ...LO, page_size: 2, continuation_token: all[at]?.continuation_token });
      expect(next.map((l) => l.object)).toEqual(ids.slice(at + 1, at + 3));
    }
    // A page that ends before the listing: its last line resumes, and the next page ends it.
    const first = await lines({ ...LO, page_size: 1500 });
    expect(first.map((l) => l.object)).toEqual(ids.slice(0, 1500));
    expect(first[1499]?.continuation_token).toBe(all[1499]?.continuation_token);
    const rest = await lines({ ...LO, page_size: 1500, continuation_token: first[1499]?.continuation_token });
    expect(rest.map((l) => l.object)).toEqual(ids.slice(1500));
    expect(rest[rest.length - 1]?.continuation_token).toBe('');
  });

  test('the msgpack channel answers the same lines as results', async () => {
    const body = { ...LO, page_size: 1500 };
    const http = await lines(body);
    const client = await LatchChannelClient.connect(`${server.base.replace('http', 'ws')}/stream`);
    try {
      const a = await client.request('streamed-list-objects', store, body);
      expect(a.status).toBe(200);
      expect((a.body as { results: unknown[] }).results).toEqual(http);
    } finally {
      await client.close();
    }
  });
});
