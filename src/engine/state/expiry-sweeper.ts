// The expiry sweeper: deletes the stored tuples whose `expires_at` has passed (D15 extension),
// through storage's `deleteExpired` (one write per batch, each deletion in the changelog), applied
// to the store's index in the store's write order like any write. Queries never wait for it:
// from its expiry instant a tuple grants nothing on any path whether swept or not; sweeping only
// reclaims space and tells ReadChanges consumers.
//
// Example: `doc:1#viewer@user:anne` expiring at 10:00 → the first pass at or after 10:00 deletes
// it; ReadChanges then shows a TUPLE_OPERATION_DELETE whose tuple_key carries expires_at 10:00.

import { AppError } from '../../errors.js';
import type { StoreIndex } from '../../index/store-index.js';
import type { Storage, WriteResult } from '../../storage/types.js';
import type { Indexes } from './store-indexes.js';

export interface SweeperOptions {
  readonly storage: Storage;
  readonly indexes: Indexes;
  /** Runs a write in the store's write order (the service's per-store serialization). */
  readonly serialized: <T>(storeId: string, fn: () => Promise<T>) => Promise<T>;
  /** Brings a write's result into the store's index (the follower's `applyLocal`: another node may have committed in between). */
  readonly applied: (storeId: string, index: StoreIndex, result: WriteResult) => Promise<void>;
  /** The clock of expiry (ms since the epoch). */
  readonly now: () => number;
  /** Tuples per delete batch (default 500). */
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
    const batch = this.opts.batch ?? 500;
    let total = 0;
    for (;;) {
      const res: WriteResult = await this.opts.serialized(storeId, async () => {
        const index = await this.opts.indexes.get(storeId);
        const r = await this.opts.storage.deleteExpired(storeId, now, batch);
        await this.opts.applied(storeId, index, r);
        return r;
      });
      total += res.deleted.length;
      if (res.deleted.length < batch) return total;
    }
  }
}
