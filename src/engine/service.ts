// The service: every API operation in-process (the `Latch` interface of ./types.ts), joining
// storage, compiled models, per-store indexes, the walker and the TypeScript evaluator.
// Writes are applied to the index before they are acknowledged (queued per store on this node
// unless the datastore orders them itself: PostgreSQL), so a query on this node that starts
// after an acknowledged write sees it. Changes committed by other nodes over a shared datastore reach the indexes through the Follower
// (./follower.ts); HIGHER_CONSISTENCY and Latch-Min-Revision queries wait for the revision they
// need. The result cache is keyed by index snapshot, so it is never staler than its snapshot.

import type {
  Assertion,
  AuthorizationModel,
  AuthorizationModelInput,
  Store,
  Tuple,
  TupleChange,
} from '../domain/types.js';
import { AppError, fail } from '../errors.js';
import { validateModel } from '../model/validate.js';
import type { Page, PageRequest, PostgresOpenOptions, Storage, WriteResult } from '../storage/types.js';
import { openStorage } from '../storage/index.js';
import { Follower } from './follower.js';
import { type EngineLog, Indexes } from './indexes.js';
import { ModelCache } from './models.js';
import { Queries } from './queries.js';
import { pastQueries, type PastQueries } from './history/past-queries.js';
import { allocatedBytes } from '../index/memory.js';
import { checkDepths, type EngineStats, Timings } from './stats.js';
import { checkExpiries, validateCheckKey, validateWrite } from './request-validation.js';
import { ExpirySweeper } from './sweeper.js';
import { watchChanges, type WatchEvent, type WatchInput } from './watch.js';
import { matching } from './delete-filter.js';
import { type CreatePermissionIndex, PermissionIndexes } from './permission-index/manager.js';
import { DEFAULT_LIMITS, type PermissionIndex } from './permission-index/permission-index.js';
import { expansionStream, type ExpansionStreamEvent, type ExpansionsInput } from './permission-index/stream.js';
import { logger } from '../log.js';
import {
  DEFAULT_ENGINE_CONFIG,
  type BatchCheckInput,
  type BatchCheckResult,
  type CheckIdsInput,
  type CheckIdsResult,
  type CheckInput,
  type CheckResult,
  type DeleteTuplesInput,
  type DeleteTuplesOutput,
  type EngineConfig,
  type CheckExplanation,
  type ExpandInput,
  type ExpandResult,
  type Latch,
  type ListObjectsInput,
  type ListObjectsResult,
  type ListUsersInput,
  type ListUsersResult,
  type PermissionIndexInfo,
  type QueryBase,
  type ReadChangesInput,
  type ReadInput,
  type WriteInput,
  type WriteOutput,
} from './types.js';

export interface LatchOptions {
  /** LevelDB directory; omitted → in-memory store. */
  readonly path?: string | undefined;
  /** PostgreSQL instead (docs/configuration.md); takes precedence over `path`. */
  readonly postgres?: PostgresOpenOptions | undefined;
  /** An already opened storage (the service closes it); takes precedence over both. */
  readonly storage?: Storage | undefined;
  readonly config?: Partial<EngineConfig> | undefined;
  /** Where failures no caller waits for are reported (background checkpoints); default: process warnings. */
  readonly log?: EngineLog | undefined;
  /**
   * The clock of tuple expiry in ms since the epoch (default `Date.now`): what "now" is for
   * `expires_at` on writes, on every query path and for the sweeper. Tests inject one.
   */
  readonly clock?: (() => number) | undefined;
  /** Milliseconds between two background passes of the expiry sweeper (default 1,000; 0: only `sweepExpired()`). */
  readonly expirySweepMs?: number | undefined;
}

/** Opens storage and returns a ready-to-use service; indexes load in the background (see `ready`). */
export async function openLatch(options: LatchOptions = {}): Promise<Latch> {
  const storage = options.storage ?? (await openStorage({ path: options.path, postgres: options.postgres }));
  return new LatchService(storage, { ...DEFAULT_ENGINE_CONFIG, ...options.config }, options.log, options);
}

