// Tuple endpoints (docs/reference/http-api.md §4.11–4.13): Write, Read and ReadChanges, with their request-level
// rules (duplicates, the 100-tuple limit, Read filter shapes, the ReadChanges token contract).

import { createHash } from 'node:crypto';
import type { TupleKey } from '../domain/types.js';
import { rejectDuplicateTuples } from '../engine/commands/validate-request.js';
import type { ReadChangesInput, ReadInput, WriteInput } from '../engine/contract.js';
import { AppError } from '../errors.js';
import { EMPTY, endpoint, ok, type Endpoint } from './endpoint.js';
import { preconditions } from './preconditions.js';
import type { TokenCodec } from './tokens.js';
import { deleteKey, tupleKey } from './tuple-key-parsers.js';
import { changeOut, tupleOut } from './render.js';
import { bodyObject, queryText } from './stores.js';
import {
  P,
  REASON,
  consistency,
  int32,
  list,
  match,
  maxBytes,
  minRevision,
  modelId,
  optMessage,
  pageSize,
  storeId,
  str,
  tokenText,
  violation,
  type Obj,
} from './validate.js';

const MAX_TUPLES_PER_WRITE = 100;

/** Write's reply headers: how many tuples the request actually wrote and deleted. */
const WRITTEN_HEADER = 'Latch-Tuples-Written';
const DELETED_HEADER = 'Latch-Tuples-Deleted';

type Mode = 'error' | 'ignore';

function mode(value: string, option: 'on_duplicate' | 'on_missing'): Mode {
  if (value === '' || value === 'error') return 'error';
  if (value === 'ignore') return 'ignore';
  throw new AppError('validation_error', `invalid ${option} option: ${value}`);
}

/** `writes` / `deletes`: absent → no tuples; present → at least one tuple. */
function half(body: Obj, field: 'writes' | 'deletes'): { keys: readonly TupleKey[]; mode: string } | undefined {
  const part = optMessage(body, field);
  if (!part) return undefined;
  const message = field === 'writes' ? 'WriteRequestWrites' : 'WriteRequestDeletes';
  const items = list(part, 'tuple_keys');
  if (items.length === 0) throw violation(message, 'TupleKeys', REASON.atLeastOne);
  const keys = field === 'writes' ? items.map((t) => tupleKey(t, 'tuple_keys', true)) : items.map(deleteKey);
  return { keys, mode: str(part, field === 'writes' ? 'on_duplicate' : 'on_missing') };
}

const write = endpoint<WriteInput>({
  name: 'Write',
  op: 'write',
  method: 'post',
  path: '/stores/:store_id/write',
  parse(req) {
    const store = storeId(req.params.store_id, 'WriteRequest');
    const body = bodyObject(req);
    const writes = half(body, 'writes');
    const deletes = half(body, 'deletes');
    const model = modelId(body, 'WriteRequest');
    if (!writes && !deletes) {
      throw new AppError(
        'invalid_write_input',
        'Invalid input. Make sure you provide at least one write, or at least one delete',
      );
    }
    const w = writes?.keys ?? EMPTY;
    const d = deletes?.keys ?? EMPTY;
    rejectDuplicateTuples(w, d);
    if (w.length + d.length > MAX_TUPLES_PER_WRITE) {
      throw new AppError(
        'exceeded_entity_limit',
        `The number of write operations exceeds the allowed limit of ${MAX_TUPLES_PER_WRITE}`,
      );
    }
    const onDuplicate = mode(writes?.mode ?? '', 'on_duplicate');
    const onMissing = mode(deletes?.mode ?? '', 'on_missing');
    const guards = preconditions(body);
    return { storeId: store, modelId: model, writes: w, deletes: d, onDuplicate, onMissing, preconditions: guards };
  },
  async handle(input, ctx) {
    const out = await ctx.latch.write(input);
    ctx.modelId = out.modelId;
    ctx.revision = out.revision;
    // docs/reference/decisions.md D15: the body stays OpenFGA's `{}`; what was applied (ignored duplicates and missing deletes
    // left out) travels in latch's own headers, which `latch tuple import|write|delete` report.
    return {
      status: 200,
      body: {},
      json: '{}',
      headers: { [WRITTEN_HEADER]: String(out.written), [DELETED_HEADER]: String(out.deleted) },
    };
  },
});

const READ_FILTER_MESSAGE =
  "the 'tuple_key' field was provided but the object type field is required and both the object id and user cannot be empty";

interface ReadRequestInput extends ReadInput {
  readonly token: string;
  /** Hash of the filter; a token is only valid with the filter that produced it. */
  readonly filterKey: string;
}

