// The reader of a StreamedListObjects body (docs/reference/http-api.md §4.18), faster than a
// JSON.parse per line and exactly as strict. A line that is exactly `{"result":{"object":"` + s +
// `"}}` (or with `,"continuation_token":"` + t before the `}}`), s and t without `"`, `\` or a
// control character, is read with a scan and slices (JSON.parse would give the same strings);
// every other line is parsed by JSON.parse and its shape checked: a result line with other spacing
// or escapes gives the same object, an `{"error": …}` line is its ApiError, and anything else is
// ApiError `invalid_response`. Imports nothing but the JSON client (Node and the browser).
//
// The received bytes are scanned as bytes: a run of such lines whose s and t are ASCII is decoded
// to text once (ASCII: a byte is a character, so the bytes' offsets are the text's) and its
// objects are slices of that text; from the first other line to the chunk's last newline the
// chunk is decoded as UTF-8 and read line by line as text. A line split across chunks is kept as
// bytes until its newline arrives, then read as text.

import { ApiError, FallbackCode, lineError, parseLine } from './json.js';
import { isRecord, plainEnd } from './listings.js';

const LINE_HEAD = '{"result":{"object":"';
const TOKEN = '","continuation_token":"';
const LINE_END = '"}}';
const bytesOf = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const HEAD_BYTES = bytesOf(LINE_HEAD);
const TOKEN_BYTES = bytesOf(TOKEN);
const HEAD_LEN = HEAD_BYTES.length;
const headWords = new DataView(HEAD_BYTES.buffer);
/** LINE_HEAD's first 20 bytes as five little-endian 32-bit words (its 21st is a `"`). */
const [HEAD0, HEAD1, HEAD2, HEAD3, HEAD4] = [0, 4, 8, 12, 16].map((k) => headWords.getInt32(k, true)) as [
  number,
  number,
  number,
  number,
  number,
];
const TOKEN_LEN = TOKEN_BYTES.length;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CLOSE = 0x7d;
const COMMA = 0x2c;
const NEWLINE = 0x0a;
/** UTF-8's byte order mark: TextDecoder drops it at the start of a body, and only there. */
const BOM = [0xef, 0xbb, 0xbf] as const;
/**
 * The longest line kept while waiting for its end, in bytes: a result line is at most a few KB
 * (an object of ≤ 256 characters, escaped, and a token of ≤ 5,120 bytes); a longer partial line is
 * not a listing, and holding it would let a body without newlines grow the reader unbounded.
 */
export const MAX_LINE = 1 << 20;
const EMPTY = new Uint8Array(0);

/**
 * The end of the plain ASCII JSON string whose bytes start at `from` in `b[0, n)` (its closing
 * quote's index): bytes 0x20–0x7f without `"` and `\`, which JSON.parse reads as the characters
 * of the same codes. -1 at any other byte (the line is read as text then); `n` when the bytes end first.
 */
function asciiEnd(b: Uint8Array, from: number, n: number): number {
  for (let i = from; i < n; i++) {
    const c = b[i] as number;
    if (c === QUOTE) return i;
    if (c < 0x20 || c === BACKSLASH || c > 0x7f) return -1;
  }
  return n;
}

/**
 * Reads one StreamedListObjects body, a received chunk at a time:
 *
 *   const reader = new ObjectStreamReader();
 *   for await (const chunk of response.body) reader.read(chunk, objects);
 *   reader.end(objects);   // the last line, which need not end with a newline
 *
 * `token` is the last continuation token a line carried (a paged stream, §4.18: resume from it;
 * '' after the listing's last object), undefined while none has. The lines before an error or a
 * malformed line are read (each a confirmed result); that line throws and the reader is done.
 */
export class ObjectStreamReader {
  token: string | undefined;
  /** UTF-8 of whole lines (so never a split character), the byte order mark kept as a character. */
  readonly #decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  /** The bytes of the partial line after the last newline (and of a body's start that may be a BOM). */
  #carry: Uint8Array = EMPTY;
  #carried = 0;
  /** Whether the body's first bytes (a byte order mark or not) were seen. */
  #started = false;
  /** Per fast line of the chunk being read: its object's start and end byte offsets. */
  #bounds = new Int32Array(2048);

