// Field-level validation primitives shared by every endpoint parser: the proto patterns and
// bounds of docs/reference/http-api.md §1.5, the `invalid <Message>.<Field>: <reason>` messages and the code
// derivation of §6.4. Parsers walk fields in proto order and throw on the first violation.

import { AppError, type ErrorCode } from '../errors.js';
import { MAX_VALUE_DEPTH, deeperThan } from '../domain/depth.js';
import type { Consistency, JsonObject } from '../domain/types.js';

/** A proto string pattern: the JS regex that enforces it and the text quoted in messages. */
interface Pattern {
  readonly re: RegExp;
  /** As OpenFGA's validators print it: backslashes doubled (docs/reference/http-api.md §6.4 quirk). */
  readonly text: string;
  /**
   * Exactly `re.test` (test/http/patterns.test.ts compares them on generated strings). The hot
   * patterns (every Check validates a store id and three keys) have a scanner: on this project's
   * 2-core VM a `u`-flag regex test of a short key took 70–80 ns and the scan 45–50 ns.
   */
  readonly test: (value: string) => boolean;
}

// Go RE2's `\s` is ASCII whitespace only ([\t\n\f\r ]); JS `\s` also matches Unicode spaces,
// so the regexes spell the class out. `u` makes `{m,n}` count code points as RE2 does.
const WS = '\\t\\n\\f\\r ';
/** The characters WS stands for, for the scanners. */
const WS_CHARS = '\t\n\f\r ';

function pattern(js: string, text: string): Pattern {
  const re = new RegExp(js, 'u');
  return { re, text, test: (value) => re.test(value) };
}

/**
 * `^[^<excluded>\s]{min,max}$` (RE2 `\s`, the `u` flag): between `min` and `max` code points (a
 * surrogate pair is one, a lone surrogate is one), none of them `excluded` or ASCII whitespace.
 * `excluded` holds ASCII characters that need no escaping inside a regex class.
 */
function excluding(excluded: string, min: number, max: number): Pattern {
  const re = new RegExp(`^[^${excluded}${WS}]{${min},${max}}$`, 'u');
  const text = `^[^${excluded}\\\\s]{${min},${max}}$`;
  const banned = new Uint8Array(128);
  for (const ch of excluded + WS_CHARS) banned[ch.charCodeAt(0)] = 1;
  return {
    re,
    text,
    test(value) {
      const n = value.length;
      if (n < min || n > 2 * max) return false;
      let points = 0;
      for (let i = 0; i < n; i++) {
        const c = value.charCodeAt(i);
        if (c < 128) {
          if (banned[c] === 1) return false;
        } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < n) {
          const d = value.charCodeAt(i + 1);
          if (d >= 0xdc00 && d <= 0xdfff) i++;
        }
        points++;
      }
      return points >= min && points <= max;
    },
  };
}

/** `^[ABCDEFGHJKMNPQRSTVWXYZ0-9]{26}$`: a ULID in Crockford base32, upper case. */
function ulidPattern(js: string): Pattern {
  const re = new RegExp(js, 'u');
  const text = js; // no backslashes to double
  const ok = new Uint8Array(128);
  for (const ch of 'ABCDEFGHJKMNPQRSTVWXYZ0123456789') ok[ch.charCodeAt(0)] = 1;
  return {
    re,
    text,
    test(value) {
      if (value.length !== 26) return false;
      for (let i = 0; i < 26; i++) {
        const c = value.charCodeAt(i);
        if (c >= 128 || ok[c] !== 1) return false;
      }
      return true;
    },
  };
}

export const P = {
  ulid: ulidPattern('^[ABCDEFGHJKMNPQRSTVWXYZ0-9]{26}$'),
  type: excluding(':#@', 1, 254),
  changesType: excluding(':#', 1, 254),
  relation: excluding(':#@', 1, 50),
  object: excluding('', 2, 256),
  checkUser: excluding('', 2, 512),
  readUser: pattern(`^[^${WS}]{1,511}:[^${WS}]{1,511}$`, String.raw`^[^\\s]{1,511}:[^\\s]{1,511}$`),
  objectId: pattern(`[^#:${WS}]+$`, String.raw`[^#:\\s]+$`),
  conditionName: excluding('', 2, 256),
  storeName: pattern(`^[a-zA-Z0-9${WS}.\\-/^_&@]{3,64}$`, String.raw`^[a-zA-Z0-9\\s\\.\\-\\/^_&@]{3,64}$`),
  token: pattern('^$|^[A-Za-z0-9\\-_]+={0,2}$', '^$|^[A-Za-z0-9-_]+={0,2}$'),
  correlationId: pattern('^[\\w\\d\\-]{1,36}$', String.raw`^[\\w\\d-]{1,36}$`),
} as const;

