// Permission indexes (docs/reference/http-api.md §4.27–4.29, docs/permission-indexes.md): ListIndexes, GetIndex
// and the ReadExpansions stream in Okta FGA's shapes, and latch's CreateIndex / DeleteIndex
// (docs/reference/decisions.md D15: new endpoints under the store's path). ReadExpansions is framed like StreamedListObjects
// (§4.18): one `{"result": …}` line per event — `expansion`, `freshness`, `heartbeat`, `closed`.
// Event ids are `<index_id>.<revision>.<position>`; the initial set's entries are
// `<index_id>.<revision>.s<n>` and its closing freshness event `<index_id>.<revision>.e`.

import type { EventPoint, ExpansionStreamEvent, PermissionIndexInfo } from '../engine/contract.js';
import { AppError } from '../errors.js';
import { NO_CONTENT, endpoint, ok, type Endpoint } from './endpoint.js';
import { bodyObject, queryText } from './stores.js';
import { HEARTBEAT_MS } from './watch.js';
import { P, int32, isObj, list, match, pageSize, storeId, str, tokenText, typeError, violation } from './validate.js';

/** How long one ReadExpansions stream lives before it is closed (clients reconnect with `from`). */
const STREAM_LIFETIME_MS = { min: 1000, max: 86_400_000, default: 3_600_000 } as const;
/** Relations one index may hold. */
const MAX_RELATIONS = 20;

const iso = (ms: number): string => new Date(ms).toISOString();

function indexOut(i: PermissionIndexInfo): Record<string, unknown> {
  const r = i.record;
  return {
    index_id: r.id,
    name: r.name,
    status: i.status,
    ...(i.reason !== undefined ? { status_reason: i.reason } : {}),
    models: [{ model_id: r.modelId, assigned_at: r.createdAt }],
    relations: r.relations.map((x) => ({ object_type: x.object_type, relation: x.relation })),
    total_ingested_changes: i.ingestedChanges,
    expansions_count: i.expansions,
    expansions_events_count: i.events,
    expansion_factor: i.ingestedChanges === 0 ? 0 : Math.round((i.events / i.ingestedChanges) * 100) / 100,
    freshness: iso(i.freshness),
    revision: i.revision,
    created_at: r.createdAt,
    updated_at: iso(Math.max(i.updatedAt, Date.parse(r.createdAt))),
  };
}

function indexId(v: string | undefined, message: string): string {
  return match(v ?? '', P.ulid, message, 'IndexId');
}

// ---- from ----

const FROM = /^([0-9A-HJKMNP-TV-Z]{26})\.(\d{1,15})\.(\d{1,9}|e|s\d{1,12})$/;

/** A `from` cursor of index `id`: 400 validation_error when malformed, of another index, or an initial-set entry. */
function parseFrom(text: string, id: string): EventPoint | undefined {
  if (text === '') return undefined;
  const m = FROM.exec(text);
  if (!m)
    throw new AppError(
      'validation_error',
      `invalid from: '${text.slice(0, 80)}' is not an expansion event id (<index_id>.<revision>.<position>)`,
    );
  if (m[1] !== id)
    throw new AppError(
      'validation_error',
      `invalid from: the event id belongs to another index (${m[1] as string}), not ${id}`,
    );
  const pos = m[3] as string;
  if (pos.startsWith('s')) {
    throw new AppError(
      'validation_error',
      'invalid from: an entry of the initial set is not a resume point; resume from the freshness event that ends it, or restart without from',
    );
  }
  return { revision: Number(m[2]), position: pos === 'e' ? Infinity : Number(pos) };
}

function eventOut(id: string, e: ExpansionStreamEvent): unknown {
  switch (e.kind) {
    case 'expansion': {
      const x = e.event;
      const eid = `${id}.${x.revision}.${e.snapshot !== undefined ? `s${e.snapshot}` : x.position}`;
      return {
        expansion: {
          id: eid,
          operation: x.operation,
          user: x.user,
          relation: x.relation,
          object: x.object,
          revision: x.revision,
        },
      };
    }
    case 'freshness':
      return { freshness: { id: `${id}.${e.revision}.e`, revision: e.revision, timestamp: iso(e.at) } };
    case 'heartbeat':
      return { heartbeat: { timestamp: new Date().toISOString() } };
    case 'closed':
      return { closed: { reason: e.reason } };
  }
}

async function* render(id: string, events: AsyncIterable<ExpansionStreamEvent>): AsyncGenerator<unknown> {
  for await (const e of events) yield eventOut(id, e);
}

function bounded(v: unknown, field: string, range: { min: number; max: number; default: number }): number {
  const n = int32(v, field);
  if (n === undefined) return range.default;
  if (n < range.min || n > range.max)
    throw violation('ReadExpansionsRequest', field, `value must be inside range [${range.min}, ${range.max}]`);
  return n;
}

// ---- endpoints ----

interface ListInput {
  readonly storeId: string;
  readonly pageSize: number;
  readonly token: string;
}

const listIndexes = endpoint<ListInput>({
  name: 'ListIndexes',
  op: 'list-indexes',
  method: 'get',
  path: '/stores/:store_id/indexes',
  parse(req) {
    const store = storeId(req.params.store_id, 'ListIndexesRequest');
    const size =
      req.query('page_size') === undefined || req.query('page_size') === ''
        ? 10
        : pageSize(req.query('page_size'), 'ListIndexesRequest');
    return { storeId: store, pageSize: size, token: tokenText(req.query('continuation_token'), 'ListIndexesRequest') };
  },
  async handle(input, ctx) {
    const after = input.token ? ctx.tokens.decode('indexes', input.storeId, input.token).cursor : '';
    const all = await ctx.latch.listPermissionIndexes(input.storeId);
    const rest = all.filter((i) => i.record.id > after);
    const page = rest.slice(0, input.pageSize);
    const last = page[page.length - 1];
    const token =
      rest.length > input.pageSize && last
        ? ctx.tokens.encode('indexes', { storeId: input.storeId, filter: '', cursor: last.record.id })
        : '';
    return ok({ indexes: page.map(indexOut), continuation_token: token });
  },
});

