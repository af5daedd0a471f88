// The engine's contract: the `Latch` interface (every operation of the API, in-process, on
// validated inputs) and every input and output type as plain data. The HTTP layer, the msgpack
// channel, the CLI and embedders (`import { openLatch } from 'latch'`) all call this one
// interface. Inputs have passed shape validation (patterns, lengths, counts) at the edge; the
// engine does every model-dependent validation and throws AppError with the per-API codes of
// docs/reference/semantics.md Appendix A.3. This module imports only src/domain and src/errors.

import type {
  Assertion,
  AuthorizationModel,
  AuthorizationModelInput,
  Consistency,
  IndexedRelation,
  JsonObject,
  Page,
  PageRequest,
  PermissionIndexRecord,
  Store,
  Tuple,
  TupleChange,
  TupleFilter,
  TupleKey,
} from '../domain/types.js';
import type { AppError } from '../errors.js';

/** A permission index as GetIndex describes it (docs/permission-indexes.md). */
export interface PermissionIndexInfo {
  readonly record: PermissionIndexRecord;
  readonly status: PermissionIndexStatus;
  /** Why the index FAILED. */
  readonly reason?: string | undefined;
  /** The store revision the index reflects, and when it reached it (ms). */
  readonly revision: number;
  readonly freshness: number;
  readonly updatedAt: number;
  /** Materialised triples now. */
  readonly expansions: number;
  /** Tuple changes that reached the index's relations, and the events they produced. */
  readonly ingestedChanges: number;
  readonly events: number;
}

export interface CheckTupleKey {
  readonly user: string;
  readonly relation: string;
  readonly object: string;
}

/** Fields shared by every query. `modelId` omitted → the store's latest model. */
export interface QueryBase {
  readonly storeId: string;
  readonly modelId?: string | undefined;
  /** Validated like writes (docs/reference/semantics.md §4.2), duplicates accepted; at most 100. */
  readonly contextualTuples: readonly TupleKey[];
  readonly context?: JsonObject | undefined;
  readonly consistency: Consistency;
  /**
   * Latch-Min-Revision: answer from an index that has applied at least this store revision
   * (a `Latch-Revision` of a Write), waiting for it until the query's deadline.
   */
  readonly minRevision?: number | undefined;
  /**
   * Date.now() ms past which the query answers 422 throttled_timeout_error; absent: now plus the
   * configured deadline. A request that runs several queries gives them one (AuthZEN evaluations).
   */
  readonly deadline?: number | undefined;
  /** Evaluate at this point of the store's history instead of now (docs/audit.md); absent → now. */
  readonly at?: PastPoint | undefined;
}

/**
 * A point in a store's history (latch extension, docs/audit.md): a revision (`at_revision`, the
 * `Latch-At-Revision` header), evaluated at its commit time; or an instant (`at_time`, ms since
 * the epoch), evaluated at the revision current then and at that instant. Example: writes at
 * 10:00 (revision 1) and 10:05 (revision 2): `{time: 10:03}` reads revision 1 with tuple expiry
 * judged at 10:03; `{revision: 1}` reads it with expiry judged at 10:00.
 */
export type PastPoint = { readonly revision: number } | { readonly time: number };

/** What a query at a past point reports with its answer: the revision it read. */
export interface AtRevision {
  /** Set only for queries with `at`: the revision the answer reflects. */
  readonly atRevision?: number | undefined;
}

export interface CheckInput extends QueryBase {
  readonly tupleKey: CheckTupleKey;
}

export interface CheckResult extends AtRevision {
  readonly allowed: boolean;
  /** The resolved model id (for the Openfga-Authorization-Model-Id header). */
  readonly modelId: string;
}

export interface BatchCheckItem {
  readonly correlationId: string;
  readonly tupleKey: CheckTupleKey;
  readonly contextualTuples: readonly TupleKey[];
  readonly context?: JsonObject | undefined;
}

export interface BatchCheckInput {
  readonly storeId: string;
  readonly modelId?: string | undefined;
  readonly checks: readonly BatchCheckItem[];
  readonly consistency: Consistency;
  /** As QueryBase.minRevision. */
  readonly minRevision?: number | undefined;
  /** As QueryBase.deadline. */
  readonly deadline?: number | undefined;
  /** As QueryBase.at: every item is evaluated at this point. */
  readonly at?: PastPoint | undefined;
}

