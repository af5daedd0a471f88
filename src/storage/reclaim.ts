// Background reclamation of deleted stores: removes a tombstoned store's keys by ranges of
// batched deletes (never `db.clear()`, which is not atomic), then the tombstone itself.
//
// Safe to interrupt anywhere: the tombstone goes last, so a restart finds it and resumes
// (KvStorage schedules every tombstone found at open). Range deletes are not synced — losing
// some to a crash only means redoing them; the final tombstone removal is synced.

import { nextTurn } from '../domain/turn.js';
import { key, prefixEnd } from './codec.js';
import type { Kv, KvOp } from './kv.js';
import { ReclaimQueue } from './reclaim-queue.js';

const BATCH_KEYS = 1000;

export class Reclaimer extends ReclaimQueue {
  constructor(private readonly kv: Kv) {
    super();
  }

  /**
   * Each round resumes after the last key it deleted rather than at the prefix: a LevelDB
   * iterator opened at the prefix would have to step over every deletion marker left by the
   * earlier rounds (quadratic over a large store) until compaction drops them.
   */
  protected async reclaim(storeId: string): Promise<void> {
    const prefix = key.data(storeId);
    for (let last: string | undefined; ;) {
      if (this.stopped) return;
      const ops: KvOp[] = [];
      const range = last === undefined ? { gte: prefix } : { gt: last };
      for await (const k of this.kv.keys({ ...range, lt: prefixEnd(prefix), limit: BATCH_KEYS }))
        ops.push({ type: 'del', key: k });
      const tail = ops[ops.length - 1];
      if (tail === undefined) break;
      await this.kv.batch(ops, false);
      last = tail.key;
      await nextTurn();
    }
    await this.kv.batch([{ type: 'del', key: key.tombstone(storeId) }], true);
  }
}