function readFilter(body: Obj): ReadInput['filter'] {
  const k = optMessage(body, 'tuple_key');
  if (!k) return {};
  const user = match(
    maxBytes(str(k, 'user'), 512, 'ReadRequestTupleKey', 'User'),
    P.readUser,
    'ReadRequestTupleKey',
    'User',
    true,
  );
  const relation = match(str(k, 'relation'), P.relation, 'ReadRequestTupleKey', 'Relation', true);
  const object = match(str(k, 'object'), P.object, 'ReadRequestTupleKey', 'Object', true);
  const colon = object.indexOf(':');
  if (colon <= 0 || (colon === object.length - 1 && user === ''))
    throw new AppError('validation_error', READ_FILTER_MESSAGE);
  return { object, relation: relation || undefined, user: user || undefined };
}

const read = endpoint<ReadRequestInput>({
  name: 'Read',
  op: 'read',
  method: 'post',
  path: '/stores/:store_id/read',
  minRevision: true,
  parse(req) {
    const store = storeId(req.params.store_id, 'ReadRequest');
    const body = bodyObject(req);
    const filter = readFilter(body);
    const size = pageSize(body.page_size, 'ReadRequest');
    const token = tokenText(body.continuation_token, 'ReadRequest');
    const c = consistency(body, 'ReadRequest');
    const filterKey = createHash('sha256')
      .update(`${filter.object ?? ''}\0${filter.relation ?? ''}\0${filter.user ?? ''}`)
      .digest('base64url')
      .slice(0, 16);
    return {
      storeId: store,
      filter,
      pageSize: size,
      consistency: c,
      token,
      filterKey,
      minRevision: minRevision(req.minRevision),
    };
  },
  async handle(input, ctx) {
    let after: string | undefined;
    if (input.token) {
      const t = ctx.tokens.decode('read', input.storeId, input.token);
      if (t.filter !== input.filterKey) throw new AppError('invalid_continuation_token', 'Invalid continuation token');
      after = t.cursor;
    }
    const page = await ctx.latch.read({
      storeId: input.storeId,
      filter: input.filter,
      pageSize: input.pageSize,
      after,
      consistency: input.consistency,
      minRevision: input.minRevision,
    });
    const token = page.next
      ? ctx.tokens.encode('read', { storeId: input.storeId, filter: input.filterKey, cursor: page.next })
      : '';
    return ok({ tuples: page.items.map(tupleOut), continuation_token: token });
  },
});

interface ChangesInput extends ReadChangesInput {
  readonly token: string;
}

/**
 * The changelog cursor a ReadChanges or Watch continuation token carries (undefined without one);
 * a token made for another object type than `type` is query_string_type_continuation_token_mismatch.
 */
export function changesCursor(
  tokens: TokenCodec,
  input: { readonly storeId: string; readonly type?: string | undefined; readonly token?: string | undefined },
): string | undefined {
  if (!input.token) return undefined;
  const t = tokens.decode('changes', input.storeId, input.token);
  if (t.filter !== (input.type ?? ''))
    throw new AppError(
      'query_string_type_continuation_token_mismatch',
      "The type in the querystring and the continuation token don't match",
    );
  return t.cursor;
}

/** `start_time`: RFC 3339, before now, not before the epoch. */
export function startTime(text: string, message = 'ReadChangesRequest'): string | undefined {
  if (text === '') return undefined;
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i.test(text)
    ? Date.parse(text)
    : NaN;
  if (Number.isNaN(ms)) throw violation(message, 'StartTime', 'value is not a valid timestamp');
  if (ms < 0) throw new AppError('invalid_start_time', 'Invalid start time');
  if (ms >= Date.now()) throw violation(message, 'StartTime', 'value must be less than now');
  return new Date(ms).toISOString();
}

const readChanges = endpoint<ChangesInput>({
  name: 'ReadChanges',
  op: 'read-changes',
  method: 'get',
  path: '/stores/:store_id/changes',
  parse(req) {
    const store = storeId(req.params.store_id, 'ReadChangesRequest');
    const type = match(queryText(req, 'type'), P.changesType, 'ReadChangesRequest', 'Type', true);
    const raw = int32(req.query('page_size'), 'page_size');
    if (raw !== undefined && raw < 1)
      throw violation('ReadChangesRequest', 'PageSize', 'value must be greater than or equal to 1');
    const size = pageSize(raw, 'ReadChangesRequest');
    const token = tokenText(req.query('continuation_token'), 'ReadChangesRequest');
    const start = startTime(queryText(req, 'start_time'));
    return { storeId: store, type: type || undefined, pageSize: size, token, startTime: start };
  },
  async handle(input, ctx) {
    const after = changesCursor(ctx.tokens, input);
    // A token takes precedence over start_time (§4.13).
    const page = await ctx.latch.readChanges({
      storeId: input.storeId,
      type: input.type,
      pageSize: input.pageSize,
      after,
      startTime: after ? undefined : input.startTime,
    });
    // Sticky token: after the last change when there were changes, else the one sent (poll later).
    const token = page.next
      ? ctx.tokens.encode('changes', { storeId: input.storeId, filter: input.type ?? '', cursor: page.next })
      : input.token;
    return ok({ changes: page.items.map(changeOut), continuation_token: token });
  },
});

export const TUPLE_ENDPOINTS: readonly Endpoint[] = [write, read, readChanges];