export type BatchCheckOutcome = { readonly allowed: boolean } | { readonly error: AppError };

export interface BatchCheckResult extends AtRevision {
  readonly modelId: string;
  /** correlationId → outcome; one entry per input item. */
  readonly results: ReadonlyMap<string, BatchCheckOutcome>;
}

/**
 * A caller-owned table of strings that `checkIds` triples index into (a channel connection's
 * dictionary). Strings are only ever appended: index `i` names the same string for the table's
 * life, so the engine may cache what it resolved an index to (per table, model and index).
 */
export interface StringTable {
  readonly strings: readonly string[];
}

/**
 * Many checks given as (object, relation, user) indices into `table`, 3 u32 per check. Each check
 * is validated and answered exactly as a Check request with that tuple key would be; `context`
 * applies to every check; contextual tuples are not part of this form.
 */
export interface CheckIdsInput {
  readonly storeId: string;
  readonly modelId?: string | undefined;
  readonly consistency: Consistency;
  /** As QueryBase.minRevision. */
  readonly minRevision?: number | undefined;
  readonly context?: JsonObject | undefined;
  readonly table: StringTable;
  /** Check i is (triples[3i], triples[3i+1], triples[3i+2]) = (object, relation, user). */
  readonly triples: Uint32Array;
  /**
   * Checks already answered by the caller (its own validation): `outcomes[i] === CHECK_ERROR`
   * on input skips check i. Every other byte is overwritten.
   */
  readonly outcomes: Uint8Array;
  /** Errors of the checks the caller failed; the engine adds its own. */
  readonly errors: Map<number, AppError>;
}

export const CHECK_DENIED = 0;
export const CHECK_ALLOWED = 1;
export const CHECK_ERROR = 2;

export interface CheckIdsResult {
  readonly modelId: string;
}

/**
 * A complete listing in pages (docs/reference/decisions.md D15 extension): at most `size` results (1..1000) after the cursor
 * `after` (the `next` of the previous page), in ascending order of their string form, each
 * accessible in the store's state when the page is served (evaluation/list/pages.ts).
 */
export interface ListPageRequest {
  readonly size: number;
  readonly after?: string | undefined;
}

export interface ListObjectsInput extends QueryBase {
  readonly type: string;
  readonly relation: string;
  readonly user: string;
  /** Absent: OpenFGA's behaviour (unordered, at most listObjectsMaxResults, partial at the deadline). */
  readonly page?: ListPageRequest | undefined;
}

export interface ListObjectsResult extends AtRevision {
  readonly objects: string[];
  readonly modelId: string;
  /** Paged requests only: the cursor after this page's last object; absent when it was the last page. */
  readonly next?: string | undefined;
}

export interface UserFilter {
  readonly type: string;
  readonly relation?: string | undefined;
}

export interface ListUsersInput extends QueryBase {
  readonly object: { readonly type: string; readonly id: string };
  readonly relation: string;
  readonly userFilters: readonly UserFilter[];
  /** Absent: OpenFGA's behaviour. Cursors are users' string forms (`user:anne`, `team:x#member`, `user:*`). */
  readonly page?: ListPageRequest | undefined;
}

/** Exactly one key set, as OpenFGA returns it. */
export type ListedUser =
  | { readonly object: { readonly type: string; readonly id: string } }
  | { readonly userset: { readonly type: string; readonly id: string; readonly relation: string } }
  | { readonly wildcard: { readonly type: string } };

export interface ListUsersResult extends AtRevision {
  readonly users: ListedUser[];
  readonly modelId: string;
  /** Paged requests only: the cursor after this page's last user; absent when it was the last page. */
  readonly next?: string | undefined;
}

export interface ExpandInput extends Omit<QueryBase, 'context'> {
  readonly object: string;
  readonly relation: string;
}

/** Expand's tree, exactly the JSON shape of docs/reference/semantics.md §6.4. */
export interface UsersetTreeNode {
  readonly name: string;
  readonly leaf?: {
    readonly users?: { readonly users: string[] };
    readonly computed?: { readonly userset: string };
    readonly tupleToUserset?: { readonly tupleset: string; readonly computed: { readonly userset: string }[] };
  };
  readonly union?: { readonly nodes: UsersetTreeNode[] };
  readonly intersection?: { readonly nodes: UsersetTreeNode[] };
  readonly difference?: { readonly base: UsersetTreeNode; readonly subtract: UsersetTreeNode };
}

