// The reader of a StreamedListObjects body (docs/reference/http-api.md §4.18), faster than a
// JSON.parse per line and exactly as strict. A line that is exactly `{"result":{"object":"` + s +
// `"}}` (or with `,"continuation_token":"` + t before the `}}`), s and t without `"`, `\` or a
// control character, is read with a scan and slices (JSON.parse would give the same strings);
// every other line is parsed by JSON.parse and its shape checked: a result line with other spacing
// or escapes gives the same object, an `{"error": …}` line is its ApiError, and anything else is
// ApiError `invalid_response`. Imports nothing but the JSON client (Node and the browser).

import { ApiError, FallbackCode, lineError, parseLine } from './json.js';
import { isRecord, plainEnd } from './listings.js';

const LINE_HEAD = '{"result":{"object":"';
const TOKEN = '","continuation_token":"';
const LINE_END = '"}}';
/**
 * The longest line kept while waiting for its end, in UTF-16 units: a result line is at most a few
 * KB (an object of ≤ 256 characters, escaped, and a token of ≤ 5,120 bytes); a longer partial line
 * is not a listing, and holding it would let a body without newlines grow the reader unbounded.
 */
export const MAX_LINE = 1 << 20;

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
  readonly #decoder = new TextDecoder();
  #rest = '';

  /** `status`: the answer's HTTP status, carried by the errors. */
  constructor(private readonly status = 200) {}

  /** Appends the objects of the complete lines of `rest ‖ bytes` to `objects`; keeps the partial last line. */
  read(bytes: Uint8Array, objects: string[]): void {
    const text = this.#rest + this.#decoder.decode(bytes, { stream: true });
    const end = text.lastIndexOf('\n');
    this.#rest = text.slice(end + 1);
    if (this.#rest.length > MAX_LINE)
      throw this.#invalid(`a line longer than ${MAX_LINE} characters: ${this.#rest.slice(0, 200)}`);
    for (let from = 0; from <= end;) {
      const nl = text.indexOf('\n', from);
      if (!this.#fast(text, from, nl, objects)) this.#slow(text.slice(from, nl), objects);
      from = nl + 1;
    }
  }

  /** The body ended: its last line need not end with a newline. */
  end(objects: string[]): void {
    const last = this.#rest + this.#decoder.decode();
    this.#rest = '';
    if (last !== '') this.#slow(last, objects);
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
