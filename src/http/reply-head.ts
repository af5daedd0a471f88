// The reply headers every answer carries (docs/reference/decisions.md D11): latch's request ids, the store and model id lines,
// and the block a JSON reply's `Content-Type` value carries them in, kept as bytes so that a
// Check's reply builds no string for its headers.

import { randomUUID } from 'node:crypto';

// Request ids are UUID-shaped: a random per-process prefix, then in the last group a 6-hex-digit
// block number and a 6-digit decimal counter, 100000–999999 (decimal digits are hex digits).
// randomUUID() per request was ~5% of a Check's CPU profile. The counter is kept as two halves
// whose digits come from a table, so no number is turned into a string per request: V8 puts every
// number it converts into its number-string cache, an old-generation table, and the string a
// cache entry points to survives the next scavenge and is promoted. Converting the counter there
// promoted ~25 B per request (~50 KB per scavenge at 20k req/s), doubled the scavenge pause and
// brought a major GC every few seconds.
const ID_PREFIX = randomUUID().slice(0, 24);
const DIGITS3 = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
let idBlock = 0;
let idHigh = 100;
let idLow = -1;
let idHighPrefix = highPrefix();

/** Everything but the last three digits: made once per 1,000 ids. */
function highPrefix(): string {
  return ID_PREFIX + idBlock.toString(16).padStart(6, '0') + (DIGITS3[idHigh] as string);
}

/**
 * Holds one of latch's request ids as its first 33 characters (one string shared by 1,000 ids)
 * and its last three digits: the text is joined only when something asks for it.
 */
export interface RequestIdParts {
  idHigh: string;
  idLow: number;
}

/** Advances the counter; the new id is `idHighPrefix` + the three digits of `idLow`. */
function advance(): void {
  if (++idLow === 1000) {
    idLow = 0;
    if (++idHigh === 1000) {
      idHigh = 100;
      idBlock = (idBlock + 1) % 0x1000000;
    }
    idHighPrefix = highPrefix();
  }
}

/** The next request id as text (replies written outside an Exchange: CORS preflights). */
export function nextRequestId(): string {
  advance();
  return idHighPrefix + (DIGITS3[idLow] as string);
}

/** Gives `to` the next request id, in parts (nothing allocated). */
export function assignRequestId(to: RequestIdParts): void {
  advance();
  to.idHigh = idHighPrefix;
  to.idLow = idLow;
}

/** The text of a request id held in parts. */
export function requestIdText(id: RequestIdParts): string {
  return id.idHigh + (DIGITS3[id.idLow] as string);
}

/** True when `v` holds CR or LF (two builtin scans: cheaper than a regular expression per reply). */
function hasCrLf(v: string): boolean {
  return v.includes('\r') || v.includes('\n');
}

// The `Openfga-Store-Id` / `Openfga-Authorization-Model-Id` header lines of the last reply: traffic
// comes in runs on one store and model, so most replies reuse the string instead of building it.
let linesStore: string | undefined;
let linesModel: string | undefined;
let linesCached = '';

/** The store and model header lines (each only when present and free of CR/LF), each after a CRLF. */
export function idLines(storeId: string | undefined, modelId: string | undefined): string {
  if (storeId === linesStore && modelId === linesModel) return linesCached;
  let lines = '';
  if (storeId && !hasCrLf(storeId)) lines += `\r\nOpenfga-Store-Id: ${storeId}`;
  if (modelId && !hasCrLf(modelId)) lines += `\r\nOpenfga-Authorization-Model-Id: ${modelId}`;
  linesStore = storeId;
  linesModel = modelId;
  linesCached = lines;
  return lines;
}

const DURATION = '\r\nfga-query-duration-ms: ';
/** Durations up to this many digits (ms) go in the block; longer ones take the string path. */
const MAX_DURATION_DIGITS = 6;
const BLOCK_BYTES = 1024;
const ZERO = 48;
/** The three digits of 0–999 as ASCII bytes, three per number: an id's last digits are copied from here. */
const LOW_DIGITS = Buffer.from(DIGITS3.join(''), 'latin1');

