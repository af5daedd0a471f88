// The Check entry point the service calls: maps requests onto the walker (inline on this thread's
// walker host, or batched onto the worker pool) and their statuses onto outcomes through the
// host's one mapping (`outcomeOf`). Every call runs at one instant (`now`, ms since the epoch):
// the caller's, else the checker's clock read once per call, and only for a snapshot with
// expiring tuples; a stored tuple whose `expires_at` is at or before it grants nothing.
//
// Example: checkInline(snapshot, model, {object:'doc:1', relation:'viewer', user:'user:anne',
// contextualTuples: []}) → {allowed: true} when `doc:1#viewer@user:anne` is stored and valid.

import type { JsonObject } from '../../../domain/types.js';
import { AppError } from '../../../errors.js';
import type { CompiledModel } from '../../../model/types.js';
import { QUERY_WORDS, R_ERR_COND, R_ERR_NEEDHOST } from '../../../abi.js';
import type { IndexSnapshot } from '../../../index/store-index.js';
import { programFor } from './program.js';
import { walkerModule } from './wasm.js';
import { CheckPool } from '../pool/pool.js';

import { outcomeOf, walkerHost, type CheckItem, type CheckOutcome, type WalkerHost } from './host.js';
import type { PoolStats } from '../../contract.js';

export type { CheckItem, CheckOutcome };
export { WalkerSession } from './session.js';

export interface WalkerChecker {
  /** Many checks against one snapshot; large batches run on the worker pool. Order preserved. */
  check(
    snapshot: IndexSnapshot,
    model: CompiledModel,
    items: readonly CheckItem[],
    deadline?: number,
    now?: number,
  ): Promise<CheckOutcome[]>;
  /**
   * One check on this thread (cheapest for a single request: no task hop). `deadline`
   * (`Date.now()` ms, both methods): past it a walk gives up within ≈ 4 ms and the item answers
   * 422 throttled_timeout_error (D8), as does every inline item after it; pool items are bounded
   * by the step budget only.
   */
  checkInline(
    snapshot: IndexSnapshot,
    model: CompiledModel,
    item: CheckItem,
    deadline?: number,
    now?: number,
  ): CheckOutcome;
  /**
   * One check on this thread that starts now with `budgetMs` to run (the warm Check path): like
   * `checkInline` with the deadline `Date.now() + budgetMs`, but the clock is read only once the
   * walk is long enough for the walker to poll it, the deadline counting from there (at most one
   * poll interval, ≈ 4 ms, late): a direct check reads no clock.
   */
  checkStarting(
    snapshot: IndexSnapshot,
    model: CompiledModel,
    item: CheckItem,
    budgetMs: number,
    now?: number,
  ): CheckOutcome;
  /**
   * Pre-interned query records (QUERY_WORDS u32 each, no contextual tuples or temporary ids) against
   * one snapshot, `context` applying to every record's conditions. Order preserved; large runs go
   * to the pool and the records it cannot finish (conditions) are re-run on this thread.
   */
  checkIds(
    snapshot: IndexSnapshot,
    model: CompiledModel,
    queries: Uint32Array,
    context: JsonObject | undefined,
    deadline?: number,
    now?: number,
  ): Promise<CheckOutcome[]>;
  /** The instant a call on `snapshot` runs at when given none: the clock, or 0 for a snapshot without expiring tuples. */
  instant(snapshot: IndexSnapshot): number;
  /** The pool's figures; undefined until a batch large enough for the pool started it. */
  poolStats(): PoolStats | undefined;
  close(): Promise<void>;
}

interface WalkerCheckerOptions {
  workers: number;
  resolveDepth: number;
  /** The clock of tuple expiry (ms; default Date.now): read once per call, only for snapshots with expiring tuples. */
  now?: (() => number) | undefined;
  /** Batches smaller than this run inline (default 4096: below it a task hop costs more than it saves). */
  poolThreshold?: number;
}

/** One Check on this thread's `host`: the walker's status through the one mapping. */
function answer(
  host: WalkerHost,
  snapshot: IndexSnapshot,
  model: CompiledModel,
  item: CheckItem,
  depth: number,
  now: number,
): CheckOutcome {
  try {
    const o = outcomeOf(host.run(snapshot, model, item, depth, now), host.firstError);
    return o === 'host' ? INTERNAL : o; // this thread's host evaluates every condition
  } catch (err) {
    return {
      error: err instanceof AppError ? err : new AppError('internal_error', 'Internal Server Error', { cause: err }),
    };
  }
}

const INTERNAL: CheckOutcome = { error: new AppError('internal_error', 'Internal Server Error') };

/** The inline walker's outcome for one request with no deadline, at the instant `now` (permission-index maintenance, tests, benchmarks). */
export function checkStatus(
  snapshot: IndexSnapshot,
  model: CompiledModel,
  item: CheckItem,
  depth = 25,
  now = Date.now(),
): CheckOutcome {
  return answer(walkerHost(), snapshot, model, item, depth, now);
}

/** Arguments of one inline run under `WalkerHost.withDeadline` (reused: nothing allocated per check). */
interface InlineRun {
  snapshot: IndexSnapshot;
  model: CompiledModel;
  item: CheckItem;
  items: readonly CheckItem[];
  depth: number;
  deadline: number;
  now: number;
}

const runOne = (r: InlineRun): CheckOutcome =>
  timed(answer(walkerHost(), r.snapshot, r.model, r.item, r.depth, r.now), r.deadline);

