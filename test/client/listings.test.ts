// The listing readers of latch/client (src/client/listings.ts, listing-stream.ts) against JSON.parse:
// on latch's own renderings (src/api/listing-lines.ts; read without JSON.parse), on JSON.stringify
// of random pages (escapes, unicode, lone surrogates, huge ids) and on mutations of both (every
// truncation, inserted and deleted characters, wrong shapes), each reader gives exactly what
// JSON.parse and the documented shape give, or ApiError invalid_response where those refuse.

import { afterEach, describe, expect, test, vi } from 'vitest';
import { ObjectLines, objectPageJson, userPageJson } from '../../src/api/listing-lines.js';
import { TokenCodec } from '../../src/api/tokens.js';
import { userOfKey } from '../../src/engine/evaluation/list/pages.js';
import { ApiError, FallbackCode } from '../../src/client/json.js';
import { decodeObjectsPage, decodeUsersPage } from '../../src/client/listings.js';
import { MAX_LINE, ObjectStreamReader } from '../../src/client/listing-stream.js';
import { Rng } from '../oracle/generate.js';

/** The oracle's seeded generator (mulberry32), so a failure names its seed. */
function rng(seed: number): () => number {
  const r = new Rng(seed);
  return () => r.next();
}

// Characters JSON writes as they are, that it escapes, that are multi-byte, and lone surrogates.
const PLAIN = 'abcXYZ019-_.:|~*@ ';
const ODD = ['"', '\\', '\n', '\u0000', '\u001f', '\u007f', 'é', '✓', '😀', '\ud800', '\udc00', '\u2028', '/'];

function idOf(r: () => number, odd: boolean): string {
  const n = r() < 0.02 ? 2000 + Math.floor(r() * 3000) : Math.floor(r() * 12);
  let s = '';
  for (let i = 0; i < n; i++)
    s += odd && r() < 0.1 ? (ODD[Math.floor(r() * ODD.length)] as string) : PLAIN[Math.floor(r() * PLAIN.length)];
  return s;
}

type Outcome = { value: unknown } | { error: string };

/** The documented shape, checked independently of the readers: a user is one of three exact forms. */
function userShaped(u: unknown): boolean {
  if (typeof u !== 'object' || u === null || Array.isArray(u)) return false;
  const entries = Object.entries(u);
  if (entries.length !== 1) return false;
  const [form, inner] = entries[0] as [string, unknown];
  const fields = { object: ['id', 'type'], userset: ['id', 'relation', 'type'], wildcard: ['type'] }[form];
  if (!fields || typeof inner !== 'object' || inner === null || Array.isArray(inner)) return false;
  const keys = Object.keys(inner).sort();
  return keys.join() === fields.join() && keys.every((k) => typeof (inner as Record<string, unknown>)[k] === 'string');
}

/** What JSON.parse and the page's shape say of `text`: the page, or an error. */
function expected(text: string, key: 'users' | 'objects'): Outcome {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { error: FallbackCode.invalidResponse };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { error: FallbackCode.invalidResponse };
  const o = json as Record<string, unknown>;
  const list = o[key];
  const token = o.continuation_token ?? '';
  const good =
    Object.keys(o).every((k) => k === key || k === 'continuation_token') &&
    Array.isArray(list) &&
    typeof token === 'string' &&
    list.every((x) => (key === 'users' ? userShaped(x) : typeof x === 'string'));
  return good ? { value: { [key]: list, continuation_token: token } } : { error: FallbackCode.invalidResponse };
}

function outcome(read: () => unknown): Outcome {
  try {
    return { value: read() };
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return { error: (e as ApiError).code };
  }
}

function agreeUsers(text: string): void {
  expect(
    outcome(() => decodeUsersPage(text)),
    text.slice(0, 300),
  ).toEqual(expected(text, 'users'));
}

function agreeObjects(text: string): void {
  expect(
    outcome(() => decodeObjectsPage(text)),
    text.slice(0, 300),
  ).toEqual(expected(text, 'objects'));
}

