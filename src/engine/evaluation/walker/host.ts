// The walker host of this thread: owns the wasm instance, its scratch memory and per-call state,
// the condition hook the instance calls back and the deadline it polls (`withDeadline`), and maps
// walker statuses onto Check outcomes (`outcomeOf`: the one mapping, for Check, BatchCheck, the
// id paths and ListObjects' confirmations alike).
//
// Every run takes the request's instant `now` (ms since the epoch): stored tuples whose
// `expires_at` is at or before it grant nothing (0: a snapshot without expiring tuples).
//
// Example: host.run(snapshot, model, {object:'doc:1', relation:'viewer', user:'user:anne',
// contextualTuples: []}, 25, now) → R_TRUE when `doc:1#viewer@user:anne` is stored and valid.

import type { JsonObject } from '../../../domain/types.js';
import { AppError, fail } from '../../../errors.js';
import type { CompiledModel } from '../../../model/types.js';
import {
  C,
  QUERY_WORDS,
  R_ERR_BUDGET,
  R_ERR_COND,
  R_ERR_DEPTH,
  R_ERR_NEEDHOST,
  R_ERR_OVERFLOW,
  R_TRUE,
  SR_MASK,
} from '../../../abi.js';
import type { IndexSnapshot } from '../../../index/store-index.js';
import { memory, u32 } from '../../../index/memory.js';
import { checkDepths } from '../../stats.js';
import { CallState, prepare, Scratch, type CheckRequest } from './request.js';
import { programFor, type Program } from './program.js';
import { instantiate, walkerModule, type WalkerExports } from './wasm.js';

export type CheckItem = CheckRequest;
export type CheckOutcome = { allowed: boolean } | { error: AppError };

const ALLOWED: CheckOutcome = Object.freeze({ allowed: true });
const DENIED: CheckOutcome = Object.freeze({ allowed: false });

/**
 * What a walker status means for a Check: its outcome, or `'host'` when a worker met a condition
 * it cannot evaluate (the main thread's host re-runs the item). A branch deeper than the scratch's
 * path stack (PATH_CAP (object, relation) frames) is `resource_exhausted`: no evaluator answers it
 * (the reference's recursion exhausts the JavaScript stack first).
 */
export function outcomeOf(status: number, conditionMessage: string | undefined): CheckOutcome | 'host' {
  if (status === R_TRUE) return ALLOWED;
  if (status < R_ERR_COND) return DENIED; // FALSE, and FALSE with the cycle flag
  switch (status) {
    case R_ERR_COND:
      return {
        error: new AppError('validation_error', conditionMessage ?? 'failed to evaluate relationship condition'),
      };
    case R_ERR_DEPTH:
      return { error: fail.tooComplex() };
    case R_ERR_BUDGET:
      return { error: new AppError('throttled_timeout_error', 'check exceeded its evaluation budget') };
    case R_ERR_NEEDHOST:
      return 'host';
    case R_ERR_OVERFLOW:
      return { error: new AppError('resource_exhausted', 'check exceeded the walker scratch space') };
    default: // R_ERR_INTERNAL: the worker running the item trapped or died
      return { error: new AppError('internal_error', 'Internal Server Error') };
  }
}

/**
 * The deadline of one wasm instance's walks, which the instance reads through its `deadlinePassed`
 * import (every 65,536 evaluations, counted across calls). A base class rather than a member, so
 * that the fields sit on the host itself: the per-call paths set them with no extra load.
 */
export class WalkClock {
  /** `Date.now()` ms past which the instance's walk gives up (R_ERR_BUDGET); read by the instance. */
  protected deadline = Infinity;
  /** A budget (ms) whose deadline the instance's next clock read sets; NaN: none. */
  protected budgetMs = NaN;

  /** The instance's clock read: arms a pending budget's deadline, then compares (1: past it). */
  protected deadlinePassed(): number {
    const now = Date.now();
    if (!Number.isNaN(this.budgetMs)) {
      this.deadline = now + this.budgetMs;
      this.budgetMs = NaN;
    }
    return now > this.deadline ? 1 : 0;
  }
}

/** One wasm instance with its scratch, condition evaluation and deadline (one per thread that walks inline). */
export class WalkerHost extends WalkClock {
  readonly ex: WalkerExports;
  readonly scratch = new Scratch();
  private readonly state = new CallState();
  /** True while a call runs: only then may the instance's condition callback read the state. */
  private active = false;
  private model: CompiledModel | undefined;
  private lastModel: CompiledModel | undefined;
  private lastSnapshot: IndexSnapshot | undefined;
  private lastProgram: Program | undefined;
  private readonly condCache = new Map<number, number>();
  /** The first condition failure of the latest call or run (its message is the error's). */
  firstError: string | undefined;
  /** The request prepared in the scratch right now (re-prepared when another call used it). */
  private owner: CheckItem | undefined;

  constructor(module: WebAssembly.Module = walkerModule()) {
    super();
    this.ex = instantiate(module, memory, {
      evalCondition: (cond, _handle, obj, rel, subj, sr) => this.evalCondition(cond, obj, rel, subj, sr),
      deadlinePassed: () => this.deadlinePassed(),
    });
  }

