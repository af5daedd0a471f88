// The reader of a StreamedListObjects body (docs/reference/http-api.md §4.18), faster than a
// JSON.parse per line and exactly as strict. A line that is exactly `{"result":{"object":"` + s +
// `"}}` (or with `,"continuation_token":"` + t before the `}}`), s and t without `"`, `\` or a
// control character, is read with a scan and slices (JSON.parse would give the same strings);
// every other line is parsed by JSON.parse and its shape checked: a result line with other spacing
// or escapes gives the same object, an `{"error": …}` line is its ApiError, and anything else is
// ApiError `invalid_response`. Imports nothing but the JSON client (Node and the browser).

import { ApiError, FallbackCode, lineError, type StreamLine } from './json.js';
import { plainEnd } from './listings.js';

const LINE_HEAD = '{"result":{"object":"';
const TOKEN = '","continuation_token":"';
const LINE_END = '"}}';

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
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw this.#invalid(line);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw this.#invalid(line);
    const keys = Object.keys(parsed);
    if (keys.length !== 1) throw this.#invalid(line);
    if (keys[0] === 'error') throw lineError(this.status, parsed as StreamLine);
    const result = (parsed as { result?: unknown }).result;
    if (keys[0] !== 'result' || typeof result !== 'object' || result === null || Array.isArray(result))
      throw this.#invalid(line);
    const r = result as { object?: unknown; continuation_token?: unknown };
    for (const k of Object.keys(r)) if (k !== 'object' && k !== 'continuation_token') throw this.#invalid(line);
    if (typeof r.object !== 'string') throw this.#invalid(line);
    const token = r.continuation_token;
    if (token !== undefined && typeof token !== 'string') throw this.#invalid(line);
    objects.push(r.object);
    if (token !== undefined) this.token = token;
  }

  #invalid(line: string): ApiError {
    return new ApiError(this.status, FallbackCode.invalidResponse, `not a result line: ${line.slice(0, 200)}`);
  }
}