function userKey(r: () => number, odd: boolean): string {
  const type = r() < 0.8 ? 'user' : `t${idOf(r, false).replace(/[:#*]/g, '')}`;
  const form = r();
  if (form < 0.1) return `${type}:*`;
  const id = idOf(r, odd).replace(/[:#]/g, '') || 'x';
  return form < 0.25 ? `${type}:${id}#rel${idOf(r, false).replace(/[:#]/g, '')}` : `${type}:${id}`;
}

/** Texts around `text`: every truncation of short texts, and characters deleted, inserted, replaced. */
function* mutations(text: string, r: () => number): Generator<string> {
  const cuts = text.length <= 400 ? text.length : 60;
  for (let i = 0; i < cuts; i++) yield text.slice(0, text.length <= 400 ? i : Math.floor(r() * text.length));
  const inserts = ['"', '\\', ',', ']', '[', '}', '{', ' ', '\n', '\u0000', 'x', '0', ':', '"x":1,', 'é'];
  for (let k = 0; k < 40; k++) {
    const at = Math.floor(r() * (text.length + 1));
    const piece = inserts[Math.floor(r() * inserts.length)] as string;
    yield text.slice(0, at) + piece + text.slice(at);
    yield text.slice(0, at) + text.slice(at + 1);
    yield text.slice(0, at) + piece + text.slice(at + 1);
  }
}

describe('decodeUsersPage', () => {
  afterEach(() => vi.restoreAllMocks());

  test('latch’s own pages are read without JSON.parse, as JSON.parse reads them', () => {
    const r = rng(1);
    const parse = vi.spyOn(JSON, 'parse');
    for (let page = 0; page < 200; page++) {
      const keys = Array.from({ length: Math.floor(r() * 40) }, () => userKey(r, false));
      const token = page % 3 === 0 ? '' : 'AbC-_09xyz';
      const bytes = userPageJson(keys, token);
      expect(bytes).toBeDefined();
      const text = Buffer.from(bytes as Uint8Array).toString('utf8');
      const want = { users: keys.map(userOfKey), continuation_token: token };
      expect(decodeUsersPage(text)).toEqual(want);
    }
    expect(parse).not.toHaveBeenCalled();
  });

  test('random pages with escapes, unicode and huge ids read as JSON.parse reads them', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = rng(seed);
      const users = Array.from({ length: Math.floor(r() * 20) }, () => userOfKey(userKey(r, true)));
      const page = r() < 0.2 ? { users } : { users, continuation_token: idOf(r, true) };
      const text = JSON.stringify(page, null, r() < 0.2 ? 1 : undefined);
      expect(decodeUsersPage(text), `seed ${seed}`).toEqual({ continuation_token: '', ...page });
      agreeUsers(text);
    }
  });

  test('every mutation of a page is read as JSON.parse reads it, or refused', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const r = rng(seed);
      const keys = Array.from({ length: 1 + Math.floor(r() * 6) }, () => userKey(r, false));
      const own = Buffer.from(userPageJson(keys, seed % 2 ? 'AbC' : '') as Uint8Array).toString('utf8');
      const escaped = JSON.stringify({ users: keys.map((k) => userOfKey(`${k}"\\é`)), continuation_token: 'T' });
      for (const text of [own, escaped]) for (const m of mutations(text, r)) agreeUsers(m);
    }
  });

  test('wrong shapes are invalid_response', () => {
    const wrong = [
      '',
      'null',
      '[]',
      '"users"',
      '{}',
      '{"users":{}}',
      '{"users":null}',
      '{"users":[null]}',
      '{"users":["user:anne"]}',
      '{"users":[{}]}',
      '{"users":[{"object":{"type":"user"}}]}',
      '{"users":[{"object":{"type":"user","id":1}}]}',
      '{"users":[{"object":{"type":"user","id":"a","relation":"r"}}]}',
      '{"users":[{"object":{"type":"user","id":"a"},"wildcard":{"type":"user"}}]}',
      '{"users":[{"wildcard":{"type":"user","id":"*"}}]}',
      '{"users":[{"userset":{"type":"team","id":"a"}}]}',
      '{"users":[{"person":{"type":"user","id":"a"}}]}',
      '{"users":[],"continuation_token":7}',
      '{"users":[],"continuation_token":""',
      '{"users":[],"continuation_token":""}}',
      '{"users":[],"continuation_token":"","extra":1}',
      '{"users":[{"object":{"type":"user","id":"a"}}],}',
      '{"users":[{"object":{"type":"user","id":"a"}},]}',
      '{"objects":["doc:1"],"continuation_token":""}',
      '{"users":[{"object":{"type":"user","id":"a\u0001"}}]}',
      '{"users":[{"object":{"type":"user","id":"a\\u00"}}]}',
    ];
    for (const text of wrong) {
      expect(expected(text, 'users'), text).toEqual({ error: FallbackCode.invalidResponse });
      const e = outcome(() => decodeUsersPage(text, 200));
      expect(e, text).toEqual({ error: FallbackCode.invalidResponse });
    }
    // Equal JSON in another spelling: the same answer.
    const want = { users: [{ object: { type: 'user', id: 'a"b' } }], continuation_token: 'T' };
    for (const text of [
      '{"continuation_token":"T","users":[{"object":{"id":"a\\"b","type":"user"}}]}',
      ' { "users" : [ { "object" : { "type" : "user" , "id" : "a\\u0022b" } } ] , "continuation_token" : "\\u0054" }\n',
    ])
      expect(decodeUsersPage(text)).toEqual(want);
  });
});

