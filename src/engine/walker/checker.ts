// The Check entry point the service calls: maps requests onto the walker (inline on this thread
// or batched onto the worker pool) and walker statuses onto outcomes and AppErrors.
//
// Example: checkInline(snapshot, model, {object:'doc:1', relation:'viewer', user:'user:anne',
// contextualTuples: []}) → {allowed: true} when `doc:1#viewer@user:anne` is stored and valid.

import type { JsonObject, TupleKey } from '../../domain/types.js';
import { AppError, fail } from '../../errors.js';
import type { CompiledModel } from '../../model/types.js';
import { C, QUERY_WORDS, R_ERR_BUDGET, R_ERR_COND, R_ERR_DEPTH, R_ERR_NEEDHOST, R_ERR_OVERFLOW, R_TRUE, SR_MASK } from '../../abi.js';
import type { IndexSnapshot } from '../../index/store-index.js';
import { memory, u32 } from '../../index/memory.js';
import { type Confirmation, type Confirmer, type NodeIds } from '../list/list-objects.js';
import { referenceConfirmer } from '../list/confirm.js';
import { CallState, prepare, Scratch } from './request.js';
import { programFor, type Program } from './program.js';
import { instantiate, setConditionHook, setDeadline, walkerModule, type WalkerExports } from './wasm.js';
import { CheckPool } from '../pool/pool.js';
import { checkDepths, type PoolStats } from '../stats.js';

export interface CheckItem {
  object: string;
  relation: string;
  user: string;
  contextualTuples: readonly TupleKey[];
  context?: JsonObject;
}

export type CheckOutcome = { allowed: boolean } | { error: AppError };

export interface WalkerChecker {
  /** Many checks against one snapshot; large batches run on the worker pool. Order preserved. */
  check(snapshot: IndexSnapshot, model: CompiledModel, items: readonly CheckItem[], deadline?: number): Promise<CheckOutcome[]>;
  /**
   * One check on this thread (cheapest for a single request: no task hop). `deadline`
   * (`Date.now()` ms, both methods): past it a walk gives up within ≈ 4 ms and the item answers
   * 422 throttled_timeout_error (D8), as does every inline item after it; pool items are bounded
   * by the step budget only.
   */
  checkInline(snapshot: IndexSnapshot, model: CompiledModel, item: CheckItem, deadline?: number): CheckOutcome;
  /**
   * Pre-interned query records (QUERY_WORDS u32 each, no contextual tuples or temporary ids) against
   * one snapshot, `context` applying to every record's conditions. Order preserved; large runs go
   * to the pool and the records it cannot finish (conditions) are re-run on this thread.
   */
  checkIds(snapshot: IndexSnapshot, model: CompiledModel, queries: Uint32Array, context: JsonObject | undefined, deadline?: number): Promise<CheckOutcome[]>;
  /** The pool's figures; undefined until a batch large enough for the pool started it. */
  poolStats(): PoolStats | undefined;
  close(): Promise<void>;
}

export interface WalkerCheckerOptions {
  workers: number;
  resolveDepth: number;
  /** Batches smaller than this run inline (default 4096: below it a task hop costs more than it saves). */
  poolThreshold?: number;
}

const ALLOWED: CheckOutcome = Object.freeze({ allowed: true });
const DENIED: CheckOutcome = Object.freeze({ allowed: false });

/** The main thread's walker instance, scratch and condition hook. */
class InlineWalker {
  readonly ex: WalkerExports = instantiate(walkerModule(), memory);
  readonly scratch = new Scratch();
  private readonly state = new CallState();
  private active = false;
  private model: CompiledModel | undefined;
  private lastModel: CompiledModel | undefined;
  private lastSnapshot: IndexSnapshot | undefined;
  private lastProgram: Program | undefined;
  private readonly condCache = new Map<number, number>();
  firstError: string | undefined;

  constructor() {
    setConditionHook((cond, _h, obj, rel, subj, sr) => this.evalCondition(cond, obj, rel, subj, sr));
  }

