// Check answered inside an HTTP thread (`--http-threads`): the request's strings interned against
// the store's node table in shared memory, the walker (this thread's own wasm instance over the
// shared memory, as the Piscina workers run it) on the snapshot the main thread published on the
// threads' board (src/index/thread-board.ts), the model validated and the result cached here.
// Same answers, errors, revisions and cache rules as the main thread's Check
// (src/engine/commands/check.ts), because the same code validates, prepares and maps statuses.
//
// Declines (undefined: the caller forwards to the main thread) whatever needs the main thread:
// a store not on the board (not loaded yet, deleted, the board full) or forwarded (a shadow model
// samples its Checks), a model not fetched yet (fetched in the background for the next request),
// HIGHER_CONSISTENCY and a Latch-Min-Revision the published snapshot has not reached (the
// revision feed waits there), past revisions (`at`), contextual tuples, a request context, a
// store with expiring tuples (the expiry clock and epochs live with the dictionary there), and a
// walk that meets a tuple condition (the thread has no CEL evaluator: R_ERR_NEEDHOST, as a pool
// worker). BatchCheck goes the same way as a whole: every item here, or the batch forwarded.

import { WILDCARD_BIT } from '../../abi.js';
import type { AppError } from '../../errors.js';
import { checkItem } from '../../engine/commands/validate-request.js';
import type {
  BatchCheckInput,
  BatchCheckOutcome,
  BatchCheckResult,
  CheckInput,
  CheckResult,
  EngineConfig,
  ThreadModel,
} from '../../engine/contract.js';
import { overDeadline } from '../../engine/evaluation/walker/checker.js';
import { outcomeOf, WalkClock, type CheckItem, type CheckOutcome } from '../../engine/evaluation/walker/host.js';
import { CallState, prepare, Scratch, type WalkView } from '../../engine/evaluation/walker/request.js';
import { instantiate, type WalkerExports } from '../../engine/evaluation/walker/wasm.js';
import { ResultCache } from '../../engine/state/result-cache.js';
import { toAppError } from '../../errors.js';
import { memory, syncViews, u32, u8 } from '../../index/memory.js';
import { sharedNodeId, type SharedNodesAt } from '../../index/shared-nodes.js';
import { R } from '../../index/snapshot.js';
import { BoardReader } from '../../index/thread-board.js';
import { compileModel } from '../../model/compile.js';
import type { CompiledModel } from '../../model/types.js';
import { EXTRA_CACHE_ENTRIES, EXTRA_CACHE_HITS, EXTRA_CACHE_MISSES } from '../metrics-share.js';

/** What the main thread hands an HTTP thread for local Checks (plain data: cloned). */
export interface LocalCheckData {
  readonly board: SharedArrayBuffer;
  /** This thread's hazard word on the board. */
  readonly slot: number;
  readonly memory: WebAssembly.Memory;
  readonly module: WebAssembly.Module;
  /** A scratch area the main thread allocated for this thread. */
  readonly scratch: number;
}

/** A model as this thread runs it: compiled here, its program the main thread's. */
interface LocalModel {
  readonly id: string;
  readonly compiled: CompiledModel;
  readonly program: { readonly ptr: number; readonly kinds: ReadonlyMap<number, number> };
}

/** One store as this thread knows it. */
interface LocalStore {
  readonly slot: number;
  /** The slot's GEN when it was found: another value means the slot changed hands. */
  readonly gen: number;
  readonly names: Map<string, number>;
  readonly nameList: string[];
  readonly models: Map<string, LocalModel>;
  latest: LocalModel | undefined;
  /** The slot's MODELS word `latest` was fetched under. */
  latestGen: number;
  view: RecordView | undefined;
}

const NO_STRINGS: readonly string[] = [];

/** A published snapshot as the walker preparation reads it (`WalkView`), from its record's words. */
class RecordView implements WalkView {
  readonly record: number;
  readonly serial: number;
  readonly header: number;
  readonly revision: number;
  readonly nodeCount: number;
  readonly nameCount: number;
  readonly condCount = 0;
  readonly expiring: boolean;
  readonly dict: WalkView['dict'];
  private readonly at: SharedNodesAt;
  private readonly nodeTypes: number;
  private readonly wild = new Map<number, number>();