/** The wire code of a validator failure (§6.4): derived from the field name and the reason. */
function derivedCode(field: string, reason: string): ErrorCode {
  if (reason.startsWith('value must be inside range') && field === 'PageSize') return 'page_size_invalid';
  if (reason.startsWith('value is required')) {
    if (field === 'TupleKey') return 'tuple_key_value_not_specified';
    if (field === 'Base') return 'difference_base_missing_value';
    if (field === 'Subtract') return 'subtract_base_missing_value';
  }
  if (field === 'Type' && reason.startsWith('value does not match regex pattern')) return 'type_invalid_pattern';
  if (field === 'Type' && reason.startsWith('value length must be at')) return 'type_invalid_length';
  if (field === 'TypeDefinitions' && reason.startsWith('value must contain at least'))
    return 'type_definitions_too_few_items';
  if (field.startsWith('Relations[') && reason.startsWith('value does not match regex pattern'))
    return 'relations_invalid_pattern';
  if (field.startsWith('Relations[') && reason.startsWith('value length must be at most')) return 'relations_too_long';
  if (field === 'Relations' && reason.startsWith('value must contain at least')) return 'relations_too_few_items';
  if (field === 'Assertions' && reason.startsWith('value must contain no more than'))
    return 'assertions_too_many_items';
  if (field === 'Object' && reason.startsWith('value length must be at most')) return 'object_too_long';
  if (field === 'Relation' && reason.startsWith('value length must be at most')) return 'relation_too_long';
  return 'validation_error';
}

/** `invalid <Message>.<Field>: <reason>` with the derived code. */
export function violation(message: string, field: string, reason: string): AppError {
  return new AppError(derivedCode(field, reason), `invalid ${message}.${field}: ${reason}`);
}

/** A map-key failure: `invalid key for <Message>.<Field>[<key>]: <reason>`. */
export function keyViolation(message: string, field: string, key: string, reason: string): AppError {
  return new AppError(derivedCode(`${field}[`, reason), `invalid key for ${message}.${field}[${key}]: ${reason}`);
}

/** A protojson decoding failure (wrong JSON type for a field): 400 validation_error. */
export function typeError(field: string, kind: string, value: unknown): AppError {
  return new AppError('validation_error', `invalid value for ${kind} field ${field}: ${shown(value)}`);
}

/** A wrong value as error messages quote it; one nested too deep to print is named by its kind. */
function shown(value: unknown): string {
  if (deeperThan(value, MAX_VALUE_DEPTH))
    return Array.isArray(value) ? 'a list nested too deeply' : 'an object nested too deeply';
  return JSON.stringify(value) ?? String(value);
}

/** A free-form value (Struct, metadata) nested more than MAX_VALUE_DEPTH levels: refused before anything walks it. */
export function tooDeep(field: string): AppError {
  return new AppError(
    'validation_error',
    `invalid value for field ${field}: nested more than ${MAX_VALUE_DEPTH} levels deep`,
  );
}

export const REASON = {
  regex: (p: Pattern): string => `value does not match regex pattern "${p.text}"`,
  required: 'value is required',
  atLeastOne: 'value must contain at least 1 item(s)',
  atMost: (n: number): string => `value must contain no more than ${n} item(s)`,
  exactlyOne: 'value must contain exactly 1 item(s)',
  maxBytes: (n: number): string => `value length must be at most ${n} bytes`,
  range: (lo: number, hi: number): string => `value must be inside range [${lo}, ${hi}]`,
  enum: 'value must be one of the defined enum values',
} as const;

export type Obj = Record<string, unknown>;

export function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

// Each reader comes in two forms: (body, field) for the parsers, and the value already read for
// the hot path (Check), which reads its fields by literal name. `body[field]` inside a shared
// helper sees every message shape and runs as a megamorphic keyed load (≈ 20–40 ns each, nine
// per Check); `body['user']` in the caller is a named load with its own inline cache.

/** A message-typed field: absent/null → undefined; a non-object is a decoding error. */
export function optMessage(body: Obj, field: string): Obj | undefined {
  return messageValue(body[field], field);
}

export function messageValue(v: unknown, field: string): Obj | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) throw typeError(field, 'message', v);
  return v;
}

/** A string field: absent/null → "" (proto3 default); a non-string is a decoding error. */
export function str(body: Obj, field: string): string {
  return strValue(body[field], field);
}

export function strValue(v: unknown, field: string): string {
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) return '';
  throw typeError(field, 'string', v);
}

export function bool(body: Obj, field: string): boolean {
  return boolValue(body[field], field);
}

export function boolValue(v: unknown, field: string): boolean {
  if (typeof v === 'boolean') return v;
  if (v === undefined || v === null) return false;
  throw typeError(field, 'bool', v);
}

/** A repeated field: absent/null → []. */
export function list(body: Obj, field: string): unknown[] {
  const v = body[field];
  if (Array.isArray(v)) return v;
  if (v === undefined || v === null) return [];
  throw typeError(field, 'repeated', v);
}