  private evalCondition(cond: number, obj: number, rel: number, subj: number, sr: number): number {
    const hit = this.condCache.get(cond);
    if (hit !== undefined && hit !== 2) return hit;
    const st = this.state;
    const b = this.active ? st.binding(cond) : undefined;
    const cc = b ? this.model?.conditions.get(b.name) : undefined;
    if (!b || !cc) return 2;
    // The tuple text only appears in error messages: evaluate without it, and build it only to
    // re-evaluate a failure (the outcome never depends on the text).
    let out = cc.evaluate(b.context, st.context, '');
    if (!out.ok && this.firstError === undefined) {
      const names = st.snapshot.dict.nameList;
      const user = st.nodeString(subj) + ((sr & SR_MASK) === 0 ? '' : `#${names[sr - 1] ?? ''}`);
      out = cc.evaluate(b.context, st.context, `${st.nodeString(obj)}#${names[rel] ?? ''}@${user}`);
      if (!out.ok) this.firstError = out.message;
    }
    const r = out.ok ? (out.value ? 1 : 0) : 2;
    this.condCache.set(cond, r);
    return r;
  }

  /** The session whose request is prepared in the scratch right now (undefined after a `run`). */
  private owner: WalkerSession | undefined;

  run(snapshot: IndexSnapshot, model: CompiledModel, item: CheckItem, depth: number): CheckOutcome {
    this.owner = undefined;
    this.open(snapshot, model, item, depth);
    this.active = true;
    try {
      const status = this.ex.check(this.scratch.ctx);
      checkDepths.observe(this.ex.lastDepth.value);
      return toOutcome(status, this.firstError);
    } finally {
      this.active = false;
    }
  }

  /**
   * Raw R_* statuses of the pre-interned records `from … from+count-1` of `queries` into `out`.
   * One scratch binding for the run (records carry no contextual tuples or temporary ids); the
   * condition cache spans the run, its results depending only on the binding and the one context.
   * `firstError` afterwards is the first condition failure of the run (run one record for its own).
   */
  runIds(snapshot: IndexSnapshot, model: CompiledModel, queries: Uint32Array, from: number, count: number, depth: number, context: JsonObject | undefined, out: Uint8Array): void {
    this.owner = undefined;
    this.bind(snapshot, model, depth);
    this.state.reset(snapshot, this.scratch, context);
    this.model = model;
    if (this.condCache.size > 0) this.condCache.clear();
    this.firstError = undefined;
    this.active = true;
    const c = this.scratch.ctx >>> 2;
    try {
      for (let i = from; i < from + count; i++) {
        const m = u32();
        const o = i * QUERY_WORDS;
        m[c + C.OBJECT] = queries[o] as number;
        m[c + C.RELATION] = queries[o + 1] as number;
        m[c + C.SUBJECT] = queries[o + 2] as number;
        m[c + C.SUBJ_REL] = queries[o + 3] as number;
        m[c + C.WILD_NODE] = queries[o + 4] as number;
        m[c + C.SUBJ_KIND] = queries[o + 5] as number;
        out[i] = this.ex.check(this.scratch.ctx);
      }
    } finally {
      this.active = false;
    }
  }

  /** Binds the scratch to `snapshot` and `model`'s program (compiled once per model and snapshot). */
  private bind(snapshot: IndexSnapshot, model: CompiledModel, depth: number): void {
    if (model !== this.lastModel || snapshot !== this.lastSnapshot) {
      this.lastProgram = programFor(model, snapshot.dict);
      this.lastModel = model;
      this.lastSnapshot = snapshot;
    }
    this.scratch.bind(snapshot, this.lastProgram as Program, depth);
    this.state.snapshot = snapshot;
  }

  /** Writes `item` into the scratch (ids, contextual records) and resets the per-request state. */
  private open(snapshot: IndexSnapshot, model: CompiledModel, item: CheckItem, depth: number): void {
    this.bind(snapshot, model, depth);
    this.model = model;
    if (this.condCache.size > 0) this.condCache.clear();
    this.firstError = undefined;
    prepare(this.scratch, this.state, item, this.lastProgram as Program);
  }

  /**
   * Check of (obj, rel) for a session's request: re-prepares the scratch when another call used
   * it in between (a streamed list resumes after other requests ran), which re-assigns the same
   * temporary ids (preparation is deterministic).
   */
  checkIds(s: WalkerSession, obj: number, rel: number): number {
    this.own(s);
    const c = this.scratch.ctx >>> 2;
    const m = u32();
    m[c + C.OBJECT] = obj;
    m[c + C.RELATION] = rel;
    this.active = true;
    try {
      return this.ex.check(this.scratch.ctx);
    } finally {
      this.active = false;
    }
  }