  /**
   * Runs `fn(arg)`, a call that starts now, with the instance giving up `ms` after its first clock
   * read instead of after a clock read here: a walk too short to read the clock (the instance
   * reads it every 65,536 evaluations, counted across calls) reads none, and a long one runs at
   * most one such interval (≈ 4 ms) past `ms`. Inside an outer deadline it is `withDeadline`.
   * `fn` reads the deadline that was armed, if any, from `deadlineNow`.
   */
  withBudget<A, T>(ms: number, fn: (arg: A) => T, arg: A): T {
    if (this.deadline !== Infinity || !Number.isNaN(this.budgetMs)) return this.withDeadline(Date.now() + ms, fn, arg);
    this.budgetMs = ms;
    try {
      return fn(arg);
    } finally {
      this.budgetMs = NaN;
      this.deadline = Infinity;
    }
  }

  /** The deadline of the running call: Infinity under a budget whose clock was not read yet. */
  get deadlineNow(): number {
    return this.deadline;
  }

  /**
   * Runs `fn(arg)` with the instance giving up past `deadline` (within ≈ 4 ms: it reads the clock
   * every 65,536 evaluations), then restores the outer deadline. `fn` is a static function so
   * that no closure is made per call.
   */
  withDeadline<A, T>(deadline: number, fn: (arg: A) => T, arg: A): T {
    const outer = this.deadline;
    if (deadline >= outer) return fn(arg);
    this.deadline = deadline;
    try {
      return fn(arg);
    } finally {
      this.deadline = outer;
    }
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

  /** Raw status of one Check request (strings, contextual tuples, context) at the instant `now`. */
  run(snapshot: IndexSnapshot, model: CompiledModel, item: CheckItem, depth: number, now: number): number {
    this.owner = undefined;
    this.open(snapshot, model, item, depth, now);
    this.active = true;
    try {
      const status = this.ex.check(this.scratch.ctx);
      checkDepths.observe(u32()[(this.scratch.ctx >>> 2) + C.DEPTH] as number);
      return status;
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
  runIds(
    snapshot: IndexSnapshot,
    model: CompiledModel,
    queries: Uint32Array,
    from: number,
    count: number,
    depth: number,
    context: JsonObject | undefined,
    out: Uint8Array,
    now: number,
  ): void {
    this.owner = undefined;
    this.bind(snapshot, model, depth, now);
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
  private bind(snapshot: IndexSnapshot, model: CompiledModel, depth: number, now: number): void {
    if (model !== this.lastModel || snapshot !== this.lastSnapshot) {
      this.lastProgram = programFor(model, snapshot.dict);
      this.lastModel = model;
      this.lastSnapshot = snapshot;
    }
    this.scratch.bind(snapshot, this.lastProgram as Program, depth, now);
    this.state.snapshot = snapshot;
  }

  /** Writes `item` into the scratch (ids, contextual records) and resets the per-request state. */
  private open(snapshot: IndexSnapshot, model: CompiledModel, item: CheckItem, depth: number, now: number): void {
    this.bind(snapshot, model, depth, now);
    this.model = model;
    if (this.condCache.size > 0) this.condCache.clear();
    this.firstError = undefined;
    prepare(this.scratch, this.state, item, this.lastProgram as Program);
  }

  /**
   * Raw status of (obj, rel) for a prepared request `item` (ListObjects' candidates): re-prepares
   * the scratch when another call used it in between (a streamed list resumes after other requests
   * ran), which re-assigns the same temporary ids (preparation is deterministic). `now` is the
   * request's instant, fixed for the item.
   */
  runObject(
    snapshot: IndexSnapshot,
    model: CompiledModel,
    item: CheckItem,
    depth: number,
    now: number,
    obj: number,
    rel: number,
  ): number {
    this.own(snapshot, model, item, depth, now);
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

  /** Prepares the scratch for `item` unless it is prepared for it already. */
  private own(snapshot: IndexSnapshot, model: CompiledModel, item: CheckItem, depth: number, now: number): void {
    if (this.owner === item) return;
    this.open(snapshot, model, item, depth, now);
    this.owner = item;
  }

  /** Node id of `s` as the prepared request `item` sees it (UNSEEN_NODE for strings it never mentions). */
  nodeId(
    snapshot: IndexSnapshot,
    model: CompiledModel,
    item: CheckItem,
    depth: number,
    now: number,
    s: string,
  ): number {
    this.own(snapshot, model, item, depth, now);
    return this.state.node(s, false);
  }

  /** Temporary node strings of the request prepared now (ids from the snapshot's node count on). */
  tempNodes(): readonly string[] {
    return this.state.tempNodes;
  }
}

let threadHost: WalkerHost | undefined;

/** This thread's walker host (one instance per thread; created on first use). */
export function walkerHost(): WalkerHost {
  threadHost ??= new WalkerHost();
  return threadHost;
}
