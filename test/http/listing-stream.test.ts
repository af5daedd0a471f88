// The resumable StreamedListObjects as rendered into the transport's buffer (src/api/listing-lines.ts,
// Exchange's rendered streams): its body is byte for byte `{"result":` + JSON.stringify({object})
// + `}\n` per line, with `continuation_token` (`TokenCodec.encode`'s token) on every TOKEN_EVERY-th
// line of a page and on its last, over ids that JSON escapes or writes as multi-byte UTF-8 and
// across buffers; and a consumer that reads nothing is cut off with a resource_exhausted line
// after the stall limit, the server holding no more than one buffer beyond the socket's.

import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TOKEN_EVERY } from '../../src/api/listing-lines.js';
import { TokenCodec } from '../../src/api/tokens.js';
import { STREAM_SLICE_BYTES } from '../../src/http/exchange.js';
import { call, stalledResponse, start, storeWithModel } from './helpers.js';

const SECRET = 'listing stream test secret';
type Server = Awaited<ReturnType<typeof start>>;
let server: Server;
let store = '';
const LO = { type: 'doc', relation: 'viewer', user: 'user:anne' };
// Ids that JSON writes as they are, that it escapes, that are multi-byte UTF-8; sorted as listed.
const ids = Array.from({ length: 3000 }, (_, i) => {
  const n = String(i).padStart(4, '0');
  if (i % 11 === 0) return `doc:${n}"q\\t`;
  if (i % 13 === 0) return `doc:${n}é✓😀`;
  if (i % 17 === 0) return `doc:${n}${'x'.repeat(200 + (i % 3))}`;
  return `doc:${n}`;
}).sort();

