// The HTTP series of /metrics in memory every HTTP thread of the process writes (`--http-threads`):
// requests finished by (endpoint, status) with their latency histogram, requests in flight, and
// the result-cache counts of the Checks each thread answers itself. Each thread writes only its own
// segment, with plain stores (one writer per word, nothing contended, nothing allocated); a scrape
// on any thread sums every segment, so /metrics counts each request once whichever thread served
// it and whichever thread is asked. A request is counted once its thread has finished it.
//
// Layout (Float64Array words over one buffer; a count stays exact up to 2^53):
//   directory  Int32 per (endpoint, status 100…599): the series' slot + 1, 0 = not seen yet;
//              a thread meeting a new pair takes the next slot with Atomics, and the first
//              compare-exchange into the directory wins (a loser uses the winner's slot; the
//              slot it took stays unused). `unmatched` has a fixed slot per status.
//   segments   one per thread, apart: its extras (in flight, cache hits, misses, entries), then
//              per slot: count, sum of ms, then one count per latency bucket
//   gc         the main thread's GC pauses per kind (count, sum of ms, buckets): only the main
//              thread observes its GC (an HTTP thread's observer allocated an entry per scavenge,
//              half of what its young generation promoted), a scrape on any thread reads them
// Example: thread 1 finishing a Check with 200 in 0.3 ms adds 1 to count, 0.3 to the sum and 1 to
// the 0.5 ms bucket of its own copy of slot(Check, 200); a scrape adds the copies of all threads.

import { LATENCY_BOUNDS_MS } from '../engine/stats.js';
import type { Histogram } from '../engine/contract.js';

const FIRST_STATUS = 100;
const STATUSES = 500;
/** (endpoint, status) pairs with a slot of their own; past them a new pair counts under `unmatched`. */
const MAX_SLOTS = 2048;
/** Slots: the pairs', then one per status for `unmatched`. */
const SLOTS = MAX_SLOTS + STATUSES;
const BUCKETS = LATENCY_BOUNDS_MS.length + 1;
/** Words of one thread's copy of a series: count, sum, buckets. */
const SERIES_WORDS = 2 + BUCKETS;

export const EXTRA_IN_FLIGHT = 0;
export const EXTRA_CACHE_HITS = 1;
export const EXTRA_CACHE_MISSES = 2;
export const EXTRA_CACHE_ENTRIES = 3;
/** Words before a thread's series: its extras, padded to a cache line. */
const EXTRAS = 8;
/** Words of one thread's segment (segments are apart: no two threads write one cache line). */
const SEGMENT = EXTRAS + SLOTS * SERIES_WORDS;
/** The main thread's GC pause histograms after the segments: per kind, count, sum of ms, buckets. */
export const GC_KINDS = 4;
export const GC_KIND_WORDS = 32;

/** What an HTTP thread needs to write its own segment (plain data: cloned, the buffer shared). */
/**
 * One observation of `ms` into the series at word `at` of `w`: its count, its sum of ms, then one
 * counter per bucket of `bounds` (the first bound `ms` does not exceed; past the last, the +Inf one).
 */
export function addToSeries(w: Float64Array, at: number, bounds: readonly number[], ms: number): void {
  let i = 0;
  while (i < bounds.length && ms > (bounds[i] as number)) i++;
  w[at] = (w[at] as number) + 1;
  w[at + 1] = (w[at + 1] as number) + ms;
  w[at + 2 + i] = (w[at + 2 + i] as number) + 1;
}

export interface MetricsShareData {
  readonly buffer: SharedArrayBuffer;
  /** Every endpoint name, `unmatched` last: the directory's rows. */
  readonly endpoints: readonly string[];
  readonly threads: number;
}

/** A series as a scrape reads it: the sum over the threads. */
export interface SharedSeries {
  readonly endpoint: string;
  readonly status: number;
  readonly timings: Histogram;
}

export class MetricsShare {
  private readonly head: Int32Array;
  private readonly directory: Int32Array;
  private readonly words: Float64Array;
  private readonly row: Map<string, number>;
  /** This thread's segment (word index). */
  private readonly own: number;
  /** This thread's extras, writable by the caller (in flight, cache counts). */
  readonly extras: Float64Array;
  /** The main thread's GC area (GC_KINDS × GC_KIND_WORDS): it writes, a scrape on any thread reads. */
  readonly gc: Float64Array;

