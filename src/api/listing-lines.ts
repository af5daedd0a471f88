// The NDJSON lines of a resumable StreamedListObjects, rendered as UTF-8 straight into the
// transport's buffer: `{"result":{"object":"doc:1","continuation_token":"…"}}\n` per object of
// the page, the token resuming right after its object, '' on the listing's last object. The bytes
// are exactly those of `JSON.stringify` of each line and of `TokenCodec.encode` for each token;
// nothing is allocated per line (no string, no object): an object id that JSON writes as it is
// (printable ASCII without `"` and `\`) is copied byte by byte, and the token is the listing's
// fixed base64 head plus the base64 of the id's own bytes, read back from the line just written.
// Any other id takes a slow path through `JSON.stringify` and `Buffer.from`.

import { Buffer } from 'node:buffer';
import type { ListingTokens } from './tokens.js';

/**
 * Lines rendered into a caller's buffer, a buffer at a time (StreamReply.lines). `render` writes
 * whole lines from `at` and returns the new end; it returns `at` only when the lines are done.
 * A buffer of `maxLineBytes` or more always takes at least one line.
 */
export interface LineSource {
  readonly maxLineBytes: number;
  render(buf: Buffer, at: number): number;
}

const LINE_HEAD = Buffer.from('{"result":{"object":"', 'latin1');
const TOKEN_HEAD = Buffer.from('","continuation_token":"', 'latin1');
const LINE_END = Buffer.from('"}}\n', 'latin1');
const PLAIN_HEAD = Buffer.from('{"result":{"object":', 'latin1');
const PLAIN_TOKEN = Buffer.from(',"continuation_token":"', 'latin1');
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
 * The lines of one page of a complete listing of objects: `objects`, each with the token that
 * resumes after it (`tokens`), except the one at `last` (the listing's last object; -1 when the
 * page ends before the listing does), which carries ''.
 */
export class ObjectPageLines implements LineSource {
  readonly maxLineBytes: number;
  #next = 0;
  /** `","continuation_token":"` and the tokens' head: one copy per line. */
  readonly #tokenHead: Buffer;

  constructor(
    private readonly objects: readonly string[],
    private readonly tokens: ListingTokens,
    private readonly last: number,
  ) {
    this.#tokenHead = Buffer.concat([TOKEN_HEAD, tokens.head]);
    let longest = 0;
    for (const o of objects) if (o.length > longest) longest = o.length;
    // JSON escapes a UTF-16 unit in at most 6 bytes; the id's UTF-8 (≤ 3 bytes a unit) in base64 is 4/3 as long.
    this.maxLineBytes = 64 + tokens.head.length + 4 + 6 * longest + 4 * longest;
  }

  render(buf: Buffer, at: number): number {
    const { objects, tokens, last } = this;
    const room = buf.length - this.maxLineBytes;
    let i = this.#next;
    for (; i < objects.length && at <= room; i++) {
      const object = objects[i] as string;
      const start = at + LINE_HEAD.length;
      let p = start;
      for (let c = 0; c < object.length; c++) {
        const u = object.charCodeAt(c);
        if (u < 0x20 || u > 0x7e || u === 0x22 || u === 0x5c) {
          p = -1;
          break;
        }
        buf[p++] = u;
      }
      if (p === -1) {
        at = this.#slow(buf, at, object, i === last);
        continue;
      }
      put(buf, at, LINE_HEAD);
      if (i !== last) {
        buf.set(this.#tokenHead, p);
        p = base64(buf, p + this.#tokenHead.length, tokens.tail, buf, start, start + object.length);
      } else p = put(buf, p, TOKEN_HEAD);
      at = put(buf, p, LINE_END);
    }
    this.#next = i;
    return at;
  }

  /** A line whose object JSON escapes or writes as multi-byte UTF-8. */
  #slow(buf: Buffer, at: number, object: string, last: boolean): number {
    at = put(buf, at, PLAIN_HEAD);
    at += buf.write(JSON.stringify(object), at, 'utf8');
    at = put(buf, at, PLAIN_TOKEN);
    if (!last) {
      const bytes = Buffer.from(object, 'utf8');
      at = base64(buf, put(buf, at, this.tokens.head), this.tokens.tail, bytes, 0, bytes.length);
    }
    return put(buf, at, LINE_END);
  }
}