  constructor(record: number, store: LocalStore) {
    const w = u32();
    const r = record >>> 2;
    this.record = record;
    this.serial = w[r + R.SERIAL] as number;
    this.header = w[r + R.HEADER] as number;
    this.revision = (w[r + R.REV_LO] as number) + (w[r + R.REV_HI] as number) * 2 ** 32;
    this.nodeCount = w[r + R.NODE_COUNT] as number;
    this.nameCount = w[r + R.NAME_COUNT] as number;
    this.at = {
      words: w[r + R.TABLE] as number,
      mask: w[r + R.MASK] as number,
      spans: w[r + R.SPANS] as number,
    };
    this.nodeTypes = w[r + R.NODE_TYPE] as number;
    this.expiring = w[r + R.EXPIRING] !== 0;
    this.dict = { names: store.names, nameList: store.nameList, nodeList: NO_STRINGS, conds: [] };
  }

  nodeId(s: string): number | undefined {
    return sharedNodeId(u32(), u8(), this.at, s, this.nodeCount);
  }

  nameId(s: string): number | undefined {
    const id = this.dict.names.get(s);
    return id !== undefined && id < this.nameCount ? id : undefined;
  }

  wildcardOf(type: number): number {
    let n = this.wild.get(type);
    if (n === undefined) {
      n = this.nodeId(`${this.dict.nameList[type] ?? ''}:*`) ?? 0xffffffff;
      this.wild.set(type, n);
    }
    return n;
  }

  nodeType(n: number): number {
    return ((u32()[(this.nodeTypes >>> 2) + n] as number) & ~WILDCARD_BIT) >>> 0;
  }
}

/** How long a store found nowhere on the board, or a model fetch that failed, is not looked for again. */
const RETRY_MS = 100;
/** Models kept per store (a store cycling through more starts over). */
const MAX_MODELS = 64;

export class LocalChecker extends WalkClock {
  private readonly board: BoardReader;
  private readonly ex: WalkerExports;
  private readonly scratch: Scratch;
  private readonly state = new CallState();
  private readonly results: ResultCache;
  private readonly stores = new Map<string, LocalStore>();
  /** Stores (and store/model keys) not to look for until the time given (ms). */
  private readonly missing = new Map<string, number>();
  private readonly fetching = new Set<string>();
  /** Checks answered here and forwarded (tests and benchmarks read them). */
  answered = 0;
  declined = 0;

  constructor(
    data: LocalCheckData,
    private readonly config: EngineConfig,
    private readonly fetchModel: (storeId: string, modelId: string | undefined) => Promise<ThreadModel | undefined>,
    /** This thread's words of the metrics share (./metrics-share.ts): its result cache's counts go there. */
    private readonly counts?: Float64Array,
  ) {
    super();
    this.board = new BoardReader(data.board, data.slot);
    this.ex = instantiate(data.module, memory, {
      evalCondition: () => 3, // unavailable here: R_ERR_NEEDHOST, the main thread answers
      deadlinePassed: () => this.deadlinePassed(),
    });
    this.scratch = new Scratch(data.scratch);
    this.results = new ResultCache(config.cacheSize);
  }

