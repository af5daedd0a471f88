// Background reclamation of deleted stores: removes a tombstoned store's keys by ranges of
// batched deletes (never `db.clear()`, which is not atomic), then the tombstone itself. The same
// queue drops stale key ranges of live stores (Reclaimer.scheduleStale).
//
// Safe to interrupt anywhere: the tombstone goes last, so a restart finds it and resumes
// (KvStorage schedules every tombstone found at open). Range deletes are not synced — losing
// some to a crash only means redoing them; the final tombstone removal is synced.

import { nextTurn } from '../domain/turn.js';
import { key, prefixEnd } from './codec.js';
import type { Kv, KvOp } from './kv.js';
import { ReclaimQueue } from './reclaim-queue.js';

const BATCH_KEYS = 1000;

/** Marks a stale-range job in the queue (store ids are ULIDs: never a NUL). */
const STALE = '\u0000';

export class Reclaimer extends ReclaimQueue {
  constructor(private readonly kv: Kv) {
    super();
  }

  /**
   * Drops the keys under `prefix` in the background: keys nothing reads or writes any more (the
   * by-user keys an older version wrote, codec.ts key.byUser). Interrupted, the rest is found and
   * scheduled again at the next open.
   */
  scheduleStale(prefix: string): void {
    this.schedule(STALE + prefix);
  }

  protected async reclaim(job: string): Promise<void> {
    if (job.startsWith(STALE)) {
      await this.deleteRange(job.slice(STALE.length));
      return;
    }
    if (await this.deleteRange(key.data(job))) await this.kv.batch([{ type: 'del', key: key.tombstone(job) }], true);
  }

  /**
   * Deletes every key under `prefix`, a batch at a time; false when stopped first. Each round
   * resumes after the last key it deleted rather than at the prefix: a LevelDB iterator opened at
   * the prefix would have to step over every deletion marker left by the earlier rounds
   * (quadratic over a large store) until compaction drops them.
   */
  private async deleteRange(prefix: string): Promise<boolean> {
    for (let last: string | undefined; ;) {
      if (this.stopped) return false;
      const ops: KvOp[] = [];
      const range = last === undefined ? { gte: prefix } : { gt: last };
      for await (const k of this.kv.keys({ ...range, lt: prefixEnd(prefix), limit: BATCH_KEYS }))
        ops.push({ type: 'del', key: k });
      const tail = ops[ops.length - 1];
      if (tail === undefined) return true;
      await this.kv.batch(ops, false);
      last = tail.key;
      await nextTurn();
    }
  }
}