/**
 * A Check explained by the reference evaluator (debugging extension, docs/playground.md): the
 * answer and the trace of every relation, rewrite and tuple it looked at.
 */
export interface CheckExplanation extends AtRevision {
  readonly allowed: boolean;
  readonly modelId: string;
  readonly tree: TraceNode;
  /** Trace nodes left out past the trace's size limit (0 when the trace is complete). */
  readonly truncated: number;
}

export interface ExpandResult extends AtRevision {
  readonly tree: { readonly root: UsersetTreeNode };
  readonly modelId: string;
}

export interface WriteInput {
  readonly storeId: string;
  readonly modelId?: string | undefined;
  readonly writes: readonly TupleKey[];
  readonly deletes: readonly TupleKey[];
  readonly onDuplicate: 'error' | 'ignore';
  readonly onMissing: 'error' | 'ignore';
}

export interface WriteOutput {
  readonly modelId: string;
  /** The store's revision once this write is applied (the `Latch-Revision` header). */
  readonly revision: number;
  /** Tuples actually written and deleted (ignored duplicates and missing deletes are not counted). */
  readonly written: number;
  readonly deleted: number;
}

export interface ReadInput extends PageRequest {
  readonly storeId: string;
  readonly filter: TupleFilter;
  readonly consistency: Consistency;
  /** Accepted for symmetry with the queries: Read always reads the datastore, fresh by nature. */
  readonly minRevision?: number | undefined;
}

export interface ReadChangesInput extends PageRequest {
  readonly storeId: string;
  readonly type?: string | undefined;
  readonly startTime?: string | undefined;
}

/** What delete-by-filter selects; at least one field is set (the API edge checks it). */
export interface DeleteTuplesFilter {
  /** Every object of this type (`document`). */
  readonly objectType?: string | undefined;
  /** One object (`document:roadmap`); its type equals `objectType` when both are set. */
  readonly object?: string | undefined;
  readonly relation?: string | undefined;
  /** One user string exactly as stored: `user:anne`, `group:eng#member`, `user:*`. */
  readonly user?: string | undefined;
}

export interface DeleteTuplesInput {
  readonly storeId: string;
  readonly filter: DeleteTuplesFilter;
  /** Only report what would go; nothing is written. */
  readonly dryRun: boolean;
  /** At most this many tuples go in this request (1 … MAX_DELETE_BY_FILTER). */
  readonly limit: number;
}

export interface DeleteTuplesOutput {
  /** The tuples deleted (or, on a dry run, that would be), in the store's Read order. */
  readonly tuples: readonly TupleKey[];
  /** More tuples matched than `limit`: another request deletes the next ones. */
  readonly more: boolean;
  /** The store's revision after the request (unchanged on a dry run or when nothing matched). */
  readonly revision: number;
}

export interface Latch {
  // stores
  createStore(name: string): Promise<Store>;
  /** Throws store_id_not_found. */
  getStore(storeId: string): Promise<Store>;
  listStores(query: PageRequest & { name?: string | undefined }): Promise<Page<Store>>;
  /** Throws store_id_not_found. */
  deleteStore(storeId: string): Promise<void>;

  // models
  /** Validates (400 with the codes of docs/reference/decisions.md D5), stores, compiles; returns the new model id. */
  writeModel(storeId: string, model: AuthorizationModelInput): Promise<string>;
  /** Throws authorization_model_not_found. */
  readModel(storeId: string, modelId: string): Promise<AuthorizationModel>;
  listModels(storeId: string, page: PageRequest): Promise<Page<AuthorizationModel>>;
  /**
   * The impact of an unwritten candidate model on the store's current tuples (the ImpactLine order below,
   * docs/changing-models.md). Rejects before the first line with a model write's 400 codes for an
   * invalid candidate, 2001 / 2020 for the base model; the lines stop when `signal` aborts.
   */
  impact(input: ImpactInput, signal?: AbortSignal): Promise<ImpactStream>;

  // assertions
  readAssertions(storeId: string, modelId: string): Promise<Assertion[]>;
  writeAssertions(storeId: string, modelId: string, assertions: readonly Assertion[]): Promise<void>;

