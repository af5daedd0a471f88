// The dictionary form of Check on the msgpack channel (docs/msgpack.md "Bulk checks"): a connection
// declares strings once (`define-strings`, ids given in order from 0), then sends checks as packed
// little-endian u32 triples (object, relation, user) of those ids in one msgpack `bin`
// (`check-ids`) and gets one byte per check back. Each check is validated like a Check request's
// tuple key (same patterns, same messages, same order) and answered by the engine's interned path.
//
// Example: define-strings {first: 0, strings: ['doc:1', 'viewer', 'user:anne']}, then
// check-ids {checks: bin(u32le 0,1,2)} → {results: bin(01), errors: []}.

import {
  MAX_DEFINE,
  MAX_DICTIONARY_STRINGS,
  MAX_DICTIONARY_UNITS,
  MAX_STRING_BYTES,
} from '../domain/channel-limits.js';
import { AppError, toAppError } from '../errors.js';
import type { CheckIdsInput, StringTable } from '../engine/contract.js';
import { CHECK_ERROR } from '../engine/contract.js';
import { checkKey } from './tuple-key-parsers.js';
import {
  P,
  byteLength,
  consistency,
  list,
  minRevision,
  modelId,
  optMessage,
  storeId,
  struct,
  typeError,
  type Obj,
} from './validate.js';

/** Checks per check-ids request (3 MiB of triples). */
const MAX_ID_CHECKS = 262_144;

const UNKNOWN = 0;
const VALID = 1;
const INVALID = 2;

/**
 * A connection's dictionary: the strings (the engine's StringTable) and, per id, whether the
 * string passes Check's pattern as a user, a relation and an object (computed on first use).
 */
export class ChannelDictionary implements StringTable {
  readonly strings: string[] = [];
  #units = 0;
  #user = new Uint8Array(0);
  #relation = new Uint8Array(0);
  #object = new Uint8Array(0);