  /** Prepares the scratch for session `s` unless it is prepared for it already. */
  private own(s: WalkerSession): void {
    if (this.owner === s) return;
    this.open(s.snapshot, s.model, s.item, s.depth);
    this.owner = s;
  }

  /** Node id of a string as the prepared request sees it (UNSEEN_NODE for strings it never mentions). */
  nodeIds(s: WalkerSession): NodeIds {
    return {
      id: (str: string): number => {
        this.own(s);
        return this.state.node(str, false);
      },
      str: (id: number): string => (id < s.snapshot.nodeCount ? s.snapshot.nodeOf(id) : s.tempString(id)),
    };
  }

  get conditionMessage(): string | undefined {
    return this.firstError;
  }

  tempNodes(): readonly string[] {
    return this.state.tempNodes;
  }
}

/**
 * Many Checks of one request (user, contextual tuples, context) on the inline walker, by object
 * id: ListObjects confirms its candidates here. Synchronous use only between two awaits; a session
 * survives other calls in between (it re-prepares).
 */
export class WalkerSession implements Confirmer {
  readonly ids: NodeIds;
  private readonly temps: readonly string[];
  private readonly walker: InlineWalker;

  constructor(
    readonly snapshot: IndexSnapshot,
    readonly model: CompiledModel,
    readonly item: CheckItem,
    readonly depth: number,
    readonly deadline: number,
  ) {
    this.walker = inlineWalker();
    this.ids = this.walker.nodeIds(this);
    this.ids.id(item.user); // prepares the scratch now
    this.temps = [...this.walker.tempNodes()];
  }

  tempString(id: number): string {
    return this.temps[id - this.snapshot.nodeCount] ?? '';
  }

  confirm(obj: number, rel: number): Confirmation {
    // The list's deadline bounds each confirming walk too (past it the walker gives up: 'stop').
    setDeadline(this.deadline);
    let status: number;
    try {
      status = this.walker.checkIds(this, obj, rel);
    } finally {
      setDeadline(Infinity);
    }
    if (status === R_TRUE) return true;
    if (status < R_ERR_COND) return false;
    if (status === R_ERR_DEPTH) throw fail.tooComplex();
    if (status === R_ERR_BUDGET) return 'stop';
    if (status === R_ERR_COND) return new AppError('validation_error', this.walker.conditionMessage ?? 'failed to evaluate relationship condition');
    // Scratch overflow or a missing host: the reference evaluator answers this candidate.
    this.fallback ??= referenceConfirmer(this, this.item.user, this.ids);
    return this.fallback.confirm(obj, rel);
  }

  private fallback: Confirmer | undefined;

  get contextual(): readonly TupleKey[] {
    return this.item.contextualTuples;
  }
  get context(): JsonObject | undefined {
    return this.item.context;
  }
  get resolveDepth(): number {
    return this.depth;
  }
}

export function toOutcome(status: number, condMessage: string | undefined): CheckOutcome {
  if (status === R_TRUE) return ALLOWED;
  if (status < R_ERR_COND) return DENIED;
  if (status === R_ERR_DEPTH) return { error: fail.tooComplex() };
  if (status === R_ERR_COND) return { error: new AppError('validation_error', condMessage ?? 'failed to evaluate relationship condition') };
  if (status === R_ERR_OVERFLOW) return { error: new AppError('resource_exhausted', 'check exceeded the walker scratch space') };
  if (status === R_ERR_BUDGET) return { error: new AppError('throttled_timeout_error', 'check exceeded its evaluation budget') };
  return { error: new AppError('internal_error', 'Internal Server Error') };
}

let inline: InlineWalker | undefined;

function inlineWalker(): InlineWalker {
  inline ??= new InlineWalker();
  return inline;
}

/** The inline walker's raw status for one request (tests and benchmarks). */
export function checkStatus(snapshot: IndexSnapshot, model: CompiledModel, item: CheckItem, depth = 25): CheckOutcome {
  return inlineWalker().run(snapshot, model, item, depth);
}

