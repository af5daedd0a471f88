// Timing helpers. Per-operation percentiles come from our own loop: each sample times a small
// batch of operations with process.hrtime.bigint() and divides (hrtime costs ≈ 50 ns, far too
// much to wrap one 150 ns check); p50/p99 are over those per-batch means, so they smooth the tail
// inside a batch — keep batches small (16–64) for µs-scale operations.

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export interface Percentiles {
  readonly p50: number;
  readonly p99: number;
  readonly mean: number;
  readonly samples: number;
}

export function perOp(
  fn: (i: number) => void,
  opts: { batch?: number; samples?: number; warmup?: number } = {},
): Percentiles {
  const batch = opts.batch ?? 64;
  const samples = opts.samples ?? 2000;
  let i = 0;
  for (let w = 0; w < (opts.warmup ?? 200) * batch; w++) fn(i++);
  const t = new Float64Array(samples);
  for (let s = 0; s < samples; s++) {
    const t0 = process.hrtime.bigint();
    for (let k = 0; k < batch; k++) fn(i++);
    t[s] = Number(process.hrtime.bigint() - t0) / batch;
  }
  t.sort();
  let sum = 0;
  for (const v of t) sum += v;
  return {
    p50: t[Math.floor(samples * 0.5)] ?? 0,
    p99: t[Math.floor(samples * 0.99)] ?? 0,
    mean: sum / samples,
    samples,
  };
}

/** Wall time of one async or sync call, in ms. */
export async function timeMs(fn: () => unknown): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

/** Resident set size in bytes after a best-effort GC (run with --expose-gc for precision). */
export function rss(): number {
  const g = (globalThis as { gc?: () => void }).gc;
  if (g) {
    g();
    g();
  }
  return process.memoryUsage().rss;
}

/** Median of a non-empty list (mean of the two middle values for an even count). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
}

const execFileAsync = promisify(execFile);

/**
 * Runs a benchmark child script (`.ts`, through tsx) in a fresh process with `--expose-gc` and an
 * old-space limit of `heapMB`, so its RSS figures start from an empty heap; returns the JSON object
 * the child prints on its last stdout line.
 */
export async function runChild(script: URL, args: readonly string[], heapMB: number): Promise<Record<string, number>> {
  const argv = ['--expose-gc', `--max-old-space-size=${heapMB}`, '--import', 'tsx', fileURLToPath(script), ...args];
  const { stdout } = await execFileAsync(process.execPath, argv, { maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, number>;
}

/**
 * Calls `one(0 … total-1)` on a schedule of `rate` calls per second, with at most `cap` in flight
 * (past that the offered rate is not met); resolves when all have settled with the rate achieved.
 */
export async function offer(
  rate: number,
  total: number,
  cap: number,
  one: (i: number) => Promise<void>,
): Promise<number> {
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  let sent = 0;
  let inFlight = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * rate) + 1);
    while (sent < due && inFlight < cap) {
      inFlight++;
      pending.push(one(sent++).finally(() => inFlight--));
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(pending);
  return total / ((performance.now() - t0) / 1000);
}
