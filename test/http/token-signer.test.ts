// Listing tokens (src/api/tokens.ts): the parts `listingTokens` gives make exactly the tokens
// `encode` makes, which `decode` accepts; the MAC signs the listing (kind, store, filter), so a
// changed byte there or in the MAC is refused while the cursor is a position the holder may move;
// a token signed over its whole payload (earlier versions) still decodes. And a paged
// StreamedListObjects longer than one buffer of lines, over object ids that need JSON escaping,
// carries on every line a token that resumes right after it.

import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TOKEN_EVERY } from '../../src/api/listing-lines.js';
import { TokenCodec } from '../../src/api/tokens.js';
import { LatchChannelClient } from '../../src/client/index.js';
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

/** The token of `cursor` from `listingTokens`' parts, as the stream renderer composes it. */
function composed(codec: TokenCodec, storeId: string, filter: string, cursor: string): string {
  const { head, tail } = codec.listingTokens('list-objects', storeId, filter);
  return head.toString('latin1') + Buffer.concat([tail, Buffer.from(cursor, 'utf8')]).toString('base64url');
}

describe('listing tokens', () => {
  test('listingTokens composes the tokens encode makes, for any store, filter and cursor; decode accepts them', () => {
    for (const codec of [new TokenCodec(), new TokenCodec('a configured secret')]) {
      for (const [storeId, filter] of [
        ['01JABCDEFGHJKMNPQRSTVWXYZ0', 'abcdefghijklmnopqrstuv'],
        ['s', ''],
        ['s1', ''],
        ['s12', ''],
        ['x'.repeat(60), 'y'.repeat(130)],
        ['x'.repeat(26), 'y'.repeat(23)],
      ] as const) {
        for (const cursor of cursors) {
          const token = codec.encode('list-objects', { storeId, filter, cursor });
          expect(composed(codec, storeId, filter, cursor)).toBe(token);
          expect(codec.decode('list-objects', storeId, token)).toEqual({ storeId, filter, cursor });
        }
      }
    }
  });

  test('a changed byte of the MAC or the listing is invalid_continuation_token; the cursor is a position', () => {
    const codec = new TokenCodec('k');
    const token = codec.encode('list-objects', { storeId: 'store', filter: 'filter', cursor: 'doc:abc' });
    const raw = Buffer.from(token, 'base64url');
    const listing = Buffer.from('list-objects\0store\0filter\0', 'utf8');
    // The MAC is HMAC-SHA256 of the listing under the codec's key, truncated to 16 bytes (tokens.ts wire form).
    const key = createHmac('sha256', 'latch continuation tokens').update('k').digest();
    expect(raw.subarray(0, 16)).toEqual(createHmac('sha256', key).update(listing).digest().subarray(0, 16));
    const decodes = (bytes: Buffer): string => {
      try {
        return codec.decode('list-objects', 'store', bytes.toString('base64url')).cursor;
      } catch (err) {
        return (err as { code: string }).code;
      }
    };
    for (let i = 0; i < 16 + listing.length; i++) {
      const bad = Buffer.from(raw);
      bad[i] = (bad[i] as number) ^ 0x01;
      expect(decodes(bad), `byte ${i}`).toBe('invalid_continuation_token');
    }
    const moved = Buffer.from(raw);
    moved[moved.length - 1] = 'd'.charCodeAt(0);
    expect(decodes(moved)).toBe('doc:abd');
    // Another kind's token (its MAC signs the whole payload) is refused here, and the reverse.
    const read = codec.encode('read', { storeId: 'store', filter: 'filter', cursor: 'doc:abc' });
    expect(decodes(Buffer.from(read, 'base64url'))).toBe('invalid_continuation_token');
    expect(() => codec.decode('read', 'store', token)).toThrow();
    // A listing token signed over its whole payload, as earlier versions made them, still decodes.
    const payload = Buffer.concat([listing, Buffer.from('doc:abc', 'utf8')]);
    const old = Buffer.concat([createHmac('sha256', key).update(payload).digest().subarray(0, 16), payload]);
    expect(decodes(old)).toBe('doc:abc');
  });
});

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;
let store = '';
// More than one buffer of lines (≈ 650), ids that JSON escapes, sorted as the listing is.
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

describe('paged StreamedListObjects over several buffers', () => {
  const LO = { type: 'doc', relation: 'viewer', user: 'user:anne' };
  const lines = async (body: Record<string, unknown>): Promise<{ object: string; continuation_token?: string }[]> => {
    const r = await call(server.base, 'POST', `/stores/${store}/streamed-list-objects`, body);
    expect(r.status, r.text).toBe(200);
    return r.text
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { result: { object: string; continuation_token?: string } }).result);
  };

  test('every TOKEN_EVERY-th line and the last carry a token that resumes right after it; the listing’s last carries ""', async () => {
    const all = await lines({ ...LO, page_size: 100_000 });
    expect(all.map((l) => l.object)).toEqual(ids);
    const carrying = all.flatMap((l, i) => (l.continuation_token === undefined ? [] : [i]));
    expect(carrying).toEqual([TOKEN_EVERY - 1, 2 * TOKEN_EVERY - 1, ids.length - 1]);
    expect(all[ids.length - 1]?.continuation_token).toBe('');
    for (const at of carrying.slice(0, -1)) {
      expect(all[at]?.continuation_token).toMatch(/^[A-Za-z0-9_-]+$/);
      const next = await lines({ ...LO, page_size: 2, continuation_token: all[at]?.continuation_token });
      expect(next.map((l) => l.object)).toEqual(ids.slice(at + 1, at + 3));
    }
    // A page that ends before the listing: its last line resumes, and the next page ends it.
    const first = await lines({ ...LO, page_size: 1500 });
    expect(first.map((l) => l.object)).toEqual(ids.slice(0, 1500));
    expect(first[TOKEN_EVERY - 1]?.continuation_token).toBe(all[TOKEN_EVERY - 1]?.continuation_token);
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