  /** The Check answered here, or undefined: forward it. Throws what the main thread's Check would. */
  check(input: CheckInput): CheckResult | undefined {
    if (input.at || input.consistency === 'HIGHER_CONSISTENCY' || input.contextualTuples.length > 0 || input.context)
      return this.decline();
    const store = this.store(input.storeId);
    const model = store && this.model(input.storeId, store, input.modelId);
    if (!store || !model) return this.decline();
    const view = this.enter(store, input.minRevision);
    if (!view) return this.decline();
    try {
      const k = input.tupleKey;
      const scope = this.results.capacity > 0 ? ResultCache.scope(view, model.compiled, 0) : 0;
      let allowed = scope === 0 ? undefined : this.results.get(scope, k);
      if (allowed === undefined) {
        const item = checkItem(model.compiled, k, input);
        // As the main thread's warm path: the deadline counts from the walker's first clock read.
        this.budgetMs = input.deadline === undefined ? this.config.checkDeadlineMs : NaN;
        this.deadline = input.deadline ?? Infinity;
        let o: CheckOutcome | 'host';
        try {
          o = outcomeOf(this.walk(view, model, item), undefined);
        } finally {
          this.budgetMs = NaN;
        }
        if (o === 'host') return this.decline();
        if ('error' in o) throw this.timed(o).error;
        allowed = o.allowed;
        if (scope !== 0) this.results.set(scope, k, allowed);
      }
      this.tally();
      this.answered++;
      return { allowed, modelId: model.id, revision: view.revision, instant: 0 };
    } finally {
      this.board.leave();
    }
  }

  /** The BatchCheck answered here as a whole, or undefined: forward it. */
  batchCheck(input: BatchCheckInput): BatchCheckResult | undefined {
    if (input.at || input.consistency === 'HIGHER_CONSISTENCY') return this.decline();
    for (const c of input.checks) if (c.contextualTuples.length > 0 || c.context) return this.decline();
    const store = this.store(input.storeId);
    const model = store && this.model(input.storeId, store, input.modelId);
    if (!store || !model) return this.decline();
    const view = this.enter(store, input.minRevision);
    if (!view) return this.decline();
    try {
      const deadline = input.deadline ?? Date.now() + this.config.checkDeadlineMs;
      this.deadline = deadline;
      this.budgetMs = NaN;
      const results = new Map<string, BatchCheckOutcome>();
      let over = false;
      // One snapshot and model for the whole batch: one cache scope.
      const scope = this.results.capacity > 0 ? ResultCache.scope(view, model.compiled, 0) : 0;
      for (const c of input.checks) {
        const cached = scope === 0 ? undefined : this.results.get(scope, c.tupleKey);
        if (cached !== undefined) {
          results.set(c.correlationId, { allowed: cached });
          continue;
        }
        let item: CheckItem;
        try {
          item = checkItem(model.compiled, c.tupleKey, c);
        } catch (err) {
          results.set(c.correlationId, { error: toAppError(err) });
          continue;
        }
        if (over) {
          results.set(c.correlationId, { error: overDeadline() });
          continue;
        }
        const o = outcomeOf(this.walk(view, model, item), undefined);
        if (o === 'host') return this.decline();
        if ('error' in o && o.error.code === 'throttled_timeout_error' && Date.now() > deadline) {
          over = true;
          results.set(c.correlationId, { error: overDeadline() });
          continue;
        }
        results.set(c.correlationId, o);
        if (scope !== 0 && 'allowed' in o) this.results.set(scope, c.tupleKey, o.allowed);
      }
      this.tally();
      this.answered++;
      return { modelId: model.id, results, revision: view.revision, instant: 0 };
    } finally {
      this.deadline = Infinity;
      this.board.leave();
    }
  }

  /** The result cache's counts, where a scrape on any thread reads them. */
  private tally(): void {
    const c = this.counts;
    if (!c) return;
    c[EXTRA_CACHE_HITS] = this.results.hits;
    c[EXTRA_CACHE_MISSES] = this.results.misses;
    c[EXTRA_CACHE_ENTRIES] = this.results.size;
  }

  private decline(): undefined {
    this.declined++;
    return undefined;
  }

  /** A walk that gave up once the deadline had passed is the deadline's error (as on the main thread). */
  private timed(o: { error: AppError }): { error: AppError } {
    return o.error.code === 'throttled_timeout_error' && Date.now() > this.deadline ? { error: overDeadline() } : o;
  }

  /** The walker's raw status for one validated request on `view`. */
  private walk(view: RecordView, model: LocalModel, item: CheckItem): number {
    this.scratch.bind(view, model.program, this.config.resolveDepth, 0);
    this.state.snapshot = view;
    prepare(this.scratch, this.state, item, model.program);
    return this.ex.check(this.scratch.ctx);
  }

