// Request bodies on uWS: collected up to a size limit (never buffered past it, docs/reference/decisions.md D9; the rest is
// read and dropped, within a bound, before the answer), decoded as JSON (strict UTF-8) or msgpack,
// `{}` for an empty body.

import { AppError } from '../errors.js';
import { decodeMsgpack } from '../domain/msgpack.js';
import type { HttpResponse } from './uws.js';

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

export function tooLarge(limit: number): AppError {
  return new AppError('validation_error', `request body exceeds the limit of ${limit} bytes`);
}

/**
 * What is read, and thrown away, of a body past the limit before the 400 goes out and the
 * connection closes. uWS.js gives no handle on a response once it has ended, so a connection
 * cannot be closed after an early answer; answering and closing at once instead makes fetch() and
 * undici clients, still sending, fail with EPIPE rather than read the 400. So the rest is read and
 * dropped (never buffered) until the body ends, these many bytes more, or this long, whichever
 * comes first: then the answer, then the close.
 */
export interface DiscardBound {
  readonly bytes: number;
  readonly ms: number;
}

export const DEFAULT_DISCARD: DiscardBound = { bytes: 64 * 1024 * 1024, ms: 10_000 };

/**
 * Calls `onBody` once with the whole body, or with `undefined` when the body (announced or
 * received) exceeds `limit`: then only after the rest has been discarded, within `discard` (one
 * callback for both: it is allocated per request). The bytes may be uWS's own memory: they are
 * valid only until `onBody` returns, so it must decode them synchronously.
 */
export function readBody(
  res: HttpResponse,
  announced: number,
  limit: number,
  discard: DiscardBound,
  onBody: (bytes: ArrayBuffer | Uint8Array | undefined) => void,
): void {
  let parts: Buffer[] | undefined;
  let size = 0;
  // Only a body over the limit allocates the discarding state and its callback.
  let over: Discarding | undefined = announced > limit ? new Discarding(discard, () => onBody(undefined)) : undefined;
  res.onData((chunk, isLast) => {
    if (over) return over.chunk(chunk.byteLength, isLast);
    size += chunk.byteLength;
    if (size > limit) {
      parts = undefined;
      over = new Discarding(discard, () => onBody(undefined));
      return over.chunk(0, isLast);
    }
    // The common case, one chunk: decoded in place, before uWS reuses the memory.
    if (isLast && parts === undefined) return onBody(chunk);
    (parts ??= []).push(Buffer.from(new Uint8Array(chunk)));
    if (isLast) onBody(Buffer.concat(parts, size));
  });
}

/**
 * The body of a request refused before it was read (authentication, D1): dropped as it comes,
 * never buffered nor decoded, within `discard`; `onEnd(complete)` once, complete when the whole
 * body was read (the connection can then be kept).
 */
export function dropBody(res: HttpResponse, discard: DiscardBound, onEnd: (complete: boolean) => void): void {
  const d = new Discarding(discard, onEnd);
  res.onData((chunk, isLast) => d.chunk(chunk.byteLength, isLast));
}

/** The rest of a body past the limit: counted and dropped until its end or the bound, then `onEnd` once. */
class Discarding {
  #dropped = 0;
  #done = false;
  readonly #timer: NodeJS.Timeout;

  constructor(
    readonly bound: DiscardBound,
    readonly onEnd: (complete: boolean) => void,
  ) {
    this.#timer = setTimeout(() => this.#end(), bound.ms);
    this.#timer.unref();
  }