/** Without a configured log: the process logger (src/log.ts). */
const engineWarning: EngineLog = (level, msg, fields) => logger.log(level, msg, fields);

export class LatchService implements Latch {
  private readonly models: ModelCache;
  private readonly indexes: Indexes;
  private readonly queries: Queries;
  /** Queries with `at` (./history/). */
  private readonly past: PastQueries;
  private readonly follower: Follower;
  private readonly permissionIndexes: PermissionIndexes;
  private readonly writeLocks = new Map<string, Promise<unknown>>();
  private readonly loading: Promise<void>;
  /** Storage commit latency of writes. */
  private readonly writeTimings = new Timings();
  private readonly clock: () => number;
  private readonly sweeper: ExpirySweeper;
  private readonly log: EngineLog;
  private closing = false;
  /** Ends the preload's backoff wait at once (close). */
  private wakeLoader: (() => void) | undefined;

  constructor(
    private readonly storage: Storage,
    readonly config: EngineConfig,
    log?: EngineLog,
    options: Pick<LatchOptions, 'clock' | 'expirySweepMs'> = {},
  ) {
    this.clock = options.clock ?? Date.now;
    this.log = log ?? engineWarning;
    this.models = new ModelCache(storage);
    this.indexes = new Indexes(storage, { log });
    this.follower = new Follower(storage, this.indexes, this.models, {
      pollIntervalMs: config.pollIntervalMs,
      log: this.log,
    });
    this.permissionIndexes = new PermissionIndexes(
      storage,
      this.indexes,
      this.models,
      { ...DEFAULT_LIMITS, resolveDepth: config.resolveDepth, ...config.permissionIndex },
      this.log,
    );
    this.follower.observer = this.permissionIndexes;
    this.indexes.onLoaded = (storeId, index) => this.follower.loaded(storeId, index);
    this.queries = new Queries(this.models, this.indexes, config, this.follower, this.clock);
    this.past = pastQueries(storage, this.models, this.indexes, this.follower, () => this.queries.walker, config);
    this.loading = this.preload();
    this.sweeper = new ExpirySweeper({
      storage,
      indexes: this.indexes,
      serialized: (storeId, fn) => this.serialized(storeId, fn),
      applied: (storeId, index, result) => this.follower.applyLocal(storeId, index, result),
      now: this.clock,
      onError: (err) => (log ?? engineWarning)('error', 'expiry sweep failed', { error: String(err) }),
    });
    this.sweeper.start(options.expirySweepMs ?? 1000);
  }

  /** One pass of the expiry sweeper now (the background one runs every `expirySweepMs`); resolves with the tuples deleted. */
  async sweepExpired(): Promise<number> {
    await this.loading;
    return this.sweeper.sweep();
  }

  /**
   * Loads every store's index. A failure (the datastore unreachable, a pool exhausted) never
   * rejects: it is logged and retried with backoff (0.25 s doubling to 5 s) until it succeeds or
   * the service closes; meanwhile queries on a store not loaded yet try the load themselves and
   * get its error (503 `unavailable` when the datastore is down), and readiness waits.
   */
  private async preload(): Promise<void> {
    let after: string | undefined;
    do {
      const page = await this.retrying('store list', () => this.storage.listStores({ pageSize: 100, after }));
      if (!page) return;
      for (const s of page.items) {
        const loaded = await this.retrying(`store ${s.id}`, () =>
          this.indexes.get(s.id).catch((err: unknown) => {
            if (err instanceof AppError && err.code === 'store_id_not_found') return undefined; // deleted meanwhile
            throw err;
          }),
        );
        if (loaded === null) return;
        if (loaded !== undefined)
          await this.permissionIndexes
            .loadStore(s.id)
            .catch((err: unknown) =>
              this.log('warn', 'permission indexes not started', { store_id: s.id, cause: String(err) }),
            );
      }
      after = page.next;
    } while (after);
  }

