// The worker pool: Piscina over one shared memory and one compiled walker module. Batches are
// interned on this thread, laid out as query records in shared memory, split into tasks big
// enough to be worth a task hop (≈ 22 µs), and answered as one status byte per item.
// A trapped or crashed worker fails only its own task's items (R_ERR_INTERNAL); Piscina
// replaces a dead thread and the trapped one re-instantiates its walker.

import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { C, NONE, QUERY_WORDS, R_ERR_INTERNAL, R_ERR_NEEDHOST } from '../../../abi.js';
import type { IndexSnapshot } from '../../../index/store-index.js';
import { memory, Region, u32, u8 } from '../../../index/memory.js';
import type { Program } from '../walker/program.js';

import { encodeQuery, Scratch } from '../walker/request.js';
import type { BatchTask } from './worker.js';
import type { PoolStats } from '../../contract.js';

/** Smallest task: below this the ≈ 22 µs task cost dominates (≈ 150 ns per check). */
const MIN_TASK = 2048;

interface QueryStrings {
  readonly object: string;
  readonly relation: string;
  readonly user: string;
  readonly contextualTuples: readonly unknown[];
}

function workerFile(): { filename: string; execArgv: string[] } {
  const ts = import.meta.url.endsWith('.ts');
  return {
    filename: fileURLToPath(new URL(ts ? './worker.ts' : './worker.js', import.meta.url)),
    execArgv: ts ? ['--import', 'tsx'] : [],
  };
}

export class CheckPool {
  private readonly piscina: Piscina;
  private readonly spare: Scratch[] = [];
  private encode = new Uint32Array(0);
  /** Snapshots of running batches: reachable until their tasks finish (memory stays valid). */
  private readonly inflight = new Map<IndexSnapshot, number>();

  constructor(
    readonly workers: number,
    module: WebAssembly.Module,
  ) {
    const wf = workerFile();
    this.piscina = new Piscina({
      ...wf,
      minThreads: workers,
      maxThreads: workers,
      idleTimeout: 60_000,
      workerData: { module, memory },
    });
  }

  /**
   * Interns `items` into query records and runs them. Items with contextual tuples or an object
   * the snapshot has never seen get R_ERR_NEEDHOST (the caller answers them inline).
   */
  async run(
    snapshot: IndexSnapshot,
    program: Program,
    items: readonly QueryStrings[],
    depth: number,
    now = 0,
  ): Promise<Uint8Array> {
    const n = items.length;
    // One encoding buffer reused across batches: runIds copies it into shared memory before its
    // first await, so an overlapping batch can never see it half-written. Avoids megabytes of
    // external allocations per batch (they trigger full GCs of a large heap).
    if (this.encode.length < n * QUERY_WORDS) this.encode = new Uint32Array(n * QUERY_WORDS);
    const q = this.encode.subarray(0, n * QUERY_WORDS);
    const host: number[] = [];
    for (let i = 0; i < n; i++) {
      const it = items[i];
      if (
        !it ||
        it.contextualTuples.length > 0 ||
        !encodeQuery(snapshot, program, it.object, it.relation, it.user, q, i * QUERY_WORDS)
      ) {
        host.push(i);
        q[i * QUERY_WORDS] = NONE; // answered FALSE by the worker, then re-run inline
      }
    }
    const out = await this.runIds(snapshot, program, q, depth, undefined, now);
    for (const i of host) out[i] = R_ERR_NEEDHOST;
    return out;
  }

  /** Runs pre-interned query records (QUERY_WORDS u32 each) at the instant `now` (tuple expiry); one status byte per query. */
  async runIds(
    snapshot: IndexSnapshot,
    program: Program,
    queries: Uint32Array,
    depth: number,
    fault?: BatchTask['fault'],
    now = 0,
  ): Promise<Uint8Array> {
    const n = queries.length / QUERY_WORDS;
    const qr = new Region(Math.max(queries.byteLength, 16));
    const or = new Region(Math.max(n, 16));
    u32().set(queries, qr.ptr >>> 2);
    const per = Math.max(MIN_TASK, Math.ceil(n / (this.workers * 2)));
    const tasks: Promise<void>[] = [];
    const result = new Uint8Array(n);
    this.inflight.set(snapshot, (this.inflight.get(snapshot) ?? 0) + 1);
    snapshot.pin(); // its memory must outlive the workers' reads even if it is retired meanwhile
    try {
      for (let at = 0; at < n; at += per) {
        const count = Math.min(per, n - at);
        const scratch = this.spare.pop() ?? new Scratch();
        scratch.bind(snapshot, program, depth, now);
        u32()[(scratch.ctx >>> 2) + C.HANDLE] = 0;
        const task: BatchTask = {
          ctx: scratch.ctx,
          queries: qr.ptr + at * QUERY_WORDS * 4,
          count,
          out: or.ptr + at,
          fault,
        };
        tasks.push(
          (this.piscina.run(task) as Promise<number>)
            .then(
              () => {
                result.set(u8().subarray(or.ptr + at, or.ptr + at + count), at);
              },
              () => {
                result.fill(R_ERR_INTERNAL, at, at + count);
              },
            )
            .finally(() => this.spare.push(scratch)),
        );
      }
      await Promise.all(tasks);
      return result;
    } finally {
      snapshot.unpin();
      const left = (this.inflight.get(snapshot) ?? 1) - 1;
      if (left > 0) this.inflight.set(snapshot, left);
      else this.inflight.delete(snapshot);
      qr.drop();
      or.drop();
    }
  }

  /** Piscina's own scheduling figures (read on a metrics scrape). */
  stats(): PoolStats {
    const p = this.piscina;
    const w = p.histogram.waitTime;
    return {
      workers: this.workers,
      queueSize: p.queueSize,
      completed: p.completed,
      utilization: p.utilization,
      waitMs: { mean: w.mean, p50: w.p50, p99: w.p99, max: w.max },
    };
  }

  async close(): Promise<void> {
    await this.piscina.destroy();
    for (const s of this.spare) s.region?.drop();
    this.spare.length = 0;
  }
}
