// The expiry sweeper: deletes the stored tuples whose `expires_at` has passed (D15 extension),
// through storage's `deleteExpired` (one write per batch, each deletion in the changelog),
// committed through the store writer (./store-writer.ts) like any write. Queries never wait for it:
// from its expiry instant a tuple grants nothing on any path whether swept or not; sweeping only
// reclaims space and tells ReadChanges consumers.
//
// Example: `doc:1#viewer@user:anne` expiring at 10:00 → the first pass at or after 10:00 deletes
// it; ReadChanges then shows a TUPLE_OPERATION_DELETE whose tuple_key carries expires_at 10:00.

import { AppError } from '../../errors.js';
import type { Storage } from '../../storage/types.js';
import { EXPIRY_SWEEP_BATCH } from '../config.js';
import type { StoreIndexes } from './store-indexes.js';
import type { StoreWriter } from './store-writer.js';

interface SweeperOptions {
  readonly storage: Storage;
  readonly indexes: StoreIndexes;
  /** The one write path: each batch is committed and applied to the index through it. */
  readonly writer: StoreWriter;
  /** The clock of expiry (ms since the epoch). */
  readonly now: () => number;
  /** Tuples per delete batch (default config.ts EXPIRY_SWEEP_BATCH). */
  readonly batch?: number | undefined;
  /** Called when a background pass fails (never thrown to a caller). */
  readonly onError?: ((err: unknown) => void) | undefined;
}

export class ExpirySweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  /** Tuples deleted since start. */
  swept = 0;

  constructor(private readonly opts: SweeperOptions) {}

  /** Sweeps every `intervalMs` in the background (0: never; passes then run only through `sweep`). */
  start(intervalMs: number): void {
    if (intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      this.sweep().catch((err: unknown) => this.opts.onError?.(err));
    }, intervalMs);
    this.timer.unref();
  }

  /** One pass over every loaded store; resolves with the number of tuples it deleted. Passes never overlap. */
  sweep(): Promise<number> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  private async pass(): Promise<number> {
    const { storage, indexes } = this.opts;
    let total = 0;
    for (const [storeId, index] of indexes.entries()) {
      // A store none of whose tuples ever carried an expiry has nothing to sweep (no storage read).
      if (!index.snapshot().expiring) continue;
      const now = this.opts.now();
      const first = await storage.firstExpiry(storeId);
      if (first === undefined || first > now) continue;
      try {
        total += await this.sweepStore(storeId, now);
      } catch (err) {
        if (!(err instanceof AppError && err.code === 'store_id_not_found')) throw err; // deleted meanwhile
      }
    }
    this.swept += total;
    return total;
  }

  /** Deletes the store's tuples expired at `now`, batch after batch, each applied to the index before the next. */
  private async sweepStore(storeId: string, now: number): Promise<number> {
    const batch = this.opts.batch ?? EXPIRY_SWEEP_BATCH;
    let total = 0;
    for (;;) {
      const res = await this.opts.writer.write(storeId, (commit) =>
        commit((storage) => storage.deleteExpired(storeId, now, batch)),
      );
      total += res.deleted.length;
      if (res.deleted.length < batch) return total;
    }
  }
}