  /** `fn`'s result, retried with backoff after each failure; null once the service closes. */
  private async retrying<T>(what: string, fn: () => Promise<T>): Promise<T | null> {
    for (let wait = 250; ; wait = Math.min(5000, wait * 2)) {
      if (this.closing) return null;
      try {
        return await fn();
      } catch (err) {
        if (this.closing) return null;
        this.log('warn', 'index load failed; retrying', {
          what,
          retry_in_ms: wait,
          cause: err instanceof Error ? err.message : String(err),
        });
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          this.wakeLoader = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wakeLoader = undefined;
      }
    }
  }

  ready(): Promise<void> {
    return this.loading;
  }

  stats(): EngineStats {
    return {
      ...this.queries.stats(),
      indexes: { ...this.indexes.totals(), loads: this.indexes.loads, checkpoints: this.indexes.checkpoints },
      replication: this.follower.stats,
      sharedMemoryBytes: allocatedBytes(),
      writes: this.writeTimings,
      checkDepth: checkDepths,
    };
  }

  async close(): Promise<void> {
    await this.sweeper.stop();
    this.closing = true;
    this.wakeLoader?.();
    await this.loading.catch(() => undefined);
    await Promise.allSettled([...this.writeLocks.values()]);
    this.follower.close();
    await this.follower.settled();
    await this.permissionIndexes.close();
    await this.queries.close();
    await this.indexes.close();
    await this.storage.close();
  }

  // ---- stores ----

  createStore(name: string): Promise<Store> {
    return this.storage.createStore(name);
  }

  async getStore(storeId: string): Promise<Store> {
    const store = await this.storage.getStore(storeId);
    if (!store) throw fail.storeNotFound();
    return store;
  }

  listStores(query: PageRequest & { name?: string | undefined }): Promise<Page<Store>> {
    return this.storage.listStores(query);
  }

  async deleteStore(storeId: string): Promise<void> {
    if (!(await this.storage.deleteStore(storeId))) throw fail.storeNotFound();
    this.follower.dropStore(storeId);
    this.queries.forgetStore(storeId);
    this.past.forgetStore(storeId);
    this.permissionIndexes.dropStore(storeId);
  }

  // ---- models ----

  async writeModel(storeId: string, model: AuthorizationModelInput): Promise<string> {
    await this.getStore(storeId);
    const valid = validateModel(model);
    const stored = await this.storage.writeModel(storeId, valid);
    this.models.noteWritten(storeId, stored);
    return stored.id;
  }

  async readModel(storeId: string, modelId: string): Promise<AuthorizationModel> {
    await this.getStore(storeId);
    return (await this.models.resolve(storeId, modelId)).json;
  }

  async listModels(storeId: string, page: PageRequest): Promise<Page<AuthorizationModel>> {
    await this.getStore(storeId);
    return this.storage.listModels(storeId, page);
  }

  // ---- assertions ----

  async readAssertions(storeId: string, modelId: string): Promise<Assertion[]> {
    await this.getStore(storeId);
    await this.models.resolve(storeId, modelId);
    return this.storage.readAssertions(storeId, modelId);
  }

  async writeAssertions(storeId: string, modelId: string, assertions: readonly Assertion[]): Promise<void> {
    await this.getStore(storeId);
    const model = await this.models.resolve(storeId, modelId);
    for (const a of assertions) validateCheckKey(model, a.tuple_key);
    await this.storage.writeAssertions(storeId, modelId, assertions);
  }

  // ---- tuples ----

