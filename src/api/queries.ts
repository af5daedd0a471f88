// Query endpoints (docs/reference/http-api.md §4.14–4.19): Check, BatchCheck, Expand, ListObjects,
// StreamedListObjects and ListUsers. Check is the hot path: one small input object, no copies,
// and its two possible bodies pre-encoded.

import type { AppError } from '../errors.js';
import { AppError as Failure } from '../errors.js';
import { DEFAULT_LIST_PAGE_SIZE, listingKey, MAX_LIST_PAGE_SIZE } from '../engine/evaluation/list/pages.js';
import type {
  BatchCheckInput,
  BatchCheckItem,
  BatchCheckOutcome,
  CheckInput,
  ExpandInput,
  ListObjectsInput,
  ListPageRequest,
  ListUsersInput,
  StreamEvaluated,
  UserFilter,
} from '../engine/contract.js';
import { MAX_STREAMED_OBJECTS, type DecisionLog } from './decisions/log.js';
import {
  clientOf,
  constantReply,
  endpoint,
  ok,
  type Endpoint,
  type Reply,
  type CallContext,
  type StreamReply,
} from './endpoint.js';
import { ObjectLines, objectPageJson, userPageJson, type LineSource } from './listing-lines.js';
import { MAX_CONTEXTUAL_TUPLES, checkKey, contextualTuples, tupleKeyList } from './tuple-key-parsers.js';
import { bodyObject } from './stores.js';
import { pastPoint } from './at.js';
import {
  P,
  REASON,
  boolValue,
  byteLength,
  consistency,
  int32,
  isObj,
  list,
  match,
  minRevision,
  modelId,
  modelIdValue,
  optMessage,
  storeId,
  str,
  struct,
  structValue,
  tokenText,
  typeError,
  violation,
  type Obj,
} from './validate.js';

export const ALLOWED: Reply = constantReply({ allowed: true, resolution: '' });
export const DENIED: Reply = constantReply({ allowed: false, resolution: '' });

/** CheckRequest: store_id, tuple_key, contextual_tuples, authorization_model_id, trace, context, consistency. */
export function parseCheck(
  store: string | undefined,
  body: Obj,
  minRevisionValue?: unknown,
  atRevisionValue?: unknown,
): CheckInput {
  const id = storeId(store, 'CheckRequest');
  const tupleKey = checkKey(body, 'CheckRequest');
  const contextual = contextualTuples(body);
  // Fields read by literal name: see validate.ts on the value-taking readers.
  const model = modelIdValue(body['authorization_model_id'], 'CheckRequest');
  boolValue(body['trace'], 'trace');
  const context = structValue(body['context'], 'context');
  const c = consistency(body, 'CheckRequest');
  const min = minRevision(minRevisionValue);
  return {
    storeId: id,
    tupleKey,
    contextualTuples: contextual,
    modelId: model,
    context,
    consistency: c,
    minRevision: min,
    at: pastPoint(body, atRevisionValue),
  };
}

const check = endpoint<CheckInput>({
  name: 'Check',
  op: 'check',
  method: 'post',
  path: '/stores/:store_id/check',
  minRevision: true,
  parse: (req) => parseCheck(req.params.store_id, bodyObject(req), req.minRevision, req.atRevision),
  async handle(input, ctx) {
    const r = await ctx.latch.check(input);
    ctx.modelId = r.modelId;
    if (r.atRevision !== undefined) ctx.revision = r.atRevision;
    const d = ctx.decisions;
    if (d?.active) d.check(clientOf(ctx), 'Check', input, r);
    return r.allowed ? ALLOWED : DENIED;
  },
  handleSync(input, ctx) {
    const r = ctx.latch.checkSync(input);
    if (r === undefined) return undefined;
    ctx.modelId = r.modelId;
    const d = ctx.decisions;
    if (d?.active) d.check(clientOf(ctx), 'Check', input, r);
    return r.allowed ? ALLOWED : DENIED;
  },
});

function batchItem(v: unknown): BatchCheckItem {
  if (!isObj(v)) throw typeError('checks', 'message', v);
  const tupleKey = checkKey(v, 'BatchCheckItem');
  const contextual = contextualTuples(v);
  const context = struct(v, 'context');
  const correlationId = match(str(v, 'correlation_id'), P.correlationId, 'BatchCheckItem', 'CorrelationId');
  return { correlationId, tupleKey, contextualTuples: contextual, context };
}