  // tuples
  write(input: WriteInput): Promise<WriteOutput>;
  read(input: ReadInput): Promise<Page<Tuple>>;
  readChanges(input: ReadChangesInput): Promise<Page<TupleChange>>;
  /**
   * The store's changes from a cursor or a start time, then live ones as they commit, with
   * heartbeats (commands/watch.ts). Throws store_id_not_found before the first event for an unknown
   * store, and mid-stream when the store is deleted. Ends when `signal` aborts.
   */
  watch(input: WatchInput, signal?: AbortSignal): AsyncIterable<WatchEvent>;

  // permission indexes (docs/permission-indexes.md)
  /** Stores the definition and starts building (BUILDING); 400 validation_error for a relation that cannot be indexed. */
  createPermissionIndex(input: CreatePermissionIndex): Promise<PermissionIndexInfo>;
  /** Every index of the store in creation order. */
  listPermissionIndexes(storeId: string): Promise<PermissionIndexInfo[]>;
  /** 404 index_id_not_found for an unknown index. */
  getPermissionIndex(storeId: string, indexId: string): Promise<PermissionIndexInfo>;
  deletePermissionIndex(storeId: string, indexId: string): Promise<void>;
  /**
   * Resolves once every index of the store has maintained every revision this node's tuple index
   * had applied when it was called (the indexes follow writes asynchronously).
   */
  permissionIndexesCaughtUp(storeId: string): Promise<void>;
  /** ReadExpansions: the current set, then live events (permission-index/stream.ts). */
  expansions(input: ExpansionsInput, signal?: AbortSignal): AsyncIterable<ExpansionStreamEvent>;
  /**
   * Deletes up to `limit` tuples matching the filter in one atomic write (one revision, one
   * change-log entry per tuple); `dryRun` only lists them. Throws store_id_not_found.
   */
  deleteTuples(input: DeleteTuplesInput): Promise<DeleteTuplesOutput>;

  // queries
  check(input: CheckInput): Promise<CheckResult>;
  /**
   * The same Check without a promise when the store's index and the model are already loaded;
   * undefined when they are not (then call `check`). Throws what `check` would reject with.
   */
  checkSync(input: CheckInput): CheckResult | undefined;
  batchCheck(input: BatchCheckInput): Promise<BatchCheckResult>;
  /** Bulk Check on interned strings: fills `input.outcomes` (CHECK_*) and `input.errors`. */
  checkIds(input: CheckIdsInput): Promise<CheckIdsResult>;
  /** With `input.page`: one page of the complete, ordered listing (422 throttled_timeout_error when it cannot finish in time). */
  listObjects(input: ListObjectsInput): Promise<ListObjectsResult>;
  /**
   * Objects as they are found; ends at the deadline; an evaluation error is thrown mid-stream.
   * With `input.page`: the complete listing's objects after the cursor, in order, at most `size`.
   */
  streamedListObjects(input: ListObjectsInput, signal?: AbortSignal): AsyncIterable<string>;
  listUsers(input: ListUsersInput): Promise<ListUsersResult>;
  expand(input: ExpandInput): Promise<ExpandResult>;
  /** Check on the reference evaluator with its trace (a debugging tool, not the hot path). */
  explainCheck(input: CheckInput): Promise<CheckExplanation>;

  /** The limits this service runs with (the API edge enforces some of them, e.g. BatchCheck items). */
  readonly config: EngineConfig;
  /** Resolves when every store's index is loaded (readiness); at once when opened with `preload: false`. */
  ready(): Promise<void>;
  /**
   * Loads the store's index (and starts its permission indexes) and keeps it: placement's "this
   * node holds the store". Rejects like a query would (store_id_not_found, unavailable).
   */
  holdStore(storeId: string): Promise<void>;
  /** Drops the store's index and permission indexes (placement moved it away); a later query loads it again. */
  releaseStore(storeId: string): void;
  /** The stores whose index is loaded, with their tuples and bytes of index. */
  heldStores(): HeldStore[];
  /**
   * One pass of the expiry sweeper now: deletes every stored tuple whose `expires_at` has passed,
   * each deletion in the changelog; resolves with how many. A background pass runs anyway.
   */
  sweepExpired(): Promise<number>;
  /** Operator figures (cache, pool, indexes, write latency); cheap enough for every metrics scrape. */
  stats(): EngineStats;
  close(): Promise<void>;
}