interface IndexInput {
  readonly storeId: string;
  readonly indexId: string;
}

const getIndex = endpoint<IndexInput>({
  name: 'GetIndex',
  op: 'get-index',
  method: 'get',
  path: '/stores/:store_id/indexes/:index_id',
  parse(req) {
    return {
      storeId: storeId(req.params.store_id, 'GetIndexRequest'),
      indexId: indexId(req.params.index_id, 'GetIndexRequest'),
    };
  },
  async handle(input, ctx) {
    return ok(indexOut(await ctx.latch.getPermissionIndex(input.storeId, input.indexId)));
  },
});

const deleteIndex = endpoint<IndexInput>({
  name: 'DeleteIndex',
  op: 'delete-index',
  method: 'del',
  path: '/stores/:store_id/indexes/:index_id',
  parse(req) {
    return {
      storeId: storeId(req.params.store_id, 'DeleteIndexRequest'),
      indexId: indexId(req.params.index_id, 'DeleteIndexRequest'),
    };
  },
  async handle(input, ctx) {
    await ctx.latch.deletePermissionIndex(input.storeId, input.indexId);
    return NO_CONTENT;
  },
});

interface CreateInput {
  readonly storeId: string;
  readonly name: string;
  readonly relations: { object_type: string; relation: string }[];
  readonly modelId: string | undefined;
}

const createIndex = endpoint<CreateInput>({
  name: 'CreateIndex',
  op: 'create-index',
  method: 'post',
  path: '/stores/:store_id/indexes',
  parse(req) {
    const store = storeId(req.params.store_id, 'CreateIndexRequest');
    const body = bodyObject(req);
    const name = str(body, 'name');
    if (name.length < 1 || name.length > 256)
      throw violation('CreateIndexRequest', 'Name', 'value length must be between 1 and 256 runes, inclusive');
    const raw = list(body, 'relations');
    if (raw.length < 1 || raw.length > MAX_RELATIONS)
      throw violation(
        'CreateIndexRequest',
        'Relations',
        `value must contain between 1 and ${MAX_RELATIONS} items, inclusive`,
      );
    const relations = raw.map((r, i) => {
      if (!isObj(r)) throw typeError(`relations[${i}]`, 'message', r);
      return {
        object_type: match(str(r, 'object_type'), P.type, 'CreateIndexRequest', `Relations[${i}].ObjectType`),
        relation: match(str(r, 'relation'), P.relation, 'CreateIndexRequest', `Relations[${i}].Relation`),
      };
    });
    const seen = new Set(relations.map((r) => `${r.object_type}#${r.relation}`));
    if (seen.size !== relations.length)
      throw new AppError(
        'validation_error',
        'invalid CreateIndexRequest.Relations: each (object_type, relation) may appear once',
      );
    const model = str(body, 'authorization_model_id');
    return {
      storeId: store,
      name,
      relations,
      modelId: model === '' ? undefined : match(model, P.ulid, 'CreateIndexRequest', 'AuthorizationModelId'),
    };
  },
  async handle(input, ctx) {
    const info = await ctx.latch.createPermissionIndex(input);
    ctx.modelId = info.record.modelId;
    return ok(indexOut(info), 201);
  },
});

interface ExpansionsRequest extends IndexInput {
  readonly modelId: string;
  readonly from: string;
  readonly heartbeatMs: number;
  readonly lifetimeMs: number;
}

const readExpansions = endpoint<ExpansionsRequest>({
  name: 'ReadExpansions',
  op: 'read-expansions',
  method: 'get',
  path: '/stores/:store_id/indexes/:index_id/expansions',
  streaming: true,
  parse(req) {
    const store = storeId(req.params.store_id, 'ReadExpansionsRequest');
    const id = indexId(req.params.index_id, 'ReadExpansionsRequest');
    const model = queryText(req, 'authorization_model_id');
    if (model === '') throw violation('ReadExpansionsRequest', 'AuthorizationModelId', 'value is required');
    match(model, P.ulid, 'ReadExpansionsRequest', 'AuthorizationModelId');
    const from = queryText(req, 'from');
    parseFrom(from, id);
    return {
      storeId: store,
      indexId: id,
      modelId: model,
      from,
      heartbeatMs: bounded(req.query('heartbeat_ms'), 'heartbeat_ms', HEARTBEAT_MS),
      lifetimeMs: bounded(req.query('lifetime_ms'), 'lifetime_ms', STREAM_LIFETIME_MS),
    };
  },
  async handle(input, ctx) {
    const events = ctx.latch.expansions({ ...input, from: parseFrom(input.from, input.indexId) }, ctx.signal);
    // The first event is awaited here so that an unknown index, a model mismatch or a `from`
    // too old answers with its own status before the stream starts.
    const it = events[Symbol.asyncIterator]();
    const first = await it.next();
    async function* all(): AsyncGenerator<ExpansionStreamEvent> {
      if (!first.done) yield first.value;
      for (;;) {
        const next = await it.next();
        if (next.done) return;
        yield next.value;
      }
    }
    return { stream: render(input.indexId, all()), live: true };
  },
});

export const PERMISSION_INDEX_ENDPOINTS: readonly Endpoint[] = [
  listIndexes,
  getIndex,
  readExpansions,
  createIndex,
  deleteIndex,
];