function parseBatchCheck(
  store: string | undefined,
  body: Obj,
  minRevisionValue?: unknown,
  atRevisionValue?: unknown,
): BatchCheckInput {
  const id = storeId(store, 'BatchCheckRequest');
  const items = list(body, 'checks');
  if (items.length === 0) throw violation('BatchCheckRequest', 'Checks', REASON.atLeastOne);
  const checks = items.map(batchItem);
  const model = modelId(body, 'BatchCheckRequest');
  const c = consistency(body, 'BatchCheckRequest');
  const seen = new Set<string>();
  for (const item of checks) {
    if (seen.has(item.correlationId))
      throw new Failure('validation_error', `received duplicate correlation id: ${item.correlationId}`);
    seen.add(item.correlationId);
  }
  return {
    storeId: id,
    modelId: model,
    checks,
    consistency: c,
    minRevision: minRevision(minRevisionValue),
    at: pastPoint(body, atRevisionValue),
  };
}

/**
 * A per-item failure as BatchCheck reports it (§4.15): request faults are `input_error`. An item
 * over the Check deadline is, per docs/reference/decisions.md D8, the throttled timeout (422 on Check and on the
 * msgpack channel), which the item schema carries as OpenFGA does for a throttled item:
 * `input_error: validation_error` with the message `timeout due to throttling on complex request`.
 * The engine never lets `deadline_exceeded` (OpenFGA's un-throttled timeout, 500) out of a Check;
 * should one arrive it is the same event and gets the same answer, never an internal error.
 */
function checkErrorOut(err: AppError): Record<string, string> {
  if (err.code === 'throttled_timeout_error' || err.code === 'deadline_exceeded')
    return { input_error: 'validation_error', message: err.message };
  if (err.status === 400) return { input_error: err.code, message: err.message };
  return { internal_error: 'internal_error', message: err.message };
}

function outcomeOut(o: BatchCheckOutcome): Record<string, unknown> {
  return 'error' in o ? { error: checkErrorOut(o.error) } : { allowed: o.allowed };
}

const batchCheck = endpoint<BatchCheckInput>({
  name: 'BatchCheck',
  op: 'batch-check',
  method: 'post',
  path: '/stores/:store_id/batch-check',
  minRevision: true,
  parse: (req) => parseBatchCheck(req.params.store_id, bodyObject(req), req.minRevision, req.atRevision),
  async handle(input, ctx) {
    // The item limit is the server's setting (`--max-batch-check-items`, default 50): checked here,
    // not in the service, because the msgpack channel coalesces thousands of checks into one call.
    const max = ctx.latch.config.maxBatchCheckItems;
    if (input.checks.length > max) {
      throw new Failure(
        'validation_error',
        `batchCheck received ${input.checks.length} checks, the maximum allowed is ${max}`,
      );
    }
    const r = await ctx.latch.batchCheck(input);
    ctx.modelId = r.modelId;
    if (r.atRevision !== undefined) ctx.revision = r.atRevision;
    const d = ctx.decisions;
    if (d?.active) d.batch(clientOf(ctx), 'BatchCheck', input, r);
    const result: Record<string, unknown> = {};
    for (const [id, outcome] of r.results) result[id] = outcomeOut(outcome);
    return ok({ result });
  },
});

/** ExpandRequest: store_id, tuple_key, authorization_model_id, consistency, contextual_tuples. */
const expand = endpoint<ExpandInput>({
  name: 'Expand',
  op: 'expand',
  method: 'post',
  path: '/stores/:store_id/expand',
  minRevision: true,
  parse(req) {
    const id = storeId(req.params.store_id, 'ExpandRequest');
    const body = bodyObject(req);
    const k = optMessage(body, 'tuple_key');
    if (!k) throw violation('ExpandRequest', 'TupleKey', REASON.required);
    const relation = match(str(k, 'relation'), P.relation, 'ExpandRequestTupleKey', 'Relation', true);
    const object = match(str(k, 'object'), P.object, 'ExpandRequestTupleKey', 'Object', true);
    const model = modelId(body, 'ExpandRequest');
    const c = consistency(body, 'ExpandRequest');
    const contextual = contextualTuples(body);
    if (object === '' || relation === '') {
      throw new Failure('invalid_expand_input', 'Invalid input. Make sure you provide an object and a relation');
    }
    return {
      storeId: id,
      object,
      relation,
      modelId: model,
      consistency: c,
      contextualTuples: contextual,
      minRevision: minRevision(req.minRevision),
      at: pastPoint(body, req.atRevision),
    };
  },
  async handle(input, ctx) {
    const r = await ctx.latch.expand(input);
    ctx.modelId = r.modelId;
    if (r.atRevision !== undefined) ctx.revision = r.atRevision;
    return ok({ tree: r.tree });
  },
});