describe('decodeObjectsPage', () => {
  afterEach(() => vi.restoreAllMocks());

  test('latch’s own pages are read without JSON.parse, as JSON.parse reads them', () => {
    const r = rng(7);
    const parse = vi.spyOn(JSON, 'parse');
    for (let page = 0; page < 200; page++) {
      const objects = Array.from({ length: Math.floor(r() * 40) }, () => `doc:${idOf(r, false)}`);
      const token = page % 3 === 0 ? '' : 'AbC-_09xyz';
      const text = Buffer.from(objectPageJson(objects, token) as Uint8Array).toString('utf8');
      expect(decodeObjectsPage(text)).toEqual({ objects, continuation_token: token });
    }
    expect(parse).not.toHaveBeenCalled();
  });

  test('random pages and every mutation of them are read as JSON.parse reads them, or refused', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const r = rng(seed);
      const objects = Array.from({ length: Math.floor(r() * 8) }, () => `doc:${idOf(r, seed % 2 === 0)}`);
      const text = JSON.stringify(seed % 5 ? { objects, continuation_token: 'tok' } : { objects });
      expect(decodeObjectsPage(text)).toEqual({ objects, continuation_token: seed % 5 ? 'tok' : '' });
      if (seed <= 60) for (const m of mutations(text, r)) agreeObjects(m);
    }
    for (const text of ['{"objects":[1]}', '{"objects":["a"],"users":[]}', '{"objects":"a"}', '{"objects":["a"]'])
      expect(outcome(() => decodeObjectsPage(text))).toEqual({ error: FallbackCode.invalidResponse });
  });
});

/** What JSON.parse says of each line in turn: the objects up to the first bad line, its error, the last token. */
function expectedStream(body: string): { objects: string[]; token: string | undefined; error?: string } {
  const objects: string[] = [];
  let token: string | undefined;
  for (const line of body.split('\n')) {
    if (line.trim() === '') continue;
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      return { objects, token, error: FallbackCode.invalidResponse };
    }
    const o = json as Record<string, unknown> | null;
    const keys = typeof o === 'object' && o !== null && !Array.isArray(o) ? Object.keys(o) : [];
    if (keys.length === 1 && keys[0] === 'error') {
      const e = o?.error as { code?: unknown } | null;
      return { objects, token, error: typeof e?.code === 'string' ? e.code : FallbackCode.streamError };
    }
    const res = o?.result as Record<string, unknown> | undefined;
    const good =
      keys.length === 1 &&
      keys[0] === 'result' &&
      typeof res === 'object' &&
      res !== null &&
      !Array.isArray(res) &&
      typeof res.object === 'string' &&
      Object.keys(res).every(
        (k) => k === 'object' || (k === 'continuation_token' && typeof res.continuation_token === 'string'),
      );
    if (!good) return { objects, token, error: FallbackCode.invalidResponse };
    objects.push(res.object as string);
    if (res.continuation_token !== undefined) token = res.continuation_token as string;
  }
  return { objects, token };
}