  chunk(bytes: number, isLast: boolean): void {
    this.#dropped += bytes;
    if (isLast || this.#dropped > this.bound.bytes) this.#end(isLast);
  }

  #end(complete = false): void {
    if (this.#done) return;
    this.#done = true;
    clearTimeout(this.#timer);
    this.onEnd(complete);
  }
}

/**
 * Strict UTF-8 (invalid sequences throw instead of becoming U+FFFD) that keeps a leading BOM, so
 * that JSON.parse refuses it as it would from the raw bytes. One pass over the bytes, straight
 * from uWS's ArrayBuffer: ≈ 0.12 µs for a Check body against ≈ 0.37 µs for a Buffer view,
 * `isUtf8` and `toString`.
 */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** How a body is encoded: JSON, msgpack, or (endpoints that take it) NDJSON, one value per line. */
export type BodyFormat = 'json' | 'msgpack' | 'ndjson';

/** A line of ASCII white space only: no value (`latch tuple import` counts lines by the same rule). */
const BLANK = /^[\t\n\v\f\r ]*$/;

/** True when bytes [from, to) hold only ASCII white space (a blank line, skipped). */
function blankLine(b: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = b[i] as number;
    if (c !== 0x20 && (c < 0x09 || c > 0x0d)) return false;
  }
  return true;
}

/**
 * An NDJSON body as the array of its lines' values (blank lines skipped). The body is copied once
 * between `[` and `]`, the newline that ends each line but the last turned into `,` (the last
 * one's stays, white space before the `]`), decoded and parsed once: nothing allocated per line.
 * A body with a blank line is joined line by line instead, without them (`decodeJoined`): kept,
 * its bytes could fall inside a string a line leaves open. Only when the parse fails are the lines
 * parsed one by one, to name the first bad one (validation_error, its 0-based position among the
 * values in `tuple_index`).
 */
function decodeNdjson(body: ArrayBuffer | Uint8Array): unknown[] {
  const bytes = body instanceof Uint8Array ? body : new Uint8Array(body);
  const joined = new Uint8Array(bytes.length + 2);
  joined[0] = 0x5b; // [
  joined.set(bytes, 1);
  let lines = 0;
  /** The index in `joined` of the newline after the last value's line, -1 before the first. */
  let after = -1;
  for (let from = 0; from < bytes.length;) {
    let nl = bytes.indexOf(0x0a, from);
    if (nl === -1) nl = bytes.length;
    if (blankLine(bytes, from, nl)) return decodeJoined(bytes);
    if (lines++ > 0) joined[after] = 0x2c; // ,
    after = nl + 1;
    from = nl + 1;
  }
  joined[bytes.length + 1] = 0x5d; // ]
  return parseNdjson(bytes, joined, lines);
}

/** `decodeNdjson` for a body with a blank line: its other lines joined by `,`. */
function decodeJoined(bytes: Uint8Array): unknown[] {
  const joined = new Uint8Array(bytes.length + 2);
  let o = 0;
  let lines = 0;
  joined[o++] = 0x5b; // [
  for (let from = 0; from < bytes.length;) {
    let nl = bytes.indexOf(0x0a, from);
    if (nl === -1) nl = bytes.length;
    if (!blankLine(bytes, from, nl)) {
      if (lines++ > 0) joined[o++] = 0x2c; // ,
      joined.set(bytes.subarray(from, nl), o);
      o += nl - from;
    }
    from = nl + 1;
  }
  joined[o++] = 0x5d; // ]
  return parseNdjson(bytes, joined.subarray(0, o), lines);
}

/** The values of `joined` (the body's `lines` values as one JSON array), or the body's first bad line's error. */
function parseNdjson(bytes: Uint8Array, joined: Uint8Array, lines: number): unknown[] {
  let text: string;
  try {
    text = utf8.decode(joined);
  } catch {
    throw new AppError('validation_error', 'request body is not valid UTF-8');
  }
  let values: unknown[];
  try {
    values = JSON.parse(text) as unknown[];
  } catch {
    // The lines again, as text, to name the first one that is not JSON.
    const values = utf8
      .decode(bytes)
      .split('\n')
      .filter((l) => !BLANK.test(l));
    values.forEach((line, i) => {
      try {
        JSON.parse(line);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        throw new AppError('validation_error', `line ${i + 1} of the NDJSON body is not JSON: ${message}`, {
          fields: { tuple_index: i },
        });
      }
    });
    // Every line parses alone but not joined: a line holds more than one value.
    throw new AppError('validation_error', 'malformed NDJSON: one JSON value per line');
  }
  // Joined, a line `{…},{…}` parses as two values: the count tells.
  if (values.length !== lines) throw new AppError('validation_error', 'malformed NDJSON: one JSON value per line');
  return values;
}

/** The request body as an untyped value; throws validation_error on malformed input. */
export function decodeBody(bytes: ArrayBuffer | Uint8Array, msgpack: boolean | BodyFormat): unknown {
  if (msgpack === 'ndjson') return decodeNdjson(bytes);
  if (bytes.byteLength === 0) return {};
  if (msgpack === true || msgpack === 'msgpack') {
    try {
      return decodeMsgpack(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes));
    } catch (err) {
      throw new AppError('validation_error', `malformed msgpack: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new AppError('validation_error', 'request body is not valid UTF-8');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new AppError('validation_error', /end of JSON input|Unterminated/.test(message) ? 'malformed JSON' : message);
  }
}