  /** define-strings: appends `strings` at ids `first…`; `first` must be the next free id. */
  define(body: Obj): { first: number; count: number } {
    const first = body.first;
    if (typeof first !== 'number' || first !== this.strings.length) {
      throw new AppError(
        'validation_error',
        `invalid DefineStrings.First: the next string id of this connection is ${this.strings.length}`,
      );
    }
    const items = list(body, 'strings');
    if (items.length > MAX_DEFINE)
      throw new AppError(
        'validation_error',
        `invalid DefineStrings.Strings: at most ${MAX_DEFINE} strings per request`,
      );
    if (this.strings.length + items.length > MAX_DICTIONARY_STRINGS) {
      throw new AppError(
        'validation_error',
        `invalid DefineStrings.Strings: a connection declares at most ${MAX_DICTIONARY_STRINGS} strings`,
      );
    }
    let units = this.#units;
    for (const s of items) {
      if (typeof s !== 'string') throw typeError('strings', 'string', s);
      if (byteLength(s) > MAX_STRING_BYTES)
        throw new AppError(
          'validation_error',
          `invalid DefineStrings.Strings: a string is longer than ${MAX_STRING_BYTES} bytes`,
        );
      units += s.length;
    }
    if (units > MAX_DICTIONARY_UNITS) {
      throw new AppError(
        'validation_error',
        `invalid DefineStrings.Strings: a connection declares at most ${MAX_DICTIONARY_UNITS} UTF-16 code units of strings`,
      );
    }
    this.#units = units;
    for (const s of items) this.strings.push(s as string);
    if (this.#user.length < this.strings.length) {
      const cap = Math.max(this.strings.length, this.#user.length * 2, 256);
      for (const name of ['user', 'relation', 'object'] as const) {
        const a = new Uint8Array(cap);
        a.set(name === 'user' ? this.#user : name === 'relation' ? this.#relation : this.#object);
        if (name === 'user') this.#user = a;
        else if (name === 'relation') this.#relation = a;
        else this.#object = a;
      }
    }
    return { first, count: items.length };
  }

  /** True when check (o, r, u) passes CheckRequestTupleKey's patterns (ids already in range). */
  valid(o: number, r: number, u: number): boolean {
    const s = this.strings;
    let v = this.#user[u];
    if (v === UNKNOWN) this.#user[u] = v = P.checkUser.test(s[u] as string) ? VALID : INVALID;
    let w = this.#relation[r];
    if (w === UNKNOWN) this.#relation[r] = w = P.relation.test(s[r] as string) ? VALID : INVALID;
    let x = this.#object[o];
    if (x === UNKNOWN) this.#object[o] = x = P.object.test(s[o] as string) ? VALID : INVALID;
    return v === VALID && w === VALID && x === VALID;
  }
}

/** Triples as u32 words (little-endian on the wire): one copy into aligned memory. */
function triplesOf(v: unknown): Uint32Array {
  if (!(v instanceof Uint8Array)) throw typeError('checks', 'bytes', typeof v === 'string' ? v.slice(0, 32) : v);
  if (v.byteLength % 12 !== 0)
    throw new AppError(
      'validation_error',
      'invalid CheckIdsRequest.Checks: the length must be a multiple of 12 bytes (3 u32 per check)',
    );
  const n = v.byteLength / 12;
  if (n === 0)
    throw new AppError('validation_error', 'invalid CheckIdsRequest.Checks: value must contain at least 1 item(s)');
  if (n > MAX_ID_CHECKS)
    throw new AppError(
      'validation_error',
      `invalid CheckIdsRequest.Checks: at most ${MAX_ID_CHECKS} checks per request`,
    );
  const out = new Uint32Array(n * 3);
  new Uint8Array(out.buffer).set(v);
  if (BIG_ENDIAN) for (let i = 0; i < out.length; i++) out[i] = swap(out[i] as number);
  return out;
}

const BIG_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 0;

function swap(x: number): number {
  return (((x & 0xff) << 24) | ((x & 0xff00) << 8) | ((x >>> 8) & 0xff00) | (x >>> 24)) >>> 0;
}

/**
 * check-ids: the engine input, with the checks that fail Check's tuple-key validation already
 * answered (their exact Check error). Request-level faults (store id, model id, consistency,
 * context, contextual tuples, the triples themselves) throw.
 */
export function parseCheckIds(
  store: string | undefined,
  body: Obj,
  dict: ChannelDictionary,
  minRevisionValue?: unknown,
): CheckIdsInput {
  const id = storeId(store, 'CheckIdsRequest');
  const triples = triplesOf(body.checks);
  const model = modelId(body, 'CheckIdsRequest');
  const context = struct(body, 'context');
  const wrapper = optMessage(body, 'contextual_tuples');
  if (wrapper && list(wrapper, 'tuple_keys').length > 0) {
    throw new AppError(
      'validation_error',
      'invalid CheckIdsRequest.ContextualTuples: check-ids takes no contextual tuples; send such checks as `check` requests',
    );
  }
  const n = triples.length / 3;
  const outcomes = new Uint8Array(n);
  const errors = new Map<number, AppError>();
  const strings = dict.strings;
  const size = strings.length;
  for (let i = 0; i < n; i++) {
    const o = triples[3 * i] as number;
    const r = triples[3 * i + 1] as number;
    const u = triples[3 * i + 2] as number;
    if (o >= size || r >= size || u >= size) {
      outcomes[i] = CHECK_ERROR;
      errors.set(
        i,
        new AppError(
          'validation_error',
          `invalid CheckIdsRequest.Checks[${i}]: string id ${Math.max(o, r, u)} was never declared on this connection`,
        ),
      );
    } else if (!dict.valid(o, r, u)) {
      try {
        checkKey({ tuple_key: { user: strings[u], relation: strings[r], object: strings[o] } }, 'CheckRequest');
      } catch (err) {
        outcomes[i] = CHECK_ERROR;
        errors.set(i, toAppError(err));
      }
    }
  }
  const c = consistency(body, 'CheckIdsRequest');
  return {
    storeId: id,
    modelId: model,
    consistency: c,
    minRevision: minRevision(minRevisionValue),
    context,
    table: dict,
    triples,
    outcomes,
    errors,
  };
}

/** The answer body: one byte per check (0 denied, 1 allowed, 2 error) and the errors by index. */
export function checkIdsOut(input: CheckIdsInput): Record<string, unknown> {
  const errors: { index: number; status: number; code: string; message: string }[] = [];
  for (const [index, e] of input.errors) errors.push({ index, status: e.status, code: e.code, message: e.message });
  errors.sort((a, b) => a.index - b.index);
  return { results: input.outcomes, errors };
}
