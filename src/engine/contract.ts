// The engine's contract: the `Latch` interface (every operation of the API, in-process, on
// validated inputs) and every input and output type as plain data. The HTTP layer, the msgpack
// channel, the CLI and embedders (`import { openLatch } from 'latch'`) all call this one
// interface. Inputs have passed shape validation (patterns, lengths, counts) at the edge; the
// engine does every model-dependent validation and throws AppError with the per-API codes of
// docs/reference/semantics.md Appendix A.3. The types live by role in contract/ (queries, tuples,
// permission indexes, impact, shadow, operations) and are re-exported here, so callers import this one
// module. The contract imports only src/domain, src/errors and its own parts.

import type {
  Assertion,
  AuthorizationModel,
  AuthorizationModelInput,
  Page,
  PageRequest,
  ShadowSetting,
  Store,
  Tuple,
  TupleChange,
} from '../domain/types.js';
import type {
  CheckInput,
  CheckResult,
  BatchCheckInput,
  BatchCheckResult,
  CheckIdsInput,
  CheckIdsResult,
  ThreadModel,
  ListObjectsInput,
  ListObjectsResult,
  ListUsersInput,
  ListUsersResult,
  ExpandInput,
  CheckExplanation,
  ExpandResult,
  StreamEvaluated,
} from './contract/queries.js';
import type {
  WriteInput,
  WriteOutput,
  ReadInput,
  ReadChangesInput,
  DeleteTuplesInput,
  DeleteTuplesOutput,
  WatchInput,
  WatchEvent,
  ImportTuplesInput,
  ImportTuplesOutput,
  ExportTuplesInput,
  ExportBatch,
} from './contract/tuples.js';
import type {
  PermissionIndexInfo,
  ExpansionStreamEvent,
  ExpansionsInput,
  CreatePermissionIndex,
} from './contract/permission-indexes.js';
import type { EngineConfig, EngineStats, HeldStore } from './contract/operations.js';
import type { ImpactInput, ImpactStream, MigrateInput, MigrateOutput } from './contract/impact.js';
import type { ShadowInput, ShadowReport } from './contract/shadow.js';

export * from './contract/queries.js';
export * from './contract/tuples.js';
export * from './contract/permission-indexes.js';
export * from './contract/operations.js';
export * from './contract/impact.js';
export * from './contract/shadow.js';

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
  /**
   * Attaches a written model to the store as its shadow (docs/changing-models.md): from now on a
   * `sampling` share of Check, BatchCheck items and ListObjects is evaluated under it as well, off
   * the request's path, and each disagreement is counted and recorded. Persisted: every node and a
   * restart read it. Throws store_id_not_found, shadow_model_not_found (404) for an unknown model.
   */
  setShadow(input: ShadowInput): Promise<ShadowSetting>;
  /** The store's shadow setting as stored; undefined when none is set. */
  getShadow(storeId: string): Promise<ShadowSetting | undefined>;
  /** Removes the shadow: no request is evaluated under it any more (the record stays readable). */
  clearShadow(storeId: string): Promise<void>;
  /** This node's counts and recent disagreements of the store's shadow evaluation. */
  shadowReport(storeId: string): Promise<ShadowReport>;

  // assertions
  readAssertions(storeId: string, modelId: string): Promise<Assertion[]>;
  writeAssertions(storeId: string, modelId: string, assertions: readonly Assertion[]): Promise<void>;

  // tuples
  write(input: WriteInput): Promise<WriteOutput>;
  /** One bounded step of a relation migration (latch extension; docs/changing-models.md). */
  migrateRelations(input: MigrateInput): Promise<MigrateOutput>;
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
  /**
   * One chunk of a bulk import (ImportTuplesInput): validated like Write (a bad tuple rejects the
   * chunk, its 0-based index in the error's `tuple_index`), then one atomic write through the
   * store writer. Throws store_id_not_found.
   */
  importTuples(input: ImportTuplesInput): Promise<ImportTuplesOutput>;
  /**
   * Every tuple of the store at one revision, in batches, read from one storage snapshot. Throws
   * store_id_not_found before the first batch; stops when `signal` aborts.
   */
  exportTuples(input: ExportTuplesInput, signal?: AbortSignal): AsyncIterable<ExportBatch>;

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
  /**
   * For the HTTP threads (`--http-threads`): the model `modelId` (or the latest) of a store served
   * from the threads' board, with its walker program; undefined when the store is not on a board.
   * Only an engine opened with a board has it.
   */
  threadModel?(storeId: string, modelId: string | undefined): Promise<ThreadModel | undefined>;
  /** With `input.page`: one page of the complete, ordered listing (422 throttled_timeout_error when it cannot finish in time). */
  listObjects(input: ListObjectsInput): Promise<ListObjectsResult>;
  /**
   * Objects as they are found; ends at the deadline; an evaluation error is thrown mid-stream.
   * With `input.page`: the complete listing's objects after the cursor, in order, at most `size`.
   */
  streamedListObjects(
    input: ListObjectsInput,
    signal?: AbortSignal,
    evaluated?: StreamEvaluated,
  ): AsyncIterable<string>;
  /**
   * `streamedListObjects` as batches (the objects found per ≈ 5 ms of walking, one array each),
   * for a transport that renders a batch per step instead of taking an async step per object.
   * Only the in-process engine has it.
   */
  streamedListObjectBatches?(
    input: ListObjectsInput,
    signal?: AbortSignal,
    evaluated?: StreamEvaluated,
  ): AsyncIterable<readonly string[]>;
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