  async write(input: WriteInput): Promise<WriteOutput> {
    // A loaded index means a known store (a deletion drops it); one deleted meanwhile on another
    // node fails in the storage write with the same store_id_not_found.
    await this.knownStore(input.storeId);
    const model = await this.models.resolve(input.storeId, input.modelId);
    validateWrite(model, input.writes, input.deletes, this.config.maxTuplesPerWrite);
    checkExpiries(input.writes, this.clock());
    const index = await this.indexes.get(input.storeId);
    const commit = async (): Promise<WriteResult> => {
      const t0 = performance.now();
      const res = await this.storage.writeTuples(input.storeId, {
        writes: input.writes,
        deletes: input.deletes,
        onDuplicate: input.onDuplicate,
        onMissing: input.onMissing,
      });
      this.writeTimings.observe(performance.now() - t0);
      await this.follower.applyLocal(input.storeId, index, res);
      return res;
    };
    // A datastore that orders a store's writes itself takes several at once: the follower applies
    // their revisions in order whichever answer comes first (applyLocal catches up from the log).
    const result = this.storage.ordersWrites ? await commit() : await this.serialized(input.storeId, commit);
    return {
      modelId: model.id,
      revision: result.revision,
      written: result.written.length,
      deleted: result.deleted.length,
    };
  }

  /**
   * Reads and deletes under the store's write lock: no write of this service lands between the
   * two, and deleting a tuple that vanished meanwhile (another node) is skipped, not an error.
   */
  async deleteTuples(input: DeleteTuplesInput): Promise<DeleteTuplesOutput> {
    const { storeId } = input;
    await this.getStore(storeId);
    if (input.dryRun) {
      const found = await matching(this.storage, storeId, input.filter, input.limit);
      return { tuples: found.keys, more: found.more, revision: await this.storage.revision(storeId) };
    }
    const index = await this.indexes.get(storeId);
    return this.serialized(storeId, async () => {
      const found = await matching(this.storage, storeId, input.filter, input.limit);
      if (found.keys.length === 0) return { tuples: [], more: false, revision: await this.storage.revision(storeId) };
      const t0 = performance.now();
      const res = await this.storage.writeTuples(storeId, {
        writes: [],
        deletes: found.keys,
        onDuplicate: 'error',
        onMissing: 'ignore',
      });
      this.writeTimings.observe(performance.now() - t0);
      // Through the follower: another node may have committed a revision in between.
      await this.follower.applyLocal(storeId, index, res);
      return { tuples: res.deleted, more: found.more, revision: res.revision };
    });
  }

  async read(input: ReadInput): Promise<Page<Tuple>> {
    await this.getStore(input.storeId);
    return this.storage.readTuples(input.storeId, input.filter, input);
  }

  async readChanges(input: ReadChangesInput): Promise<Page<TupleChange>> {
    await this.getStore(input.storeId);
    return this.storage.readChanges(input.storeId, input);
  }

  async *watch(input: WatchInput, signal?: AbortSignal): AsyncIterable<WatchEvent> {
    await this.getStore(input.storeId);
    yield* watchChanges(this.storage, input, signal);
  }

  // ---- permission indexes ----

  async createPermissionIndex(input: CreatePermissionIndex): Promise<PermissionIndexInfo> {
    await this.getStore(input.storeId);
    return describe(await this.permissionIndexes.create(input));
  }

  async listPermissionIndexes(storeId: string): Promise<PermissionIndexInfo[]> {
    await this.getStore(storeId);
    return (await this.permissionIndexes.list(storeId)).map(describe);
  }

  async getPermissionIndex(storeId: string, indexId: string): Promise<PermissionIndexInfo> {
    await this.getStore(storeId);
    return describe(await this.permissionIndexes.get(storeId, indexId));
  }

  async deletePermissionIndex(storeId: string, indexId: string): Promise<void> {
    await this.getStore(storeId);
    await this.permissionIndexes.delete(storeId, indexId);
  }

  async *expansions(input: ExpansionsInput, signal?: AbortSignal): AsyncIterable<ExpansionStreamEvent> {
    await this.getStore(input.storeId);
    const pi = await this.permissionIndexes.get(input.storeId, input.indexId);
    yield* expansionStream(pi, input, () => this.permissionIndexes.stillDefined(input.storeId, input.indexId), signal);
  }

  // ---- queries ----