/**
 * The value of a JSON reply's `Content-Type` header with the D11 headers after it, as bytes:
 *
 *     application/json\r\nX-Request-Id: <id>\r\nOpenfga-Store-Id: <store>
 *     \r\nOpenfga-Authorization-Model-Id: <model>\r\nfga-query-duration-ms: <ms>
 *
 * Built as a string it was a chain of joins that uWS flattened, measured and copied again as
 * UTF-8 (≈ 1,500 instructions per Check under callgrind). Here the text up to the last digits of
 * the id is written once per (id block, store, model), and each reply writes the id's last three
 * digits and the duration in place. uWS copies a header value before `writeHeader` returns, so one
 * block serves every reply; the views of it, one per duration length, are made once per head.
 */
class JsonHead {
  readonly #bytes = new Uint8Array(BLOCK_BYTES);
  readonly #encoder = new TextEncoder();
  /** `#views[n]`: the block up to a duration of `n` digits (made on first use). */
  #views: (Uint8Array | undefined)[] = [];
  #high: string | undefined;
  #store: string | undefined;
  #model: string | undefined;
  /** Where the id's last three digits and the duration's digits go; -1 when the head did not fit. */
  #lowAt = -1;
  #durationAt = -1;

  /** The block for one reply, or undefined when it does not fit (then the caller builds the text). */
  block(
    id: RequestIdParts,
    storeId: string | undefined,
    modelId: string | undefined,
    ms: number,
  ): Uint8Array | undefined {
    if (id.idHigh !== this.#high || storeId !== this.#store || modelId !== this.#model)
      this.#rebuild(id.idHigh, storeId, modelId);
    const at = this.#durationAt;
    if (at < 0 || !(ms >= 0 && ms < 10 ** MAX_DURATION_DIGITS)) return undefined;
    const b = this.#bytes;
    const d = 3 * id.idLow;
    const l = this.#lowAt;
    b[l] = LOW_DIGITS[d] as number;
    b[l + 1] = LOW_DIGITS[d + 1] as number;
    b[l + 2] = LOW_DIGITS[d + 2] as number;
    let n = 1;
    if (ms < 10) b[at] = ZERO + ms;
    else {
      for (let v = ms; v >= 10; v = Math.floor(v / 10)) n++;
      for (let i = at + n - 1, v = ms; i >= at; i--, v = Math.floor(v / 10)) b[i] = ZERO + (v % 10);
    }
    return (this.#views[n] ??= b.subarray(0, at + n));
  }

  #rebuild(high: string, storeId: string | undefined, modelId: string | undefined): void {
    this.#high = high;
    this.#store = storeId;
    this.#model = modelId;
    this.#views = [];
    const idHead = `application/json\r\nX-Request-Id: ${high}`;
    const rest = `${idLines(storeId, modelId)}${DURATION}`;
    // Ids, the header words and a resolved model id are ASCII; a store id may not be, so the
    // bytes are UTF-8 as uWS would write the string. Anything too long for the block: the string path.
    const first = this.#encoder.encodeInto(idHead, this.#bytes);
    const tail = this.#bytes.subarray(first.written + 3);
    const second = this.#encoder.encodeInto(rest, tail);
    const fits =
      first.read === idHead.length &&
      second.read === rest.length &&
      first.written + 3 + second.written + MAX_DURATION_DIGITS <= BLOCK_BYTES;
    this.#lowAt = fits ? first.written : -1;
    this.#durationAt = fits ? first.written + 3 + second.written : -1;
  }
}

const jsonHead = new JsonHead();

/**
 * The `Content-Type` value of a JSON reply that carries a latch request id `id` and no
 * Latch-Revision, with the D11 lines after it (see JsonHead); undefined → build it as text.
 */
export function jsonHeadBlock(
  id: RequestIdParts,
  storeId: string | undefined,
  modelId: string | undefined,
  ms: number,
): Uint8Array | undefined {
  return jsonHead.block(id, storeId, modelId, ms);
}