/** A google.protobuf.Struct: any JSON object, absent/null → undefined. */
export function struct(body: Obj, field: string): JsonObject | undefined {
  return structValue(body[field], field);
}

export function structValue(v: unknown, field: string): JsonObject | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) throw typeError(field, 'google.protobuf.Struct', v);
  if (deeperThan(v, MAX_VALUE_DEPTH)) throw tooDeep(field);
  return v as JsonObject;
}

/** Pattern check; empty strings fail unless `ignoreEmpty` (proto `ignore_empty: true`). */
export function match(value: string, p: Pattern, message: string, field: string, ignoreEmpty = false): string {
  if (ignoreEmpty && value === '') return value;
  if (!p.test(value)) throw violation(message, field, REASON.regex(p));
  return value;
}

/** UTF-8 length without encoding when the string is short enough for it not to matter. */
export function byteLength(s: string): number {
  return s.length * 3 <= 512 ? s.length : Buffer.byteLength(s, 'utf8');
}

/** True when `value` takes at most `n` bytes in UTF-8 (encoded only when its length leaves a doubt). */
export function fitsBytes(value: string, n: number): boolean {
  return value.length <= n && (value.length * 3 <= n || Buffer.byteLength(value, 'utf8') <= n);
}

export function maxBytes(value: string, n: number, message: string, field: string): string {
  if (!fitsBytes(value, n)) throw violation(message, field, REASON.maxBytes(n));
  return value;
}

/** `authorization_model_id`: empty → undefined (latest model), else a ULID. */
export function modelId(body: Obj, message: string, field = 'authorization_model_id'): string | undefined {
  return modelIdValue(body[field], message, field);
}

export function modelIdValue(v: unknown, message: string, field = 'authorization_model_id'): string | undefined {
  const id = strValue(v, field);
  if (id === '') return undefined;
  return ulidField(id, message, 'AuthorizationModelId');
}

// The last ULID that passed: hot callers check the same store (and model) id over and over.
let lastUlid: string | undefined;

function ulidField(value: string, message: string, field: string): string {
  if (value === lastUlid) return value;
  match(value, P.ulid, message, field);
  lastUlid = value;
  return value;
}

/** The store id path parameter (field 1 of every store-scoped request). */
export function storeId(value: string | undefined, message: string): string {
  return ulidField(value ?? '', message, 'StoreId');
}

const CONSISTENCY_BY_NUMBER: Record<number, Consistency> = {
  0: 'UNSPECIFIED',
  100: 'MINIMIZE_LATENCY',
  200: 'HIGHER_CONSISTENCY',
};

/** `consistency`: the enum name or its number (§1.7). */
export function consistency(body: Obj, message: string): Consistency {
  const v = body.consistency;
  if (v === undefined || v === null) return 'UNSPECIFIED';
  if (v === 'UNSPECIFIED' || v === 'MINIMIZE_LATENCY' || v === 'HIGHER_CONSISTENCY') return v;
  if (typeof v === 'number' && Number.isInteger(v)) {
    const c = CONSISTENCY_BY_NUMBER[v];
    if (c) return c;
    throw violation(message, 'Consistency', REASON.enum);
  }
  throw new AppError('validation_error', `invalid value for enum field consistency: ${shown(v)}`);
}

/** The largest revision a client can name exactly (2^53 - 1 has 16 digits). */
const MAX_REVISION = Number.MAX_SAFE_INTEGER;

/**
 * Latch-Min-Revision (an HTTP header, or the `min_revision` field of a channel request): a
 * decimal revision (header text) or a non-negative integer (msgpack); absent or '' → undefined.
 * Anything else → 400 validation_error.
 */
export function minRevision(v: unknown): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const n = typeof v === 'string' && /^\d{1,16}$/.test(v) ? Number(v) : v;
  if (typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= MAX_REVISION) return n;
  throw new AppError(
    'validation_error',
    `invalid Latch-Min-Revision: value must be a revision, an integer in [0, ${MAX_REVISION}]`,
  );
}

/**
 * An int32 wrapper (`page_size`): a JSON number or numeric string; absent → undefined.
 * Query parameters arrive as strings.
 */
export function int32(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n > 2147483647 || n < -2147483648) {
    throw typeError(field, 'int32', v);
  }
  return n;
}

/** `page_size` of the paginated endpoints: default 50, inside [1, 100]. */
export function pageSize(v: unknown, message: string, max = 100): number {
  const n = int32(v, 'page_size');
  if (n === undefined) return 50;
  if (n < 1 || n > max) throw violation(message, 'PageSize', REASON.range(1, max));
  return n;
}

/** `continuation_token`: the regex and 5120-byte bound; the content is checked by tokens.ts. */
export function tokenText(v: unknown, message: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw typeError('continuation_token', 'string', v);
  if (v.length > 5120) throw violation(message, 'ContinuationToken', REASON.maxBytes(5120));
  return match(v, P.token, message, 'ContinuationToken');
}