  /**
   * The store's current snapshot, entered (this thread's hazard set: call `board.leave()` after),
   * or undefined (nothing entered) when the store must be forwarded or the snapshot is older than
   * `minRevision`.
   */
  private enter(store: LocalStore, minRevision: number | undefined): RecordView | undefined {
    const board = this.board;
    const record = board.enter(store.slot);
    // Checked after entering: a record read before the slot changed hands is still this store's.
    if (record === 0 || board.gen(store.slot) !== store.gen || board.forwarded(store.slot)) {
      board.leave();
      if (record === 0 || board.gen(store.slot) !== store.gen) this.forget(store);
      return undefined;
    }
    syncViews(board.memoryBytes);
    let view = store.view;
    // The address alone is not enough: a released record's block is reused for a later one.
    if (view?.record !== record || view.serial !== u32()[(record >>> 2) + R.SERIAL])
      store.view = view = new RecordView(record, store);
    if (view.expiring || (minRevision !== undefined && view.revision < minRevision)) {
      board.leave();
      return undefined;
    }
    return view;
  }

  private forget(store: LocalStore): void {
    for (const [id, s] of this.stores) if (s === store) this.stores.delete(id);
  }

  /** The store as this thread knows it, found on the board on first use. */
  private store(storeId: string): LocalStore | undefined {
    const hit = this.stores.get(storeId);
    if (hit) return hit;
    const until = this.missing.get(storeId);
    if (until !== undefined && Date.now() < until) return undefined;
    const board = this.board;
    const slot = board.find(storeId);
    const gen = slot < 0 ? 0 : board.gen(slot);
    // Found, then its GEN read: the slot still names the store, or a later GEN tells at use.
    if (slot < 0 || board.find(storeId) !== slot) {
      this.miss(storeId);
      return undefined;
    }
    const store: LocalStore = {
      slot,
      gen,
      names: new Map(),
      nameList: [],
      models: new Map(),
      latest: undefined,
      latestGen: -1,
      view: undefined,
    };
    this.stores.set(storeId, store);
    return store;
  }

  private miss(key: string): void {
    if (this.missing.size >= 4096) this.missing.clear();
    this.missing.set(key, Date.now() + RETRY_MS);
  }

  /** The model to run, or undefined while it is fetched from the main thread. */
  private model(storeId: string, store: LocalStore, modelId: string | undefined): LocalModel | undefined {
    if (modelId) {
      const m = store.models.get(modelId);
      if (m) return m;
    } else if (store.latest && store.latestGen === this.board.models(store.slot)) return store.latest;
    this.fetch(storeId, store, modelId);
    return undefined;
  }

  private fetch(storeId: string, store: LocalStore, modelId: string | undefined): void {
    const key = `${storeId}/${modelId ?? ''}`;
    if (this.fetching.has(key)) return;
    const until = this.missing.get(key);
    if (until !== undefined && Date.now() < until) return;
    this.fetching.add(key);
    // Read before asking: a move of "latest" meanwhile leaves the answer marked stale.
    const gen = this.board.models(store.slot);
    this.fetchModel(storeId, modelId).then(
      (m) => {
        this.fetching.delete(key);
        if (!m) return this.miss(key);
        // Names are append-only: a longer list extends the one known.
        for (let i = store.nameList.length; i < m.names.length; i++) {
          const name = m.names[i] as string;
          store.nameList.push(name);
          store.names.set(name, i);
        }
        const local: LocalModel = store.models.get(m.modelId) ?? {
          id: m.modelId,
          compiled: compileModel(m.json),
          program: { ptr: m.program, kinds: new Map(m.kinds) },
        };
        if (store.models.size >= MAX_MODELS) store.models.clear();
        store.models.set(local.id, local);
        if (!modelId) {
          store.latest = local;
          store.latestGen = gen;
        }
      },
      () => {
        this.fetching.delete(key);
        this.miss(key);
      },
    );
  }
}