/** A ListObjects request as parsed, with the page fields of a paged one (D15) still as sent. */
export interface ListObjectsRequest extends ListObjectsInput {
  /** Fingerprint of the request without its page fields: a token is only valid with its request. */
  readonly listingKey: string;
  readonly token: string;
}

/**
 * `page_size` / `continuation_token` of a paged listing (latch extension): absent or 0 and no
 * token → OpenFGA's behaviour (undefined); else a page size in [1, 1000] (default 100).
 */
function listPage(body: Obj, message: string): { size: number; token: string } | undefined {
  const raw = int32(body['page_size'], 'page_size');
  const token = tokenText(body['continuation_token'], message);
  if ((raw === undefined || raw === 0) && token === '') return undefined;
  if (raw !== undefined && raw !== 0 && (raw < 1 || raw > MAX_LIST_PAGE_SIZE))
    throw violation(message, 'PageSize', REASON.range(1, MAX_LIST_PAGE_SIZE));
  return { size: raw === undefined || raw === 0 ? DEFAULT_LIST_PAGE_SIZE : raw, token };
}

/** ListObjectsRequest (and its streamed twin): authorization_model_id, type, relation, user, … and the page fields. */
export function parseListObjects(
  store: string | undefined,
  body: Obj,
  message: string,
  minRevisionValue?: unknown,
  atRevisionValue?: unknown,
): ListObjectsRequest {
  const id = storeId(store, message);
  const model = modelId(body, message);
  const type = match(str(body, 'type'), P.type, message, 'Type');
  const relation = match(str(body, 'relation'), P.relation, message, 'Relation');
  const user = str(body, 'user');
  const bytes = byteLength(user);
  if (bytes < 1 || bytes > 512)
    throw violation(message, 'User', 'value length must be between 1 and 512 bytes, inclusive');
  const contextual = contextualTuples(body);
  const context = struct(body, 'context');
  const page = listPage(body, message);
  const key = page ? listingKey('list-objects', [model ?? '', type, relation, user, contextual, context ?? null]) : '';
  return {
    storeId: id,
    modelId: model,
    type,
    relation,
    user,
    contextualTuples: contextual,
    context,
    consistency: consistency(body, message),
    minRevision: minRevision(minRevisionValue),
    at: pastPoint(body, atRevisionValue),
    page: page ? { size: page.size } : undefined,
    listingKey: key,
    token: page?.token ?? '',
  };
}

/** The cursor a request's continuation token carries (undefined without one); a token of another request → 400. */
function cursorOf(
  ctx: CallContext,
  kind: 'list-objects' | 'list-users',
  storeId: string,
  listing: string,
  token: string,
): string | undefined {
  if (token === '') return undefined;
  const t = ctx.tokens.decode(kind, storeId, token);
  if (t.filter !== listing) throw new Failure('invalid_continuation_token', 'Invalid continuation token');
  return t.cursor;
}

/** The validated input with the page's cursor decoded. */
function withCursor<T extends { readonly page?: ListPageRequest | undefined }>(input: T, after: string | undefined): T {
  return input.page ? { ...input, page: { size: input.page.size, after } } : input;
}

const listObjects = endpoint<ListObjectsRequest>({
  name: 'ListObjects',
  op: 'list-objects',
  method: 'post',
  path: '/stores/:store_id/list-objects',
  minRevision: true,
  parse: (req) =>
    parseListObjects(req.params.store_id, bodyObject(req), 'ListObjectsRequest', req.minRevision, req.atRevision),
  async handle(input, ctx) {
    const after = cursorOf(ctx, 'list-objects', input.storeId, input.listingKey, input.token);
    const q = withCursor(input, after);
    const r = await ctx.latch.listObjects(q);
    ctx.modelId = r.modelId;
    if (r.atRevision !== undefined) ctx.revision = r.atRevision;
    const d = ctx.decisions;
    if (d?.active) d.listObjects(clientOf(ctx), q, r);
    if (!input.page) return ok({ objects: r.objects });
    const token =
      r.next === undefined
        ? ''
        : ctx.tokens.encode('list-objects', { storeId: input.storeId, filter: input.listingKey, cursor: r.next });
    // A page of up to 100,000 objects: its JSON written straight into one buffer (msgpack still encodes `body`).
    return {
      status: 200,
      body: { objects: r.objects, continuation_token: token },
      json: objectPageJson(r.objects, token),
    };
  },
});