  /** `status`: the answer's HTTP status, carried by the errors. */
  constructor(private readonly status = 200) {}

  /** Appends the objects of the complete lines of `carried ‖ bytes` to `objects`; keeps the partial last line. */
  read(bytes: Uint8Array, objects: string[]): void {
    let from = 0;
    if (!this.#started || this.#carried > 0) {
      const nl = bytes.indexOf(NEWLINE);
      if (!this.#started) {
        // Held until 3 bytes (or a newline) show whether the body starts with a byte order mark.
        if (nl === -1 && this.#carried + bytes.length < BOM.length) return this.#keep(bytes, 0);
        this.#started = true;
        from = this.#skipBom(bytes);
        if (from > 0 && nl === -1) return this.#keep(bytes, from);
      }
      if (this.#carried > 0) {
        if (nl === -1) return this.#keep(bytes, from);
        this.#keep(bytes.subarray(from, nl), 0);
        const line = this.#carry.subarray(0, this.#carried);
        this.#carried = 0;
        this.#textLines(this.#decoder.decode(line) + '\n', objects);
        from = nl + 1;
      }
    }
    const at = this.#fastRun(bytes, from, objects);
    const last = at === bytes.length ? at - 1 : bytes.lastIndexOf(NEWLINE);
    if (last >= at) this.#textLines(this.#decoder.decode(bytes.subarray(at, last + 1)), objects);
    if (last + 1 < bytes.length) this.#keep(bytes, Math.max(at, last + 1));
  }

  /** The body ended: its last line need not end with a newline. */
  end(objects: string[]): void {
    const rest = this.#decoder.decode(this.#carry.subarray(0, this.#carried));
    this.#carried = 0;
    this.#started = true;
    // A body of fewer than 3 bytes may still begin with a BOM's first bytes: those are U+FFFD.
    if (rest !== '') this.#slow(rest, objects);
  }

  /** The index after a BOM that `carried ‖ bytes` starts with (the bytes' part of it), else 0. */
  #skipBom(bytes: Uint8Array): number {
    const c = this.#carried;
    for (let k = 0; k < BOM.length; k++) {
      const b = k < c ? this.#carry[k] : bytes[k - c];
      if (b !== BOM[k]) return 0;
    }
    this.#carried = 0;
    return BOM.length - c;
  }