async function writeAll(storeId: string, objects: readonly string[]): Promise<void> {
  for (let i = 0; i < objects.length; i += 100)
    await server.latch.write({
      storeId,
      writes: objects.slice(i, i + 100).map((object) => ({ object, relation: 'owner', user: 'user:anne' })),
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
}

beforeAll(async () => {
  server = await start({ tokenSecret: SECRET, watchStallMs: 300 });
  store = await storeWithModel(server.base, 'listing-stream');
  await writeAll(store, ids);
});

afterAll(async () => {
  await server.close();
});

/** The body of a raw chunked HTTP/1.1 response (`Transfer-Encoding: chunked`) as text. */
function dechunk(raw: Buffer): string {
  return Buffer.concat(chunksOf(raw)).toString('utf8');
}

/** The data of each chunk of a raw chunked HTTP/1.1 response, in order. */
function chunksOf(raw: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let at = raw.indexOf('\r\n\r\n') + 4;
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    const size = parseInt(raw.toString('latin1', at, eol), 16);
    if (!(size > 0)) break;
    parts.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return parts;
}

/** Sends `request` (raw HTTP/1.1, `Connection: close`) and reads the whole response; its raw bytes. */
async function rawResponse(port: number, request: string): Promise<Buffer> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise<void>((resolve, reject) => {
    socket.once('end', () => resolve());
    socket.once('error', reject);
  });
  socket.write(request);
  await ended;
  socket.destroy();
  return Buffer.concat(chunks);
}

/** The body clients read: each line as JSON.stringify renders it, with `encode`'s tokens where they go. */
function expected(objects: readonly string[], filter: string, endsListing: boolean): string {
  const codec = new TokenCodec(SECRET);
  return objects
    .map((object, i) => {
      if ((i + 1) % TOKEN_EVERY !== 0 && i !== objects.length - 1) return `{"result":${JSON.stringify({ object })}}\n`;
      const last = endsListing && i === objects.length - 1;
      const continuation_token = last ? '' : codec.encode('list-objects', { storeId: store, filter, cursor: object });
      return `{"result":${JSON.stringify({ object, continuation_token })}}\n`;
    })
    .join('');
}

describe('rendered StreamedListObjects', () => {
  test('the body is byte for byte the JSON lines with encode’s tokens, page by page to the end', async () => {
    const codec = new TokenCodec(SECRET);
    let token = '';
    let from = 0;
    for (const size of [1, 999, 1500, 100_000]) {
      const r = await call(server.base, 'POST', `/stores/${store}/streamed-list-objects`, {
        ...LO,
        page_size: size,
        ...(token ? { continuation_token: token } : {}),
      });
      expect(r.status, r.text).toBe(200);
      const page = ids.slice(from, from + size);
      const lines = r.text.trim().split('\n');
      const lastToken = (JSON.parse(lines[lines.length - 1] ?? '') as { result: { continuation_token: string } }).result
        .continuation_token;
      // Every page of one listing has the same filter: the last page's token is ''.
      const filter = codec.decode('list-objects', store, lastToken || token).filter;
      const endsListing = from + size >= ids.length;
      expect(r.text).toBe(expected(page, filter, endsListing));
      from += page.length;
      if (endsListing) break;
      token = lastToken;
    }
    expect(from).toBe(ids.length);
  });

  test('each HTTP chunk of a rendered stream holds whole lines', async () => {
    const body = JSON.stringify({ ...LO, page_size: ids.length });
    const raw = await rawResponse(
      server.port,
      `POST /stores/${store}/streamed-list-objects HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n` +
        `Content-Length: ${body.length}\r\n\r\n${body}`,
    );
    const chunks = chunksOf(raw);
    const bytes = Buffer.concat(chunks);
    // ≈ 150 KB of lines: several buffers, each written in several slices, none larger than a
    // write uWS is sure to keep (STREAM_SLICE_BYTES).
    expect(bytes.length).toBeGreaterThan(2 * 64 * 1024);
    expect(chunks.length).toBeGreaterThanOrEqual(Math.ceil(bytes.length / STREAM_SLICE_BYTES));
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(STREAM_SLICE_BYTES);
      expect(chunk[chunk.length - 1]).toBe(0x0a);
    }
    const text = bytes.toString('utf8');
    const lines = text.trim().split('\n');
    const lastToken = (JSON.parse(lines[lines.length - 1] ?? '') as { result: { continuation_token: string } }).result
      .continuation_token;
    expect(lastToken).toBe('');
    const first = (JSON.parse(lines[TOKEN_EVERY - 1] ?? '') as { result: { continuation_token: string } }).result
      .continuation_token;
    const filter = new TokenCodec(SECRET).decode('list-objects', store, first).filter;
    expect(text).toBe(expected(ids, filter, true));
  });

  test('a consumer that reads nothing is cut off with resource_exhausted, then resumes from its last token', async () => {
    // ≈ 12 MB of lines: more than the loopback socket buffers hold.
    const big = await storeWithModel(server.base, 'listing-stream-stall');
    const long = Array.from({ length: 24_000 }, (_, i) => `doc:${String(i).padStart(5, '0')}${'y'.repeat(470)}`);
    await writeAll(big, long);
    const body = JSON.stringify({ ...LO, page_size: 100_000 });
    const raw = await stalledResponse(
      server,
      `POST /stores/${big}/streamed-list-objects HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    const lines = dechunk(raw).split('\n').filter(Boolean);
    const last = JSON.parse(lines[lines.length - 1] ?? '{}') as { error?: { code: number } };
    expect(last.error?.code).toBe(8); // gRPC RESOURCE_EXHAUSTED
    const results = lines
      .slice(0, -1)
      .map((l) => (JSON.parse(l) as { result: { object: string; continuation_token?: string } }).result);
    expect(results.length).toBeGreaterThan(TOKEN_EVERY);
    expect(results.length).toBeLessThan(long.length); // cut off long before the end
    expect(results.map((r) => r.object)).toEqual(long.slice(0, results.length));
    // The last token read resumes the listing right after its line, to the end (the lines read
    // after it come again).
    const at = results.findLastIndex((r) => r.continuation_token !== undefined);
    expect(at).toBe(Math.floor(results.length / TOKEN_EVERY) * TOKEN_EVERY - 1);
    const rest = await call(server.base, 'POST', `/stores/${big}/streamed-list-objects`, {
      ...LO,
      page_size: 100_000,
      continuation_token: results[at]?.continuation_token,
    });
    const objects = rest.text
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { result: { object: string } }).result.object);
    expect(objects).toEqual(long.slice(at + 1));
  }, 180_000);
});