  /** A new share for `threads` threads (`endpoints` with `unmatched` last), or one received from the main thread. */
  static create(endpoints: readonly string[], threads: number): MetricsShareData {
    const dirBytes = align8(4 + endpoints.length * STATUSES * 4);
    const bytes = dirBytes + 8 * (threads * SEGMENT + GC_KINDS * GC_KIND_WORDS);
    return { buffer: new SharedArrayBuffer(bytes), endpoints, threads };
  }

  constructor(
    readonly data: MetricsShareData,
    /** This thread's segment (0: the main thread). */
    readonly thread: number,
  ) {
    const { buffer, endpoints } = data;
    const dirBytes = align8(4 + endpoints.length * STATUSES * 4);
    this.head = new Int32Array(buffer, 0, 1);
    this.directory = new Int32Array(buffer, 4, endpoints.length * STATUSES);
    this.words = new Float64Array(buffer, dirBytes);
    this.row = new Map(endpoints.map((e, i) => [e, i]));
    this.own = thread * SEGMENT;
    this.extras = this.words.subarray(this.own, this.own + EXTRAS);
    const gc = data.threads * SEGMENT;
    this.gc = this.words.subarray(gc, gc + GC_KINDS * GC_KIND_WORDS);
  }

  /** One finished request on this thread. */
  observe(endpoint: string, status: number, ms: number): void {
    const slot = this.slot(endpoint, status);
    const at = this.own + EXTRAS + slot * SERIES_WORDS;
    addToSeries(this.words, at, LATENCY_BOUNDS_MS, ms);
  }

  private slot(endpoint: string, status: number): number {
    const unmatched = this.data.endpoints.length - 1;
    const row = this.row.get(endpoint) ?? unmatched;
    const s = Math.min(Math.max(status, FIRST_STATUS), FIRST_STATUS + STATUSES - 1) - FIRST_STATUS;
    const cell = row * STATUSES + s;
    const known = Atomics.load(this.directory, cell);
    if (known !== 0) return known - 1;
    if (row !== unmatched) {
      const taken = Atomics.add(this.head, 0, 1);
      if (taken < MAX_SLOTS) {
        const prior = Atomics.compareExchange(this.directory, cell, 0, taken + 1);
        return prior === 0 ? taken : prior - 1;
      }
    }
    // `unmatched` (and, once the slots are all taken, any new pair) has a fixed slot per status.
    const fixed = MAX_SLOTS + s;
    Atomics.store(this.directory, unmatched * STATUSES + s, fixed + 1);
    return fixed;
  }

  /** Every series seen on any thread, summed over the threads. */
  series(): SharedSeries[] {
    const out: SharedSeries[] = [];
    const { endpoints, threads } = this.data;
    const w = this.words;
    for (let row = 0; row < endpoints.length; row++)
      for (let s = 0; s < STATUSES; s++) {
        const slot = Atomics.load(this.directory, row * STATUSES + s) - 1;
        if (slot < 0) continue;
        const counts = new Float64Array(BUCKETS);
        let count = 0;
        let sumMs = 0;
        for (let t = 0; t < threads; t++) {
          const at = t * SEGMENT + EXTRAS + slot * SERIES_WORDS;
          count += w[at] as number;
          sumMs += w[at + 1] as number;
          for (let b = 0; b < BUCKETS; b++) counts[b] = (counts[b] as number) + (w[at + 2 + b] as number);
        }
        out.push({
          endpoint: endpoints[row] as string,
          status: s + FIRST_STATUS,
          timings: { bounds: LATENCY_BOUNDS_MS, counts, count, sumMs, last: 0 },
        });
      }
    return out;
  }

  /** One extra summed over the threads. */
  total(extra: number): number {
    let sum = 0;
    for (let t = 0; t < this.data.threads; t++) sum += this.words[t * SEGMENT + extra] as number;
    return sum;
  }
}

function align8(n: number): number {
  return Math.ceil(n / 8) * 8;
}