  /** Appends `bytes[from, …)` to the carried partial line; refuses a partial line past MAX_LINE. */
  #keep(bytes: Uint8Array, from: number): void {
    const n = this.#carried + bytes.length - from;
    if (n > MAX_LINE) {
      const head = this.#decoder.decode(this.#carry.subarray(0, Math.min(this.#carried, 200)));
      throw this.#invalid(`a line longer than ${MAX_LINE} bytes: ${head}`);
    }
    if (n > this.#carry.length) {
      const grown = new Uint8Array(Math.max(n, 2 * this.#carry.length, 256));
      grown.set(this.#carry.subarray(0, this.#carried));
      this.#carry = grown;
    }
    this.#carry.set(bytes.subarray(from), this.#carried);
    this.#carried = n;
  }

  /**
   * Reads the lines from `from` while each is a result line as latch writes it with ASCII object
   * and token: their objects are slices of one decoded text. Returns where that run stopped: at
   * another line, at a line the bytes cut, or at the end.
   */
  #fastRun(b: Uint8Array, from: number, objects: string[]): number {
    const n = b.length;
    // The head compared as five little-endian 32-bit words and its last byte.
    const words = new DataView(b.buffer, b.byteOffset, b.byteLength);
    let bounds = this.#bounds;
    let count = 0;
    let tokenStart = -1;
    let tokenEnd = -1;
    let at = from;
    while (at < n) {
      if (at + HEAD_LEN + 4 > n) break;
      if (
        words.getInt32(at, true) !== HEAD0 ||
        words.getInt32(at + 4, true) !== HEAD1 ||
        words.getInt32(at + 8, true) !== HEAD2 ||
        words.getInt32(at + 12, true) !== HEAD3 ||
        words.getInt32(at + 16, true) !== HEAD4 ||
        b[at + 20] !== QUOTE
      )
        break;
      const start = at + HEAD_LEN;
      const end = asciiEnd(b, start, n);
      if (end < 0 || end + 3 >= n) break;
      let next: number;
      if (b[end + 1] === CLOSE) {
        if (b[end + 2] !== CLOSE || b[end + 3] !== NEWLINE) break;
        next = end + 4;
      } else {
        if (b[end + 1] !== COMMA || end + TOKEN_LEN > n) break;
        let k = 2;
        while (k < TOKEN_LEN && b[end + k] === TOKEN_BYTES[k]) k++;
        if (k < TOKEN_LEN) break;
        const t = end + TOKEN_LEN;
        const tEnd = asciiEnd(b, t, n);
        if (tEnd < 0 || tEnd + 3 >= n || b[tEnd + 1] !== CLOSE || b[tEnd + 2] !== CLOSE || b[tEnd + 3] !== NEWLINE)
          break;
        tokenStart = t;
        tokenEnd = tEnd;
        next = tEnd + 4;
      }
      if (2 * count + 2 > bounds.length) {
        const grown = new Int32Array(2 * bounds.length);
        grown.set(bounds);
        this.#bounds = bounds = grown;
      }
      bounds[2 * count] = start;
      bounds[2 * count + 1] = end;
      count++;
      at = next;
    }
    if (count === 0) return from;
    // ASCII throughout: the text's character offsets are the bytes' offsets less `from`.
    const text = this.#decoder.decode(b.subarray(from, at));
    for (let i = 0; i < count; i++)
      objects.push(text.slice((bounds[2 * i] as number) - from, (bounds[2 * i + 1] as number) - from));
    if (tokenStart !== -1) this.token = text.slice(tokenStart - from, tokenEnd - from);
    return at;
  }

  /** Reads each line of `text` (whole lines, each ending with a newline). */
  #textLines(text: string, objects: string[]): void {
    for (let from = 0; from < text.length;) {
      const nl = text.indexOf('\n', from);
      if (!this.#fast(text, from, nl, objects)) this.#slow(text.slice(from, nl), objects);
      from = nl + 1;
    }
  }

  /** Reads the line text[from, nl) if it is a result line as latch writes it; false otherwise. */
  #fast(text: string, from: number, nl: number, objects: string[]): boolean {
    if (!text.startsWith(LINE_HEAD, from)) return false;
    const start = from + LINE_HEAD.length;
    const end = plainEnd(text, start);
    if (end === -1) return false;
    if (end + LINE_END.length === nl && text.startsWith(LINE_END, end)) {
      objects.push(text.slice(start, end));
      return true;
    }
    if (!text.startsWith(TOKEN, end)) return false;
    const t = end + TOKEN.length;
    const tokenEnd = plainEnd(text, t);
    if (tokenEnd === -1 || tokenEnd + LINE_END.length !== nl || !text.startsWith(LINE_END, tokenEnd)) return false;
    objects.push(text.slice(start, end));
    this.token = text.slice(t, tokenEnd);
    return true;
  }

  /** Any other line: blank (skipped), a result line, an error line (thrown), or malformed (thrown). */
  #slow(line: string, objects: string[]): void {
    if (line.trim() === '') return;
    const o = parseLine(this.status, line);
    const keys = Object.keys(o);
    if (keys.length === 1 && keys[0] === 'error') throw lineError(this.status, o);
    const r = keys.length === 1 && isRecord(o.result) ? o.result : undefined;
    const token = r?.continuation_token;
    if (
      r === undefined ||
      typeof r.object !== 'string' ||
      (token !== undefined && typeof token !== 'string') ||
      Object.keys(r).some((k) => k !== 'object' && k !== 'continuation_token')
    )
      throw this.#invalid(`not a result line: ${line.slice(0, 200)}`);
    objects.push(r.object);
    if (token !== undefined) this.token = token;
  }

  #invalid(what: string): ApiError {
    return new ApiError(this.status, FallbackCode.invalidResponse, what);
  }
}