/** `runOne` under `WalkerHost.withBudget`: the deadline is the one the host armed, if it did. */
const runBudgeted = (r: InlineRun): CheckOutcome => {
  const host = walkerHost();
  return timed(answer(host, r.snapshot, r.model, r.item, r.depth, r.now), host.deadlineNow);
};

export function createWalkerChecker(opts: WalkerCheckerOptions): WalkerChecker {
  const depth = opts.resolveDepth;
  const threshold = opts.poolThreshold ?? 4096;
  let pool: CheckPool | undefined;
  const host = walkerHost();
  const clock = opts.now ?? Date.now;
  // No clock read for a store without expiring tuples (≈ 70 ns, 10% of a direct check).
  const instant = (s: IndexSnapshot): number => (s.expiring ? clock() : 0);
  // One argument record for the inline runs (no await between filling and using it).
  const run: InlineRun = {
    snapshot: undefined as unknown as IndexSnapshot,
    model: undefined as unknown as CompiledModel,
    item: undefined as unknown as CheckItem,
    items: [],
    depth,
    deadline: Infinity,
    now: 0,
  };
  const fill = (snapshot: IndexSnapshot, model: CompiledModel, deadline: number, now: number): InlineRun => {
    run.snapshot = snapshot;
    run.model = model;
    run.deadline = deadline;
    run.now = now;
    return run;
  };
  return {
    instant,
    checkInline(s, m, it, deadline = Infinity, now = instant(s)) {
      // No clock read for the deadline (≈ 70 ns, 10% of a direct check): the deadline bounds the
      // walk, and the walker reads the clock itself once a walk is long enough to matter.
      const r = fill(s, m, deadline, now);
      r.item = it;
      return host.withDeadline(deadline, runOne, r);
    },
    checkStarting(s, m, it, budgetMs, now = instant(s)) {
      const r = fill(s, m, Infinity, now);
      r.item = it;
      return host.withBudget(budgetMs, runBudgeted, r);
    },
    async check(snapshot, model, items, deadline = Infinity, now = instant(snapshot)) {
      // One instant for the whole batch: every item sees the same tuples expired.
      if (opts.workers <= 0 || items.length < threshold) {
        const r = fill(snapshot, model, deadline, now);
        r.items = items;
        return host.withDeadline(deadline, runUntil, r);
      }
      if (Date.now() > deadline) return items.map(() => ({ error: overDeadline() }));
      pool ??= new CheckPool(opts.workers, walkerModule());
      const statuses = await pool.run(snapshot, programFor(model, snapshot.dict), items, depth, now);
      return items.map((it, i) => {
        const o = outcomeOf(statuses[i] ?? R_ERR_NEEDHOST, undefined);
        // A condition the worker could not evaluate: this thread answers the item.
        return o === 'host' ? answer(host, snapshot, model, it, depth, now) : o;
      });
    },
    async checkIds(snapshot, model, queries, context, deadline = Infinity, now = instant(snapshot)) {
      const n = queries.length / QUERY_WORDS;
      if (Date.now() > deadline) return new Array<CheckOutcome>(n).fill({ error: overDeadline() });
      let statuses: Uint8Array;
      if (opts.workers > 0 && n >= threshold) {
        pool ??= new CheckPool(opts.workers, walkerModule());
        statuses = await pool.runIds(snapshot, programFor(model, snapshot.dict), queries, depth, undefined, now);
      } else {
        statuses = new Uint8Array(n);
        // Past the deadline the walker gives up (R_ERR_BUDGET), and every later record at once.
        host.withDeadline(deadline, runRecords, {
          host,
          snapshot,
          model,
          queries,
          from: 0,
          count: n,
          depth,
          context,
          out: statuses,
          now,
        });
      }
      const out = new Array<CheckOutcome>(n);
      for (let i = 0; i < n; i++) {
        // Conditions (the pool has no evaluator) and condition errors (for their own message): alone, here.
        const first = statuses[i] as number;
        if (first === R_ERR_NEEDHOST || first === R_ERR_COND)
          host.runIds(snapshot, model, queries, i, 1, depth, context, statuses, now);
        const o = outcomeOf(statuses[i] as number, host.firstError);
        out[i] = o === 'host' ? INTERNAL : timed(o, deadline);
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

interface RecordRun {
  host: WalkerHost;
  snapshot: IndexSnapshot;
  model: CompiledModel;
  queries: Uint32Array;
  from: number;
  count: number;
  depth: number;
  context: JsonObject | undefined;
  out: Uint8Array;
  now: number;
}

const runRecords = (r: RecordRun): void =>
  r.host.runIds(r.snapshot, r.model, r.queries, r.from, r.count, r.depth, r.context, r.out, r.now);

/** docs/reference/decisions.md D8: a Check over its deadline (OpenFGA's wording for its throttled timeout). */
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
function runUntil(r: InlineRun): CheckOutcome[] {
  const items = r.items;
  const out = new Array<CheckOutcome>(items.length);
  if (r.deadline !== Infinity && Date.now() > r.deadline) return out.fill({ error: overDeadline() });
  const host = walkerHost();
  for (let i = 0; i < items.length; i++) {
    const o = answer(host, r.snapshot, r.model, items[i] as CheckItem, r.depth, r.now);
    if (gaveUp(o) && Date.now() > r.deadline) return out.fill({ error: overDeadline() }, i);
    out[i] = o;
  }
  return out;
}
