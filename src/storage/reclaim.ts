// Background reclamation of deleted stores: removes a tombstoned store's keys by ranges of
// batched deletes (never `db.clear()`, which is not atomic), then the tombstone itself.
//
// Safe to interrupt anywhere: the tombstone goes last, so a restart finds it and resumes
// (KvStorage schedules every tombstone found at open). Range deletes are not synced — losing
// some to a crash only means redoing them; the final tombstone removal is synced.

import { key, prefixEnd } from './codec.js';
import type { Kv, KvOp } from './kv.js';

const BATCH_KEYS = 1000;

export class Reclaimer {
  private readonly queue: string[] = [];
  private running: Promise<void> | undefined;
  private stopped = false;
  /** The last failure; the store's tombstone stays and reclamation resumes at the next open. */
  lastError: unknown;

  constructor(private readonly kv: Kv) {}

  schedule(storeId: string): void {
    if (this.stopped || this.queue.includes(storeId)) return;
    this.queue.push(storeId);
    this.running ??= this.drain().finally(() => (this.running = undefined));
  }

  /** Resolves when every scheduled store has been reclaimed (or reclamation stopped). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Stops after the batch in flight; used by close(). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.settled();
  }

  private async drain(): Promise<void> {
    for (let id = this.queue[0]; id !== undefined && !this.stopped; id = this.queue[0]) {
      try {
        await this.reclaim(id);
      } catch (err) {
        this.lastError = err;
      }
      this.queue.shift();
    }
  }

  /**
   * Each round resumes after the last key it deleted rather than at the prefix: a LevelDB
   * iterator opened at the prefix would have to step over every deletion marker left by the
   * earlier rounds (quadratic over a large store) until compaction drops them.
   */
  private async reclaim(storeId: string): Promise<void> {
    const prefix = key.data(storeId);
    for (let last: string | undefined; ; ) {
      if (this.stopped) return;
      const ops: KvOp[] = [];
      const range = last === undefined ? { gte: prefix } : { gt: last };
      for await (const k of this.kv.keys({ ...range, lt: prefixEnd(prefix), limit: BATCH_KEYS })) ops.push({ type: 'del', key: k });
      const tail = ops[ops.length - 1];
      if (tail === undefined) break;
      await this.kv.batch(ops, false);
      last = tail.key;
      await new Promise((resolve) => setImmediate(resolve));
    }
    await this.kv.batch([{ type: 'del', key: key.tombstone(storeId) }], true);
  }
}