/** The reader over `body` cut into chunks at byte offsets from `r` (inside characters too). */
function readStream(body: string, r: () => number): { objects: string[]; token: string | undefined; error?: string } {
  const bytes = Buffer.from(body, 'utf8');
  const reader = new ObjectStreamReader();
  const objects: string[] = [];
  try {
    for (let at = 0; at < bytes.length;) {
      const n = r() < 0.5 ? 1 + Math.floor(r() * 8) : 1 + Math.floor(r() * 400);
      reader.read(bytes.subarray(at, at + n), objects);
      at += n;
    }
    reader.end(objects);
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return { objects, token: reader.token, error: (e as ApiError).code };
  }
  return { objects, token: reader.token };
}

/** The reader and JSON.parse agree on `body` as its UTF-8 bytes read back (a lone surrogate is U+FFFD on the wire). */
function agreeStream(body: string, r: () => number): void {
  const wire = Buffer.from(body, 'utf8').toString('utf8');
  expect(readStream(wire, r), wire.slice(0, 300)).toEqual(expectedStream(wire));
}

describe('ObjectStreamReader', () => {
  afterEach(() => vi.restoreAllMocks());

  test('latch’s own streams, paged and not, are read without JSON.parse over any chunking', () => {
    const tokens = new TokenCodec('secret').listingTokens('list-objects', '01HSTORE', 'filter');
    const r = rng(11);
    for (let round = 0; round < 20; round++) {
      const objects = Array.from({ length: 1 + Math.floor(r() * 3000) }, (_, i) => `doc:${i}${idOf(r, false)}`);
      const lines = new ObjectLines(
        objects,
        round % 2 ? { tokens, last: round % 4 === 1 ? objects.length - 1 : -1 } : undefined,
      );
      const buf = Buffer.alloc(lines.maxLineBytes + 4096);
      let body = '';
      for (let end = lines.render(buf, 0); end > 0; end = lines.render(buf, 0)) body += buf.toString('utf8', 0, end);
      const parse = vi.spyOn(JSON, 'parse');
      const got = readStream(body, r);
      expect(parse).not.toHaveBeenCalled();
      parse.mockRestore();
      expect(got).toEqual(expectedStream(body));
      expect(got.objects).toEqual(objects);
      if (round % 4 === 1) expect(got.token).toBe('');
      else if (round % 2) expect(got.token).not.toBe('');
    }
  });

  test('random streams with escapes, unicode, error lines and mutations read as JSON.parse reads them', () => {
    for (let seed = 1; seed <= 150; seed++) {
      const r = rng(seed);
      const lines: string[] = [];
      for (let i = Math.floor(r() * 30); i > 0; i--) {
        const result =
          r() < 0.2 ? { object: idOf(r, true), continuation_token: idOf(r, false) } : { object: idOf(r, true) };
        lines.push(JSON.stringify({ result }));
      }
      if (r() < 0.3) lines.push(JSON.stringify({ error: { code: 'deadline_exceeded', message: 'late' } }));
      if (r() < 0.1) lines.push('{"error":{"code":14,"message":"x","details":[]}}');
      const body = lines.join(r() < 0.1 ? '\r\n' : '\n') + (r() < 0.5 ? '\n' : '');
      agreeStream(body, r);
      if (seed <= 50) for (const m of mutations(body, r)) agreeStream(m, r);
    }
  });

  test('a byte order mark is dropped at the body’s start only, as TextDecoder drops it', () => {
    const line = '{"result":{"object":"doc:1"}}\n';
    const bom = '\ufeff';
    for (const body of [bom + line + line, line + bom + line, bom, bom + '\n', '\ufffd' + line, bom + bom + line]) {
      const bytes = Buffer.from(body, 'utf8');
      // Whole, a byte at a time, and cut at every offset.
      const cuts = [[bytes.length], Array.from({ length: bytes.length }, (_, i) => i + 1)];
      for (let at = 1; at < bytes.length; at++) cuts.push([at, bytes.length]);
      const want = expectedStream(new TextDecoder().decode(bytes));
      for (const ends of cuts) {
        const reader = new ObjectStreamReader();
        const objects: string[] = [];
        let error: string | undefined;
        try {
          let from = 0;
          for (const end of ends) {
            reader.read(bytes.subarray(from, end), objects);
            from = end;
          }
          reader.end(objects);
        } catch (e) {
          expect(e).toBeInstanceOf(ApiError);
          error = (e as ApiError).code;
        }
        expect({ objects, token: reader.token, ...(error ? { error } : {}) }, JSON.stringify({ body, ends })).toEqual(
          want,
        );
      }
    }
    // The first body is read; the second's BOM is a character JSON.parse refuses.
    expect(expectedStream(new TextDecoder().decode(Buffer.from(bom + line)))).toEqual({
      objects: ['doc:1'],
      token: undefined,
    });
    expect(expectedStream(line + bom + line).error).toBe(FallbackCode.invalidResponse);
  });

  test('ASCII result lines, lines of other characters and other renderings mixed in one read give every object in order', () => {
    const lines = [
      '{"result":{"object":"doc:a"}}',
      '{"result":{"object":"doc:é✓"}}',
      '{"result":{"object":"doc:b","continuation_token":"T1"}}',
      '{"result": {"object": "doc:c"}}',
      '{"result":{"object":"doc:\\u0041"}}',
      '{"result":{"object":"doc:d","continuation_token":"T2"}}',
      '',
      '{"result":{"object":"doc:e\u007f"}}',
    ];
    const body = Buffer.from(lines.join('\n') + '\n', 'utf8');
    const want = ['doc:a', 'doc:é✓', 'doc:b', 'doc:c', 'doc:A', 'doc:d', 'doc:e\u007f'];
    for (let cut = 0; cut <= body.length; cut++) {
      const reader = new ObjectStreamReader();
      const objects: string[] = [];
      reader.read(body.subarray(0, cut), objects);
      reader.read(body.subarray(cut), objects);
      reader.end(objects);
      expect(objects, String(cut)).toEqual(want);
      expect(reader.token).toBe('T2');
    }
  });

  test('a partial line longer than MAX_LINE is invalid_response, however it arrives', () => {
    const reader = new ObjectStreamReader();
    const objects: string[] = [];
    reader.read(Buffer.from('{"result":{"object":"doc:1"}}\n{"result":{"object":"'), objects);
    const piece = Buffer.alloc(64 * 1024, 0x61);
    let error: unknown;
    try {
      for (let sent = 0; sent <= MAX_LINE; sent += piece.length) reader.read(piece, objects);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe(FallbackCode.invalidResponse);
    expect(objects).toEqual(['doc:1']);
  });

  test('a body cut inside a line, or a line of another shape, is invalid_response', () => {
    for (const body of [
      '{"result":{"object":"doc:1"}}\n{"result":{"object":"doc:2"',
      '{"result":{"object":"doc:1"}}\n{"result":{"object":"doc:2","x":1}}\n',
      '{"result":{"object":2}}\n',
      '{"result":{"object":"a"},"error":{}}\n',
      '{"error":{"code":"unavailable"},"result":{"object":"a"}}\n',
      '{"result":{"object":"a","continuation_token":null}}\n',
      '["doc:1"]\n',
      '{"result":"doc:1"}\n',
      '{"result":{"object":"a\u0001"}}\n',
    ]) {
      const want = expectedStream(body);
      expect(want.error, body).toBe(FallbackCode.invalidResponse);
      expect(readStream(body, rng(3))).toEqual(want);
    }
  });
});