async function* objectLines(items: AsyncIterable<string>): AsyncIterable<unknown> {
  for await (const object of items) yield { object };
}

/** The lines of the engine's batches of objects (StreamedListObjects without a page), a batch per source. */
async function* batchLines(batches: AsyncIterable<readonly string[]>): AsyncIterable<LineSource> {
  for await (const batch of batches) yield new ObjectLines(batch);
}

/** One source of lines as the transport takes them. */
async function* once(lines: LineSource): AsyncIterable<LineSource> {
  yield lines;
}

/**
 * A sampled stream's objects as they are sent, recorded as a StreamedListObjects decision when
 * the stream ends (a stream cut by the client or by an error is not a decision): at most
 * MAX_STREAMED_OBJECTS objects, then the record is marked truncated.
 */
async function* recordedObjects(ctx: CallContext, log: DecisionLog, input: ListObjectsInput): AsyncIterable<unknown> {
  const evaluated: StreamEvaluated = { modelId: '', revision: 0, instant: 0 };
  const objects: string[] = [];
  let truncated = false;
  for await (const object of ctx.latch.streamedListObjects(input, ctx.signal, evaluated)) {
    if (objects.length < MAX_STREAMED_OBJECTS) objects.push(object);
    else truncated = true;
    yield { object };
  }
  if (ctx.signal.aborted) return;
  const answer = truncated ? { objects, truncated } : { objects };
  log.streamedListObjects(clientOf(ctx), input, evaluated.modelId, evaluated, answer);
}

/**
 * A resumable stream: the page (the same as paged ListObjects answers), each result carrying the
 * token that resumes after it, '' on the listing's last object (so a client can tell a finished
 * listing from a cut stream). HTTP renders the lines into its buffer (`ObjectPageLines`, tokens
 * signed once per page); the msgpack channel reads them as batches of JSON text.
 */
async function resumable(ctx: CallContext, input: ListObjectsRequest): Promise<StreamReply> {
  const r = await ctx.latch.listObjects(input);
  const d = ctx.decisions;
  if (d?.active && d.sample(input.storeId))
    d.streamedListObjects(clientOf(ctx), input, r.modelId, r, { objects: r.objects, next: r.next });
  const objects = r.objects;
  const tokens = ctx.tokens.listingTokens('list-objects', input.storeId, input.listingKey);
  const last = r.next === undefined ? objects.length - 1 : -1;
  const lines = new ObjectLines(objects, { tokens, last });
  async function* batches(): AsyncIterable<readonly string[]> {
    const buf = Buffer.allocUnsafe(Math.max(64 * 1024, 2 * lines.maxLineBytes));
    const copy = new ObjectLines(objects, { tokens, last });
    for (let end = copy.render(buf, 0); end > 0; end = copy.render(buf, 0)) {
      // Each line as the JSON text of its result: the channel parses them one by one.
      yield buf
        .toString('utf8', 0, end)
        .slice(0, -1)
        .split('\n')
        .map((l) => l.slice('{"result":'.length, -1));
    }
  }
  return { stream: batches(), batched: true, lines: once(lines) };
}

const streamedListObjects = endpoint<ListObjectsRequest>({
  name: 'StreamedListObjects',
  op: 'streamed-list-objects',
  method: 'post',
  path: '/stores/:store_id/streamed-list-objects',
  streaming: true,
  minRevision: true,
  parse: (req) =>
    parseListObjects(
      req.params.store_id,
      bodyObject(req),
      'StreamedListObjectsRequest',
      req.minRevision,
      req.atRevision,
    ),
  async handle(input, ctx) {
    // The header needs the resolved model before the first line; the stream itself reports
    // latest_authorization_model_not_found when the store has none.
    ctx.modelId = input.modelId ?? (await ctx.latch.listModels(input.storeId, { pageSize: 1 })).items[0]?.id;
    if (!input.page) {
      const d = ctx.decisions;
      if (d?.active && d.sample(input.storeId)) return { stream: recordedObjects(ctx, d, input) };
      const latch = ctx.latch;
      // Both are lazy: the transport reads one of them (HTTP the batches' lines where the engine
      // has batches, the channel the objects).
      async function* objects(): AsyncIterable<unknown> {
        yield* objectLines(latch.streamedListObjects(input, ctx.signal));
      }
      const batchesOf = latch.streamedListObjectBatches?.bind(latch);
      async function* lines(): AsyncIterable<LineSource> {
        if (batchesOf) yield* batchLines(batchesOf(input, ctx.signal));
      }
      return batchesOf ? { stream: objects(), lines: lines() } : { stream: objects() };
    }
    const paged = withCursor(input, cursorOf(ctx, 'list-objects', input.storeId, input.listingKey, input.token));
    return resumable(ctx, paged);
  },
});