/** Engine limits; every field has the OpenFGA default. */
/** A loaded store as `heldStores` reports it. */
export interface HeldStore {
  readonly storeId: string;
  readonly tuples: number;
  readonly bytes: number;
}

export interface EngineConfig {
  readonly resolveDepth: number; // 25
  readonly listObjectsMaxResults: number; // 1000
  readonly listObjectsDeadlineMs: number; // 3000
  readonly listUsersMaxResults: number; // 1000
  readonly listUsersDeadlineMs: number; // 3000
  /** A paged (complete) ListObjects / ListUsers must compute its whole answer within this; else 422 (docs/reference/decisions.md D8). */
  readonly listPageDeadlineMs: number; // 30000 (latch extension)
  readonly checkDeadlineMs: number; // 3000
  readonly maxBatchCheckItems: number; // 50
  readonly maxContextualTuples: number; // 100
  readonly maxTuplesPerWrite: number; // 100
  readonly workers: number; // 0 = inline only
  readonly cacheSize: number; // result cache entries, 0 = off
  readonly pollIntervalMs: number; // replication poll of the committed revisions, 0 = events only
  /** Permission index bounds (ring of events, build time, triples, lag); defaults in config.ts. */
  readonly permissionIndex?: Partial<PermissionIndexLimits> | undefined;
  /** Bounds of queries at a past revision (docs/audit.md); defaults in config.ts. */
  readonly history?: Partial<HistoryLimits> | undefined;
}

// ---- Permission indexes (docs/permission-indexes.md) ----

export type PermissionIndexStatus = 'BUILDING' | 'ACTIVE' | 'FAILED';

export interface ExpansionEvent {
  readonly revision: number;
  readonly position: number;
  readonly operation: 'INSERT' | 'DELETE';
  readonly user: string;
  readonly relation: string;
  readonly object: string;
}

/** A point of the event sequence: everything at or before (revision, position) was delivered. */
export interface EventPoint {
  readonly revision: number;
  /** `Infinity`: the whole revision. */
  readonly position: number;
}

/** Bounds of queries at a past revision (docs/audit.md). */
export interface HistoryLimits {
  /** Changes one past view may undo (its memory: ≈ 200 B per change while it is built). */
  readonly maxUndo: number;
  /** Past views kept for reuse (each holds its overlay image and the base it was built over). */
  readonly cachedViews: number;
}

export interface PermissionIndexLimits {
  /** Events kept for resumption; a `from` older than the oldest is refused. */
  readonly ringSize: number;
  /** A build that takes longer fails (ms). */
  readonly buildMs: number;
  /** An index that would hold more triples fails. */
  readonly maxTriples: number;
  readonly resolveDepth: number;
  /**
   * Tuple changes a store's indexes may lag behind its tuple index: past it, a local write waits
   * for the maintenance before it is acknowledged (the bound on the lag and on its memory).
   */
  readonly maxLagChanges: number;
}

export type ExpansionStreamEvent =
  /** `snapshot`: the entry's number in the initial set (its id is not a resume point). */
  | { readonly kind: 'expansion'; readonly event: ExpansionEvent; readonly snapshot?: number | undefined }
  | { readonly kind: 'freshness'; readonly revision: number; readonly at: number }
  | { readonly kind: 'heartbeat' }
  | { readonly kind: 'closed'; readonly reason: string };

export interface ExpansionsInput {
  readonly storeId: string;
  readonly indexId: string;
  /** The model the client expects: it must be the index's. */
  readonly modelId: string;
  /** Resume right after this point; undefined → the whole current set first. */
  readonly from?: EventPoint | undefined;
  readonly heartbeatMs: number;
  /** The stream closes after this long (the client reconnects with `from`). */
  readonly lifetimeMs: number;
}

export interface CreatePermissionIndex {
  readonly storeId: string;
  readonly name: string;
  readonly relations: readonly IndexedRelation[];
  /** Undefined → the store's latest model. */
  readonly modelId?: string | undefined;
}

// ---- Watch ----

