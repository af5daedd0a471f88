// Complete listings rendered as UTF-8 straight into bytes, with nothing allocated per result (no
// string, no object): an id that JSON writes as it is (printable ASCII without `"` and `\`) is
// copied byte by byte; anything else takes a slow path through `JSON.stringify`.
//
// - The NDJSON lines of StreamedListObjects (`ObjectLines`), into the transport's reused buffer:
//   `{"result":{"object":"doc:1"}}\n` per object. In a resumable stream (a page of a complete
//   listing) every TOKEN_EVERY-th line of the page and its last line also carry
//   `"continuation_token"`: the token resuming right after that line's object, '' on the
//   listing's last object. The token is the listing's fixed base64 head plus the base64 of the
//   id's own bytes, read back from the line just written; its bytes are exactly those of
//   `TokenCodec.encode`.
// - The bodies of ListObjects and ListUsers pages (`objectPageJson`, `userPageJson`): byte for
//   byte `JSON.stringify` of `{"objects", "continuation_token"}` and `{"users", "continuation_token"}`.

import { Buffer } from 'node:buffer';
import { plain, putPlain } from './plain-json.js';
import type { ListingTokens } from './tokens.js';

/**
 * Lines rendered into a caller's buffer, a buffer at a time (StreamReply.lines). `render` writes
 * whole lines from `at` while `maxLineBytes` still fit and returns the new end: given that much
 * room it writes at least one line, so it returns `at` then only when the lines are done.
 */
export interface LineSource {
  readonly maxLineBytes: number;
  render(buf: Buffer, at: number): number;
}

const LINE_HEAD = Buffer.from('{"result":{"object":"', 'latin1');
const TOKEN_HEAD = Buffer.from('","continuation_token":"', 'latin1');
const LINE_END = Buffer.from('"}}\n', 'latin1');
const PLAIN_END = Buffer.from('}}\n', 'latin1');
const PLAIN_HEAD = Buffer.from('{"result":{"object":', 'latin1');
const PLAIN_TOKEN = Buffer.from(',"continuation_token":"', 'latin1');
/** LINE_HEAD's first 20 bytes as five little-endian 32-bit words (its 21st is a `"`), and LINE_END as one. */
const [HEAD0, HEAD1, HEAD2, HEAD3, HEAD4] = [0, 4, 8, 12, 16].map((k) => LINE_HEAD.readInt32LE(k)) as [
  number,
  number,
  number,
  number,
  number,
];
const LINE_END_WORD = LINE_END.readInt32LE(0);
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const B64 = Buffer.from('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_', 'latin1');

/** Copies `src` into `buf` at `at` (short constants: a loop beats a native call). */
function put(buf: Buffer, at: number, src: Buffer): number {
  for (let i = 0; i < src.length; i++) buf[at + i] = src[i] as number;
  return at + src.length;
}

/** Byte `k` of `lead ‖ src[from, …)`. */
function byteAt(lead: Buffer, src: Uint8Array, from: number, k: number): number {
  return k < lead.length ? (lead[k] as number) : (src[from + k - lead.length] as number);
}

/**
 * Writes the unpadded URL-safe base64 of `lead ‖ src[from, to)` at `at`; returns the end. `lead`
 * is 0–2 bytes (the token's fixed bytes that did not fill a base64 group).
 */
function base64(buf: Buffer, at: number, lead: Buffer, src: Uint8Array, from: number, to: number): number {
  const n = lead.length + (to - from);
  let k = 0;
  for (; k + 3 <= n; k += 3) {
    const v =
      (byteAt(lead, src, from, k) << 16) | (byteAt(lead, src, from, k + 1) << 8) | byteAt(lead, src, from, k + 2);
    buf[at] = B64[v >>> 18] as number;
    buf[at + 1] = B64[(v >>> 12) & 63] as number;
    buf[at + 2] = B64[(v >>> 6) & 63] as number;
    buf[at + 3] = B64[v & 63] as number;
    at += 4;
  }
  if (n - k === 1) {
    const v = byteAt(lead, src, from, k);
    buf[at] = B64[v >>> 2] as number;
    buf[at + 1] = B64[(v & 3) << 4] as number;
    at += 2;
  } else if (n - k === 2) {
    const v = (byteAt(lead, src, from, k) << 8) | byteAt(lead, src, from, k + 1);
    buf[at] = B64[v >>> 10] as number;
    buf[at + 1] = B64[(v >>> 4) & 63] as number;
    buf[at + 2] = B64[(v & 15) << 2] as number;
    at += 3;
  }
  return at;
}

