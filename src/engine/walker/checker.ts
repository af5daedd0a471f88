// The Check entry point the service calls: maps requests onto the walker (inline on this thread
// or batched onto the worker pool) and walker statuses onto outcomes and AppErrors.
//
// Example: checkInline(snapshot, model, {object:'doc:1', relation:'viewer', user:'user:anne',
// contextualTuples: []}) → {allowed: true} when `doc:1#viewer@user:anne` is stored and valid.

import type { JsonObject, TupleKey } from '../../domain/types.js';
import { AppError, fail } from '../../errors.js';
import type { CompiledModel } from '../../model/types.js';
import { R_ERR_BUDGET, R_ERR_COND, R_ERR_DEPTH, R_ERR_NEEDHOST, R_ERR_OVERFLOW, R_TRUE, SR_MASK } from '../../abi.js';
import type { IndexSnapshot } from '../../index/store-index.js';
import { memory } from '../../index/memory.js';
import { CallState, prepare, Scratch } from './request.js';
import { programFor, type Program } from './program.js';
import { instantiate, setConditionHook, setDeadline, walkerModule, type WalkerExports } from './wasm.js';
import { CheckPool } from '../pool/pool.js';
import type { PoolStats } from '../stats.js';

export interface CheckItem {
  object: string;
  relation: string;
  user: string;
  contextualTuples: readonly TupleKey[];
  context?: JsonObject;
}

export type CheckOutcome = { allowed: boolean } | { error: AppError };

export interface Checker {
  /** Many checks against one snapshot; large batches run on the worker pool. Order preserved. */
  check(snapshot: IndexSnapshot, model: CompiledModel, items: readonly CheckItem[], deadline?: number): Promise<CheckOutcome[]>;
  /**
   * One check on this thread (cheapest for a single request: no task hop). `deadline`
   * (`Date.now()` ms, both methods): past it a walk gives up within ≈ 4 ms and the item answers
   * 422 throttled_timeout_error (D8), as does every inline item after it; pool items are bounded
   * by the step budget only.
   */
  checkInline(snapshot: IndexSnapshot, model: CompiledModel, item: CheckItem, deadline?: number): CheckOutcome;
  /** The pool's figures; undefined until a batch large enough for the pool started it. */
  poolStats(): PoolStats | undefined;
  close(): Promise<void>;
}

export interface CheckerOptions {
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

  run(snapshot: IndexSnapshot, model: CompiledModel, item: CheckItem, depth: number): CheckOutcome {
    if (model !== this.lastModel || snapshot !== this.lastSnapshot) {
      this.lastProgram = programFor(model, snapshot.dict);
      this.lastModel = model;
      this.lastSnapshot = snapshot;
    }
    this.scratch.bind(snapshot, this.lastProgram as Program, depth);
    this.state.snapshot = snapshot;
    this.model = model;
    if (this.condCache.size > 0) this.condCache.clear();
    this.firstError = undefined;
    this.active = true;
    try {
      prepare(this.scratch, this.state, item, this.lastProgram as Program);
      return toOutcome(this.ex.check(this.scratch.ctx), this.firstError);
    } finally {
      this.active = false;
    }
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

export function createChecker(opts: CheckerOptions): Checker {
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
      if (Date.now() > deadline) return { error: overDeadline() };
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