export interface WatchInput {
  readonly storeId: string;
  /** Only changes whose object type equals this. */
  readonly type?: string | undefined;
  /** A storage cursor: the stream starts right after it. Takes precedence over `startTime`. */
  readonly after?: string | undefined;
  /** RFC 3339: the stream starts at the first change at or after this time. */
  readonly startTime?: string | undefined;
  /** A heartbeat after this long without a change (ms). */
  readonly heartbeatMs: number;
}

export type WatchEvent =
  | { readonly kind: 'change'; readonly change: TupleChange; readonly cursor: string }
  /**
   * The first event of every stream, then one after each `heartbeatMs` without a change.
   * `cursor`: where the stream stands; undefined while no change was read since a start at the
   * beginning or at a start time (resume the same way).
   */
  | { readonly kind: 'heartbeat'; readonly cursor: string | undefined };

// ---- ExplainCheck trace ----

export type TraceKind =
  'relation' | 'direct' | 'computed' | 'ttu' | 'union' | 'intersection' | 'exclusion' | 'tuple' | 'pruned' | 'cycle';

export type TraceOutcome = 'allowed' | 'denied' | 'cycle' | 'error';

export interface TraceNode {
  kind: TraceKind;
  /** `object#relation` for a relation, the rewrite in DSL words for an operator, `object#relation@user` for a tuple. */
  label: string;
  outcome: TraceOutcome;
  error?: string;
  children?: TraceNode[];
}

// ---- Operator figures (Latch.stats) ----

/** Replication figures for `stats()`: revisions applied from the log, catch-ups that failed, polls. */
export interface ReplicationStats {
  revisionsApplied: number;
  /** Of those, the revisions applied from the changes their commit event carried (no log read). */
  revisionsCarried: number;
  /**
   * Commit event received → that revision applied to the index from the log (commits of other
   * nodes): this node's own share of the replication lag, free of network and client time.
   */
  readonly applyLag: Histogram;
  catchUpFailures: number;
  polls: number;
  pollFailures: number;
}

/** The pool's scheduling figures, as Piscina reports them (ms, since start). */
export interface PoolStats {
  readonly workers: number;
  /** Tasks waiting for a worker now. */
  readonly queueSize: number;
  readonly completed: number;
  /** Share of the pool's capacity spent running tasks since it started, 0 … 1. */
  readonly utilization: number;
  readonly waitMs: { readonly mean: number; readonly p50: number; readonly p99: number; readonly max: number };
}

/** A fixed-bucket histogram: `counts[i]` observations in (bounds[i-1], bounds[i]], the last slot +Inf. */
export interface Histogram {
  readonly bounds: readonly number[];
  readonly counts: Float64Array;
  readonly sumMs: number;
  readonly count: number;
  /** The latest observation. */
  readonly last: number;
}

export interface EngineStats {
  /** The MINIMIZE_LATENCY Check result cache. */
  readonly cache: {
    readonly hits: number;
    readonly misses: number;
    readonly entries: number;
    readonly capacity: number;
  };
  /** Undefined until the first batch large enough for the pool started it. */
  readonly pool: PoolStats | undefined;
  readonly indexes: {
    readonly stores: number;
    /** Stored tuples across loaded indexes (base entries plus overlay adds, minus overlay deletes). */
    readonly tuples: number;
    /** Shared-memory bytes of the loaded indexes' bases. */
    readonly bytes: number;
    /** Time each store index took to load (checkpoint + change-log tail, or full scan). */
    readonly loads: Histogram;
    /** Index checkpoints written and failed since start (at load, in the background, at close). */
    readonly checkpoints: { readonly written: number; readonly failed: number };
  };
  /** Following the datastore (state/revision-feed.ts): revisions applied from the change log, failures, polls. */
  readonly replication: Readonly<ReplicationStats>;
  /** Bytes allocated in the walker's shared memory (indexes, overlays, scratch). */
  readonly sharedMemoryBytes: number;
  /** Storage commit latency of Write (the tuple batch, change log and revision). */
  readonly writes: Histogram;
  /** Resolution depth of the Checks answered inline (values in hops, not ms). */
  readonly checkDepth: Histogram;
}

/** Where the engine reports what no caller is waiting for (a failed background checkpoint). */
export type EngineLog = (level: 'warn' | 'error', msg: string, fields: Readonly<Record<string, unknown>>) => void;