  async check(input: CheckInput): Promise<CheckResult> {
    this.contextualLimit(input.contextualTuples.length);
    // The warm case answers without awaiting the model and the index (two promise turns, about a
    // third of an embedded Check); checkSync declines whenever something must be loaded or awaited.
    if (input.at) return this.past.check(input, input.at);
    const warm = this.queries.checkSync(input);
    if (warm) return warm;
    // knownStore inlined: one async frame less on the hottest call.
    if (!this.indexes.has(input.storeId)) await this.getStore(input.storeId);
    return this.queries.check(input);
  }

  /** Check answered synchronously on a warm store and model; undefined → call `check`. */
  checkSync(input: CheckInput): CheckResult | undefined {
    this.contextualLimit(input.contextualTuples.length);
    if (input.at) return undefined;
    return this.queries.checkSync(input); // undefined unless the store's index and the model are at hand
  }

  async checkIds(input: CheckIdsInput): Promise<CheckIdsResult> {
    await this.knownStore(input.storeId);
    return this.queries.checkIds(input);
  }

  async batchCheck(input: BatchCheckInput): Promise<BatchCheckResult> {
    for (const c of input.checks) this.contextualLimit(c.contextualTuples.length);
    await this.knownStore(input.storeId);
    if (input.at) return this.past.batchCheck(input, input.at);
    return this.queries.batchCheck(input);
  }

  async listObjects(input: ListObjectsInput): Promise<ListObjectsResult> {
    await this.admit(input);
    if (input.at) return this.past.listObjects(input, input.at);
    return this.queries.listObjects(input);
  }

  async *streamedListObjects(input: ListObjectsInput, signal?: AbortSignal): AsyncIterable<string> {
    await this.admit(input);
    if (input.at) return yield* this.past.streamedListObjects(input, input.at, signal);
    yield* this.queries.streamedListObjects(input, signal);
  }

  async listUsers(input: ListUsersInput): Promise<ListUsersResult> {
    await this.admit(input);
    if (input.at) return this.past.listUsers(input, input.at);
    return this.queries.listUsers(input);
  }

  async expand(input: ExpandInput): Promise<ExpandResult> {
    await this.admit(input);
    if (input.at) return this.past.expand(input, input.at);
    return this.queries.expand(input);
  }

  async explainCheck(input: CheckInput): Promise<CheckExplanation> {
    await this.admit(input);
    if (input.at) return this.past.explainCheck(input, input.at);
    return this.queries.explainCheck(input);
  }

  /** A query's store exists and its contextual tuples are within the configured limit. */
  private async admit(input: QueryBase): Promise<void> {
    this.contextualLimit(input.contextualTuples.length);
    await this.knownStore(input.storeId);
  }

  /** The configured contextual-tuple limit (the API edge already caps it at the proto's 100). */
  private contextualLimit(n: number): void {
    const max = this.config.maxContextualTuples;
    if (n > max)
      throw new AppError(
        'validation_error',
        `invalid ContextualTupleKeys.TupleKeys: value must contain no more than ${max} item(s)`,
      );
  }

  /**
   * Resolves when every catch-up running now has ended and the indexes hold each store's
   * committed revision as of this call (tests and tools: a replica that has caught up).
   */
  async caughtUp(): Promise<void> {
    await this.follower.poll();
    await this.follower.settled();
  }

  /** Queries skip the storage round trip when the store's index is already loaded. */
  private async knownStore(storeId: string): Promise<void> {
    if (this.indexes.has(storeId)) return;
    await this.getStore(storeId);
  }

  /** Runs `fn` after every earlier write to the same store has settled (commit order = revision order). */
  private serialized<T>(storeId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.writeLocks.get(storeId) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.writeLocks.set(storeId, settled);
    void settled.then(() => {
      if (this.writeLocks.get(storeId) === settled) this.writeLocks.delete(storeId);
    });
    return next;
  }
}

function describe(pi: PermissionIndex): PermissionIndexInfo {
  return {
    record: pi.record,
    status: pi.status,
    reason: pi.reason,
    revision: pi.revision,
    freshness: pi.freshness,
    updatedAt: pi.updatedAt,
    expansions: pi.triples,
    ingestedChanges: pi.ingestedChanges,
    events: pi.eventsCount,
  };
}

export { AppError };