export function createWalkerChecker(opts: WalkerCheckerOptions): WalkerChecker {
  const depth = opts.resolveDepth;
  const threshold = opts.poolThreshold ?? 4096;
  let pool: CheckPool | undefined;
  const runInline = (s: IndexSnapshot, m: CompiledModel, it: CheckItem): CheckOutcome => {
    try {
      return inlineWalker().run(s, m, it, depth);
    } catch (err) {
      return { error: err instanceof AppError ? err : new AppError('internal_error', 'Internal Server Error', { cause: err }) };
    }
  };
  return {
    checkInline(s, m, it, deadline = Infinity) {
      if (deadline === Infinity) return runInline(s, m, it);
      // No clock read here (≈ 70 ns, 10% of a direct check): the deadline bounds the walk, and
      // the walker reads the clock itself once a walk is long enough to matter.
      setDeadline(deadline);
      try {
        return timed(runInline(s, m, it), deadline);
      } finally {
        setDeadline(Infinity);
      }
    },
    async check(snapshot, model, items, deadline = Infinity) {
      if (opts.workers <= 0 || items.length < threshold) return inlineUntil(runInline, snapshot, model, items, deadline);
      if (Date.now() > deadline) return items.map(() => ({ error: overDeadline() }));
      pool ??= new CheckPool(opts.workers, walkerModule());
      const statuses = await pool.run(snapshot, programFor(model, snapshot.dict), items, depth);
      return items.map((it, i) => {
        const s = statuses[i] ?? R_ERR_NEEDHOST;
        return s === R_ERR_NEEDHOST ? runInline(snapshot, model, it) : toOutcome(s, undefined);
      });
    },
    async checkIds(snapshot, model, queries, context, deadline = Infinity) {
      const n = queries.length / QUERY_WORDS;
      const w = inlineWalker();
      if (Date.now() > deadline) return new Array<CheckOutcome>(n).fill({ error: overDeadline() });
      let statuses: Uint8Array;
      if (opts.workers > 0 && n >= threshold) {
        pool ??= new CheckPool(opts.workers, walkerModule());
        statuses = await pool.runIds(snapshot, programFor(model, snapshot.dict), queries, depth);
      } else {
        statuses = new Uint8Array(n);
        // Past the deadline the walker gives up (R_ERR_BUDGET), and every later record at once.
        setDeadline(deadline);
        try {
          w.runIds(snapshot, model, queries, 0, n, depth, context, statuses);
        } finally {
          setDeadline(Infinity);
        }
      }
      const out = new Array<CheckOutcome>(n);
      for (let i = 0; i < n; i++) {
        let s = statuses[i] as number;
        // Conditions (the pool has no evaluator) and condition errors (for their own message): alone, here.
        if (s === R_ERR_NEEDHOST || s === R_ERR_COND) w.runIds(snapshot, model, queries, i, 1, depth, context, statuses);
        s = statuses[i] as number;
        out[i] = s === R_TRUE ? ALLOWED : s < R_ERR_COND ? DENIED : timed(toOutcome(s, w.firstError), deadline);
      }
      return out;
    },
    poolStats: () => pool?.stats(),
    async close() {
      await pool?.close();
      pool = undefined;
    },
  };
}

/** DECISIONS D8: a Check over its deadline (OpenFGA's wording for its throttled timeout). */
export function overDeadline(): AppError {
  return new AppError('throttled_timeout_error', 'timeout due to throttling on complex request');
}

const gaveUp = (o: CheckOutcome): boolean => 'error' in o && o.error.code === 'throttled_timeout_error';

/** A walk that gave up (R_ERR_BUDGET) once the deadline had passed is the deadline's error. */
function timed(o: CheckOutcome, deadline: number): CheckOutcome {
  return gaveUp(o) && Date.now() > deadline ? { error: overDeadline() } : o;
}

/**
 * Items in order on this thread under one deadline. The clock is read by the walker (every
 * 65,536 evaluations) and here only after an item gave up: cheap items pay nothing. Once the
 * deadline is met the remaining items are not walked.
 */
function inlineUntil(
  run: (s: IndexSnapshot, m: CompiledModel, it: CheckItem) => CheckOutcome,
  s: IndexSnapshot, model: CompiledModel, items: readonly CheckItem[], deadline: number,
): CheckOutcome[] {
  const out = new Array<CheckOutcome>(items.length);
  if (deadline === Infinity) {
    for (let i = 0; i < items.length; i++) out[i] = run(s, model, items[i] as CheckItem);
    return out;
  }
  if (Date.now() > deadline) return out.fill({ error: overDeadline() });
  setDeadline(deadline);
  try {
    for (let i = 0; i < items.length; i++) {
      const o = run(s, model, items[i] as CheckItem);
      if (gaveUp(o) && Date.now() > deadline) return out.fill({ error: overDeadline() }, i);
      out[i] = o;
    }
    return out;
  } finally {
    setDeadline(Infinity);
  }
}