// ---- the impact of a candidate model (docs/changing-models.md) ----
// Its validated input and the lines of
// its stream, each a plain JSON object with a `kind`, in this order: the structural lines (types,
// relations, conditions, context-dependent relations), the stored tuples the candidate no longer
// accepts, the access pairs (with progress lines), the assertions whose result changes, the summary.
// Example: `{kind:'gained', object:'document:1', relation:'viewer', user:'user:anne'}`.

export interface ImpactInput {
  readonly storeId: string;
  /** The candidate, shape-checked as a WriteAuthorizationModel body; validated by the service. */
  readonly candidate: AuthorizationModelInput;
  /** The model compared against; the store's latest when absent. */
  readonly baseModelId?: string | undefined;
  /** How many rejected tuples of each reason are listed (the count is always complete). */
  readonly sampleSize: number;
  /** Also run the base model's stored assertions against the candidate (`assertion` lines). */
  readonly assertions: boolean;
}

/** Why a stored tuple the base model reads is read differently under the candidate. */
export type RejectReason =
  | 'type_removed'
  | 'relation_removed'
  | 'restriction_removed'
  | 'condition_removed'
  | 'condition_required'
  | 'condition_changed';

export type RelationStatus = 'added' | 'removed' | 'changed' | 'unchanged';

/** One relation of either model, as the summary reports it. */
export interface RelationSummary {
  readonly object_type: string;
  readonly relation: string;
  /** Its own definition: added, removed, changed, or the same in both models. */
  readonly status: RelationStatus;
  /**
   * False when the relation and everything it reads (relations, restrictions, conditions) is the
   * same in both models: its answers cannot differ, so it was not evaluated.
   */
  readonly evaluated: boolean;
  /** Some tuple it reads may carry a condition: its answers depend on the request context. */
  readonly context_dependent: boolean;
  objects: number;
  gained: number;
  lost: number;
  undetermined: number;
}

export interface EvalError {
  readonly code: string;
  readonly message: string;
}

/** An assertion's outcome under one model. */
export type AssertionOutcome = { readonly allowed: boolean } | { readonly error: EvalError };

export type ImpactLine =
  | { readonly kind: 'type_added' | 'type_removed'; readonly type: string }
  | {
      readonly kind: 'relation_added' | 'relation_removed' | 'relation_changed';
      readonly object_type: string;
      readonly relation: string;
      readonly before?: string | undefined;
      readonly after?: string | undefined;
    }
  | { readonly kind: 'condition_added' | 'condition_removed' | 'condition_changed'; readonly condition: string }
  | {
      readonly kind: 'context_dependent';
      readonly object_type: string;
      readonly relation: string;
      /** The models in which the relation reads conditioned tuples. */
      readonly models: readonly ('base' | 'candidate')[];
    }
  | {
      readonly kind: 'rejected_tuples';
      readonly reason: RejectReason;
      readonly count: number;
      readonly sample: readonly TupleKey[];
    }
  | { readonly kind: 'progress'; readonly evaluated: number; readonly total: number }
  | {
      readonly kind: 'gained' | 'lost';
      readonly object: string;
      readonly relation: string;
      /** `user:anne` or a wildcard `user:*`; usersets are expanded to their members. */
      readonly user: string;
    }
  | {
      /** ListUsers fails under one model or both (a condition needs context, the depth limit). */
      readonly kind: 'undetermined';
      readonly object: string;
      readonly relation: string;
      readonly user_type: string;
      readonly base?: EvalError | undefined;
      readonly candidate?: EvalError | undefined;
    }
  | {
      readonly kind: 'assertion';
      readonly tuple_key: { readonly user: string; readonly relation: string; readonly object: string };
      readonly expectation: boolean;
      readonly base: AssertionOutcome;
      readonly candidate: AssertionOutcome;
      /** The candidate's answer equals the expectation. */
      readonly passes: boolean;
    }
  | {
      readonly kind: 'summary';
      readonly base_authorization_model_id: string;
      readonly revision: number;
      readonly gained: number;
      readonly lost: number;
      readonly undetermined: number;
      readonly rejected_tuples: number;
      readonly assertions_run: number;
      readonly assertions_changed: number;
      readonly relations: readonly RelationSummary[];
    };

/** What the service answers once the candidate validated and the base model resolved. */
export interface ImpactStream {
  readonly baseModelId: string;
  readonly lines: AsyncIterable<ImpactLine>;
}
