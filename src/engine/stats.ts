// Counters the service keeps for operators, read on scrape (`Latch.stats()`): fixed-bucket
// latency histograms that cost one short bucket scan per observation and allocate nothing.
//
// Example: new Timings().observe(3.2) counts one observation in the ≤ 5 ms bucket (and every
// larger one once rendered cumulatively), adds 3.2 to `sumMs`.

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
const DEPTH_BOUNDS: readonly number[] = [0, 1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 25];

/**
 * Resolution depth (deepest hop) of every Check the walker answered on this thread's inline
 * path; `observe` is a short bucket scan, nothing allocated. Pool batches are not counted.
 */
export const checkDepths = new Timings(DEPTH_BOUNDS);
