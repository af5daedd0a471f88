// Background reclamation of deleted stores on PostgreSQL: deletes a tombstoned store's rows table
// by table in batches (short transactions, no long lock), then the store row itself (last: its
// number keys the store's tuples). Any node may run it, and several at once do no harm (a batch
// deletes what is still there); a node resumes the tombstones it finds at open, so a reclamation
// cut short by a crash finishes later.

import { nextTurn } from '../../domain/turn.js';
import type { Db } from './db.js';
import { ReclaimQueue } from '../reclaim-queue.js';
import { STORE_TUPLES_ANY } from './tuples.js';

const TABLES = [
  'latch_tuples',
  'latch_changes',
  'latch_revisions',
  'latch_models',
  'latch_assertions',
  'latch_permission_indexes',
  'latch_shadows',
  'latch_checkpoint_chunks',
  'latch_checkpoints',
  'latch_checkpoint_writers',
];
const BATCH_ROWS = 5000;

export class PgReclaimer extends ReclaimQueue {
  constructor(private readonly db: Db) {
    super();
  }

  protected async reclaim(storeId: string): Promise<void> {
    for (const table of TABLES) {
      for (;;) {
        if (this.stopped) return;
        const n = await this.db.exec(
          `DELETE FROM ${table} WHERE ctid = ANY (ARRAY (SELECT ctid FROM ${table} WHERE ${table === 'latch_tuples' ? STORE_TUPLES_ANY : 'store_id = $1'} LIMIT ${BATCH_ROWS}))`,
          [storeId],
        );
        if (n < BATCH_ROWS) break;
        await nextTurn();
      }
    }
    await this.db.exec('DELETE FROM latch_stores WHERE id = $1 AND deleted_ms IS NOT NULL', [storeId]);
  }
}