/**
 * In a resumable stream, the lines carrying a continuation token: every TOKEN_EVERY-th line of the
 * page and its last line. A client that resumes from the last token it read is sent again the
 * lines it read after that token (at most TOKEN_EVERY - 1): the rule in docs/reference/http-api.md.
 */
export const TOKEN_EVERY = 1000;

/**
 * The NDJSON lines of StreamedListObjects for `objects` (see the head of this file). With
 * `paging` (a page of a complete listing), TOKEN_EVERY-th lines and the last one carry the token
 * resuming after their object; the one at `paging.last` (the listing's last object; -1 when the
 * page ends before the listing does) carries ''.
 */
export class ObjectLines implements LineSource {
  readonly maxLineBytes: number;
  #next = 0;
  /** `","continuation_token":"` and the tokens' head: one copy per token line. */
  readonly #tokenHead: Buffer | undefined;

  constructor(
    private readonly objects: readonly string[],
    private readonly paging?: { readonly tokens: ListingTokens; readonly last: number },
  ) {
    this.#tokenHead = paging ? Buffer.concat([TOKEN_HEAD, paging.tokens.head]) : undefined;
    let longest = 0;
    for (const o of objects) if (o.length > longest) longest = o.length;
    // JSON escapes a UTF-16 unit in at most 6 bytes; the id's UTF-8 (≤ 3 bytes a unit) in base64 is 4/3 as long.
    this.maxLineBytes = 64 + (paging ? paging.tokens.head.length + 4 + 4 * longest : 0) + 6 * longest;
  }