function userFilter(v: unknown): UserFilter {
  if (!isObj(v)) throw typeError('user_filters', 'message', v);
  const type = match(str(v, 'type'), P.type, 'UserTypeFilter', 'Type');
  const relation = match(str(v, 'relation'), P.relation, 'UserTypeFilter', 'Relation', true);
  return relation ? { type, relation } : { type };
}

interface ListUsersRequest extends ListUsersInput {
  readonly listingKey: string;
  readonly token: string;
}

/** ListUsersRequest: authorization_model_id, object, relation, user_filters, contextual_tuples, context, consistency, and the page fields. */
const listUsers = endpoint<ListUsersRequest>({
  name: 'ListUsers',
  op: 'list-users',
  method: 'post',
  path: '/stores/:store_id/list-users',
  minRevision: true,
  parse(req) {
    const id = storeId(req.params.store_id, 'ListUsersRequest');
    const body = bodyObject(req);
    const model = modelId(body, 'ListUsersRequest');
    const o = optMessage(body, 'object');
    if (!o) throw violation('ListUsersRequest', 'Object', REASON.required);
    const object = {
      type: match(str(o, 'type'), P.type, 'Object', 'Type'),
      id: match(str(o, 'id'), P.objectId, 'Object', 'Id'),
    };
    const relation = match(str(body, 'relation'), P.relation, 'ListUsersRequest', 'Relation');
    const filters = list(body, 'user_filters');
    if (filters.length !== 1) throw violation('ListUsersRequest', 'UserFilters', REASON.exactlyOne);
    const userFilters = filters.map(userFilter);
    const contextual = tupleKeyList(
      body,
      'contextual_tuples',
      'ListUsersRequest',
      'ContextualTuples',
      MAX_CONTEXTUAL_TUPLES,
    );
    const context = struct(body, 'context');
    const page = listPage(body, 'ListUsersRequest');
    const key = page
      ? listingKey('list-users', [model ?? '', object, relation, userFilters, contextual, context ?? null])
      : '';
    return {
      storeId: id,
      modelId: model,
      object,
      relation,
      userFilters,
      contextualTuples: contextual,
      context,
      consistency: consistency(body, 'ListUsersRequest'),
      minRevision: minRevision(req.minRevision),
      at: pastPoint(body, req.atRevision),
      page: page ? { size: page.size } : undefined,
      listingKey: key,
      token: page?.token ?? '',
    };
  },
  async handle(input, ctx) {
    const q = withCursor(input, cursorOf(ctx, 'list-users', input.storeId, input.listingKey, input.token));
    const r = await ctx.latch.listUsers(q);
    ctx.modelId = r.modelId;
    if (r.atRevision !== undefined) ctx.revision = r.atRevision;
    const d = ctx.decisions;
    if (d?.active) d.listUsers(clientOf(ctx), q, r);
    if (!input.page) return ok({ users: r.users });
    const token =
      r.next === undefined
        ? ''
        : ctx.tokens.encode('list-users', { storeId: input.storeId, filter: input.listingKey, cursor: r.next });
    if (!r.userKeys) return ok({ users: r.users, continuation_token: token });
    // `users` read only when something encodes the body (msgpack, or a key JSON must escape):
    // the JSON reply is rendered from the keys, with no object per user.
    const body = {
      get users(): unknown {
        return r.users;
      },
      continuation_token: token,
    };
    return { status: 200, body, json: userPageJson(r.userKeys, token) };
  },
});

export const QUERY_ENDPOINTS: readonly Endpoint[] = [
  check,
  batchCheck,
  expand,
  listObjects,
  streamedListObjects,
  listUsers,
];
