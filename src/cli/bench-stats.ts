// Latency bookkeeping for `latch bench`: samples tagged by operation and relation path,
// nearest-rank percentiles, the throughput of a phase, and the memory probe (with a real GC
// before each reading when V8 lets us expose it, so "bytes per tuple" is not allocation noise).

import { collectGarbage } from '../domain/gc.js';

export interface Sample {
  readonly op: string;
  /** `type#relation` the query asked about. */
  readonly path: string;
  readonly ms: number;
  readonly error: boolean;
}

export interface OpStats {
  readonly op: string;
  readonly count: number;
  readonly errors: number;
  readonly seconds: number;
  /** Requests per second over the phase's wall time. */
  readonly throughput: number;
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
}

export interface PathStats {
  readonly op: string;
  readonly path: string;
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
}

/** Nearest-rank percentile of ascending-sorted values (0 for none). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export function opStats(op: string, samples: readonly Sample[], seconds: number): OpStats {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  return {
    op,
    count: samples.length,
    errors: samples.filter((s) => s.error).length,
    seconds,
    throughput: seconds > 0 ? samples.length / seconds : 0,
    p50: percentile(ms, 50),
    p95: percentile(ms, 95),
    p99: percentile(ms, 99),
    max: ms[ms.length - 1] ?? 0,
  };
}

/** Per (operation, type#relation) p99, slowest first. */
export function slowestPaths(samples: readonly Sample[], top: number): PathStats[] {
  const groups = new Map<string, number[]>();
  for (const s of samples) {
    const key = `${s.op}\u0000${s.path}`;
    const g = groups.get(key);
    if (g) g.push(s.ms);
    else groups.set(key, [s.ms]);
  }
  const out: PathStats[] = [];
  for (const [key, values] of groups) {
    const [op = '', path = ''] = key.split('\u0000');
    values.sort((a, b) => a - b);
    out.push({ op, path, count: values.length, p50: percentile(values, 50), p99: percentile(values, 99) });
  }
  return out.sort((a, b) => b.p99 - a.p99).slice(0, top);
}

/** Bytes held by the JS heap plus off-heap buffers (ArrayBuffers, WebAssembly memory). */
export function heldBytes(): number {
  collectGarbage();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

export function fmtMs(ms: number): string {
  return ms < 1 ? `${(ms * 1000).toFixed(0)}µs` : ms < 100 ? `${ms.toFixed(2)}ms` : `${ms.toFixed(0)}ms`;
}

export function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function fmtBytes(n: number): string {
  if (Math.abs(n) >= 1 << 20) return `${(n / (1 << 20)).toFixed(1)} MiB`;
  if (Math.abs(n) >= 1 << 10) return `${(n / (1 << 10)).toFixed(1)} KiB`;
  return `${Math.round(n)} B`;
}