  render(buf: Buffer, at: number): number {
    const { objects, paging } = this;
    const room = buf.length - this.maxLineBytes;
    const lastLine = objects.length - 1;
    // The line's fixed bytes as little-endian 32-bit words: five stores for the head, one for its end.
    const words = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    let i = this.#next;
    for (; i < objects.length && at <= room; i++) {
      const object = objects[i] as string;
      const token = paging !== undefined && ((i + 1) % TOKEN_EVERY === 0 || i === lastLine);
      words.setInt32(at, HEAD0, true);
      words.setInt32(at + 4, HEAD1, true);
      words.setInt32(at + 8, HEAD2, true);
      words.setInt32(at + 12, HEAD3, true);
      words.setInt32(at + 16, HEAD4, true);
      buf[at + 20] = QUOTE;
      const start = at + LINE_HEAD.length;
      // The object copied as it is while it is `plain` (plain-json.ts: the same test, inline here:
      // a call to a copy-while-plain helper cost ≈ 40 more instructions per line, callgrind); the
      // first other character sends the line (written again from `at`) to the slow path.
      let p = start;
      let c = 0;
      for (; c < object.length; c++) {
        const u = object.charCodeAt(c);
        if (u < 0x20 || u > 0x7e || u === QUOTE || u === BACKSLASH) break;
        buf[p++] = u;
      }
      if (c < object.length) {
        at = this.#slow(buf, at, object, token, i === paging?.last);
        continue;
      }
      if (token && paging !== undefined && this.#tokenHead !== undefined) {
        if (i !== paging.last) {
          buf.set(this.#tokenHead, p);
          p = base64(buf, p + this.#tokenHead.length, paging.tokens.tail, buf, start, p);
        } else p = put(buf, p, TOKEN_HEAD);
      }
      words.setInt32(p, LINE_END_WORD, true);
      at = p + LINE_END.length;
    }
    this.#next = i;
    return at;
  }

  /** A line whose object JSON escapes or writes as multi-byte UTF-8. */
  #slow(buf: Buffer, at: number, object: string, token: boolean, last: boolean): number {
    at = put(buf, at, PLAIN_HEAD);
    at += buf.write(JSON.stringify(object), at, 'utf8');
    if (!token || this.paging === undefined) return put(buf, at, PLAIN_END);
    at = put(buf, at, PLAIN_TOKEN);
    if (!last) {
      const { tokens } = this.paging;
      const bytes = Buffer.from(object, 'utf8');
      at = base64(buf, put(buf, at, tokens.head), tokens.tail, bytes, 0, bytes.length);
    }
    return put(buf, at, LINE_END);
  }
}

const OBJECTS_HEAD = Buffer.from('{"objects":[', 'latin1');
const USERS_HEAD = Buffer.from('{"users":[', 'latin1');
const PAGE_TOKEN = Buffer.from('],"continuation_token":"', 'latin1');
const PAGE_END = Buffer.from('"}', 'latin1');
const USER_OBJECT = Buffer.from('{"object":{"type":"', 'latin1');
const USER_USERSET = Buffer.from('{"userset":{"type":"', 'latin1');
const USER_WILDCARD = Buffer.from('{"wildcard":{"type":"', 'latin1');
const USER_ID = Buffer.from('","id":"', 'latin1');
const USER_RELATION = Buffer.from('","relation":"', 'latin1');
const USER_END = Buffer.from('"}}', 'latin1');

/**
 * `JSON.stringify({objects, continuation_token: token})` as UTF-8 bytes, written straight into one
 * buffer (a ListObjects page of a complete listing); `undefined` when some object is not `plain`
 * (the caller stringifies then). The token is base64 (plain).
 */
export function objectPageJson(objects: readonly string[], token: string): Uint8Array | undefined {
  let size = OBJECTS_HEAD.length + PAGE_TOKEN.length + token.length + PAGE_END.length;
  for (const o of objects) size += o.length + 3;
  const buf = Buffer.allocUnsafe(size);
  let at = put(buf, 0, OBJECTS_HEAD);
  for (let i = 0; i < objects.length; i++) {
    const o = objects[i] as string;
    if (i > 0) buf[at++] = 0x2c;
    buf[at++] = 0x22;
    for (let c = 0; c < o.length; c++) {
      const u = o.charCodeAt(c);
      if (u < 0x20 || u > 0x7e || u === 0x22 || u === 0x5c) return undefined;
      buf[at++] = u;
    }
    buf[at++] = 0x22;
  }
  at = put(buf, at, PAGE_TOKEN);
  at = putPlain(buf, at, token);
  at = put(buf, at, PAGE_END);
  return buf.subarray(0, at);
}

/**
 * `JSON.stringify({users, continuation_token: token})` as UTF-8 bytes for a ListUsers page whose
 * users are given as `userKey` strings (`user:anne`, `user:*`, `team:x#member`), each rendered as
 * `userOfKey` builds it; `undefined` when some key is not `plain` (the caller stringifies then).
 */
export function userPageJson(keys: readonly string[], token: string): Uint8Array | undefined {
  let size = USERS_HEAD.length + PAGE_TOKEN.length + token.length + PAGE_END.length;
  for (const k of keys)
    size += k.length + USER_WILDCARD.length + USER_ID.length + USER_RELATION.length + USER_END.length + 1;
  const buf = Buffer.allocUnsafe(size);
  let at = put(buf, 0, USERS_HEAD);
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i] as string;
    if (!plain(k)) return undefined;
    if (i > 0) buf[at++] = 0x2c;
    const colon = k.indexOf(':');
    const hash = k.indexOf('#', colon + 1);
    if (hash !== -1) {
      at = put(buf, at, USER_USERSET);
      at = putRange(buf, at, k, 0, colon);
      at = put(buf, at, USER_ID);
      at = putRange(buf, at, k, colon + 1, hash);
      at = put(buf, at, USER_RELATION);
      at = putRange(buf, at, k, hash + 1, k.length);
    } else if (k.length === colon + 2 && k.charCodeAt(colon + 1) === 0x2a) {
      at = put(buf, at, USER_WILDCARD);
      at = putRange(buf, at, k, 0, colon);
    } else {
      at = put(buf, at, USER_OBJECT);
      at = putRange(buf, at, k, 0, colon);
      at = put(buf, at, USER_ID);
      at = putRange(buf, at, k, colon + 1, k.length);
    }
    at = put(buf, at, USER_END);
  }
  at = put(buf, at, PAGE_TOKEN);
  at = putPlain(buf, at, token);
  at = put(buf, at, PAGE_END);
  return buf.subarray(0, at);
}

/** Copies the characters `s[from, to)` of a `plain` string to `buf` at `at`; returns the end. */
function putRange(buf: Uint8Array, at: number, s: string, from: number, to: number): number {
  for (let c = from; c < to; c++) buf[at++] = s.charCodeAt(c);
  return at;
}
