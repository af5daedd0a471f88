// Counters the service keeps for operators, read on scrape (`Latch.stats()`): fixed-bucket
// latency histograms that cost one short bucket scan per observation and allocate nothing.
//
// Example: new Timings().observe(3.2) counts one observation in the ≤ 5 ms bucket (and every
// larger one once rendered cumulatively), adds 3.2 to `sumMs`.

import type { FollowerStats } from './state/follower.js';

/** Upper bounds (ms) shared by every latency histogram: 0.1 ms … 10 s. */
export const LATENCY_BOUNDS_MS: readonly number[] = [
  0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000,
];

/** A latency histogram; `counts[i]` is the number of observations in (bounds[i-1], bounds[i]], the last slot is +Inf. */
export class Timings {
  readonly counts: Float64Array;
  sumMs = 0;
  count = 0;
  /** The latest observation (tracing reads a Check's resolution depth from it). */
  last = 0;

  constructor(readonly bounds: readonly number[] = LATENCY_BOUNDS_MS) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(ms: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && ms > (b[i] as number)) i++;
    this.counts[i] = (this.counts[i] ?? 0) + 1;
    this.sumMs += ms;
    this.count++;
    this.last = ms;
  }
}

/** Bucket bounds of the Check resolution-depth histogram (hops; the default limit is 25). */
export const DEPTH_BOUNDS: readonly number[] = [0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 25];

/**
 * Resolution depth (deepest hop) of every Check the walker answered on this thread's inline
 * path; `observe` is a short bucket scan, nothing allocated. Pool batches are not counted.
 */
export const checkDepths = new Timings(DEPTH_BOUNDS);

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
    readonly loads: Timings;
    /** Index checkpoints written and failed since start (at load, in the background, at close). */
    readonly checkpoints: { readonly written: number; readonly failed: number };
  };
  /** Following the datastore (./follower.ts): revisions applied from the change log, failures, polls. */
  readonly replication: Readonly<FollowerStats>;
  /** Bytes allocated in the walker's shared memory (indexes, overlays, scratch). */
  readonly sharedMemoryBytes: number;
  /** Storage commit latency of Write (the tuple batch, change log and revision). */
  readonly writes: Timings;
  /** Resolution depth of the Checks answered inline (values in hops, not ms). */
  readonly checkDepth: Timings;
}
