// Parsers of the tuple-key messages (docs/reference/http-api.md §3.1–3.3). The six variants differ in their
// rules and are not interchangeable: `TupleKey` (written, contextual), `TupleKeyWithoutCondition`
// (deleted), `CheckRequestTupleKey` (Check, BatchCheck) and `AssertionTupleKey`.

import { formatExpiry, parseExpiry } from '../domain/expiry.js';
import type { RelationshipCondition, TupleKey } from '../domain/types.js';
import { AppError } from '../errors.js';
import type { CheckTupleKey } from '../engine/contract.js';
import { EMPTY } from './endpoint.js';
import {
  P,
  REASON,
  fitsBytes,
  isObj,
  list,
  match,
  maxBytes,
  messageValue,
  optMessage,
  str,
  strValue,
  struct,
  typeError,
  violation,
  type Obj,
} from './validate.js';

/** Contextual tuples per request (proto `max_items`). */
export const MAX_CONTEXTUAL_TUPLES = 100;

/** `TupleKey.user` and `TupleKeyWithoutCondition.user`: at most this many UTF-8 bytes. */
const MAX_USER_BYTES = 512;

function element(v: unknown, field: string): Obj {
  if (!isObj(v)) throw typeError(field, 'message', v);
  return v;
}

function condition(body: Obj): RelationshipCondition | undefined {
  const c = optMessage(body, 'condition');
  if (!c) return undefined;
  const name = match(str(c, 'name'), P.conditionName, 'RelationshipCondition', 'Name');
  const context = struct(c, 'context');
  return context === undefined ? { name } : { name, context };
}

/**
 * `expires_at` (latch extension, docs/reference/decisions.md D15): absent, or an RFC 3339 date-time, stored in its normal form
 * (UTC, milliseconds). Only written tuples may carry one: a contextual tuple with an expiry is
 * refused rather than granted without it. Past and too distant instants are refused by the writer.
 */
function expiry(body: Obj, allowed: boolean): string | undefined {
  const v = body['expires_at'];
  if (v === undefined || v === null || v === '') return undefined;
  if (!allowed)
    throw new AppError('validation_error', 'invalid TupleKey.ExpiresAt: only written tuples may carry expires_at');
  const ms = typeof v === 'string' ? parseExpiry(v) : undefined;
  if (ms === undefined)
    throw new AppError(
      'validation_error',
      `invalid TupleKey.ExpiresAt: value must be an RFC 3339 timestamp: ${JSON.stringify(v)}`,
    );
  return formatExpiry(ms);
}

/** `TupleKey`: user ≤ 512 bytes; relation and object patterns with empty allowed (checked later). `expires_at` only when `written`. */
export function tupleKey(v: unknown, field = 'tuple_keys', written = false): TupleKey {
  const body = element(v, field);
  const user = maxBytes(str(body, 'user'), MAX_USER_BYTES, 'TupleKey', 'User');
  const relation = match(str(body, 'relation'), P.relation, 'TupleKey', 'Relation', true);
  const object = match(str(body, 'object'), P.object, 'TupleKey', 'Object', true);
  const cond = condition(body);
  const expiresAt = expiry(body, written);
  const key: TupleKey = cond ? { user, relation, object, condition: cond } : { user, relation, object };
  return expiresAt === undefined ? key : { ...key, expires_at: expiresAt };
}

/**
 * One tuple of an import chunk (`tuple_keys`), parsed as `tupleKey(v, 'tuple_keys', true)`. An
 * item that is exactly `{user, relation, object}` (no other field) with string values passing
 * tupleKey's checks of them (every tuple of a plain import) is itself the TupleKey, where
 * `tupleKey` would copy it into a new object: a chunk's tuples live from its decoding until its
 * revision is applied to the index, across many turns of the event loop, so a copy of each
 * (50,000 a chunk) is moved by two young-generation collections and then promoted. Anything else
 * (a condition, an expiry, a field more or fewer, a value of another type or failing a check)
 * goes through `tupleKey`, which returns its copy or throws its error.
 */
export function importedTupleKey(v: unknown): TupleKey {
  if (isObj(v)) {
    const { user, relation, object } = v;
    if (
      typeof user === 'string' &&
      typeof relation === 'string' &&
      typeof object === 'string' &&
      fieldCount(v) === 3 &&
      fitsBytes(user, MAX_USER_BYTES) &&
      (relation === '' || P.relation.test(relation)) &&
      (object === '' || P.object.test(object))
    )
      return v as unknown as TupleKey;
  }
  return tupleKey(v, 'tuple_keys', true);
}

/** The enumerable fields of `o`, counted without an array of their names. */
function fieldCount(o: object): number {
  let n = 0;
  // Inherited ones count too: an item whose prototype adds a field is not taken as is.
  for (const _ in o) n++;
  return n;
}

/** `TupleKeyWithoutCondition` (Write deletes): as TupleKey; a `condition` sent is ignored. */
export function deleteKey(v: unknown): TupleKey {
  const body = element(v, 'tuple_keys');
  const user = maxBytes(str(body, 'user'), MAX_USER_BYTES, 'TupleKeyWithoutCondition', 'User');
  const relation = match(str(body, 'relation'), P.relation, 'TupleKeyWithoutCondition', 'Relation', true);
  const object = match(str(body, 'object'), P.object, 'TupleKeyWithoutCondition', 'Object', true);
  return { user, relation, object };
}

/** `CheckRequestTupleKey` under `<message>.TupleKey` (required). */
export function checkKey(body: Obj, message: string): CheckTupleKey {
  // Fields read by literal name: see validate.ts on the value-taking readers.
  const k = messageValue(body['tuple_key'], 'tuple_key');
  if (!k) throw violation(message, 'TupleKey', REASON.required);
  const user = match(strValue(k['user'], 'user'), P.checkUser, 'CheckRequestTupleKey', 'User');
  const relation = match(strValue(k['relation'], 'relation'), P.relation, 'CheckRequestTupleKey', 'Relation');
  const object = match(strValue(k['object'], 'object'), P.object, 'CheckRequestTupleKey', 'Object');
  return { user, relation, object };
}

/** `AssertionTupleKey` (object, relation, user — that proto order). */
export function assertionKey(body: Obj): { user: string; relation: string; object: string } {
  const k = optMessage(body, 'tuple_key');
  if (!k) throw violation('Assertion', 'TupleKey', REASON.required);
  const object = match(str(k, 'object'), P.object, 'AssertionTupleKey', 'Object');
  const relation = match(str(k, 'relation'), P.relation, 'AssertionTupleKey', 'Relation');
  const user = match(str(k, 'user'), P.checkUser, 'AssertionTupleKey', 'User');
  return { user, relation, object };
}

/** A bare `TupleKey[]` with a maximum count (ListUsers, assertions). */
export function tupleKeyList(
  body: Obj,
  field: string,
  message: string,
  goField: string,
  max: number,
): readonly TupleKey[] {
  const items = list(body, field);
  if (items.length === 0) return EMPTY;
  if (items.length > max) throw violation(message, goField, REASON.atMost(max));
  return items.map((t) => tupleKey(t, field));
}

/** The `contextual_tuples: {tuple_keys: TupleKey[]}` wrapper of Check, Expand, ListObjects. */
export function contextualTuples(body: Obj): readonly TupleKey[] {
  const wrapper = messageValue(body['contextual_tuples'], 'contextual_tuples');
  if (!wrapper) return EMPTY;
  return tupleKeyList(wrapper, 'tuple_keys', 'ContextualTupleKeys', 'TupleKeys', MAX_CONTEXTUAL_TUPLES);
}
