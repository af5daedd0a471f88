// The loaded per-store indexes: each store's compact index is built once (from its checkpoint
// plus the change-log tail, or from a full scan) and then kept current by the write path.
//
// Checkpoints keep the next start fast (10M tuples: ≈ 3 s from an image, ≈ 40 s from a scan,
// bench/RESULTS.md). One is written at close, and as part of a load that had to scan the tuples or
// replay a long log tail, before the index serves: copying the image out of shared memory blocks
// the thread (≈ 0.7 s per 1M tuples), which start-up can afford and a serving process cannot, so
// there are no periodic checkpoints; after a crash the tail since the last one is replayed in one
// linear step (320k changes ≈ 2 s).

import { StoreIndex } from '../index/store-index.js';
import type { Storage } from '../storage/types.js';
import { Timings } from './stats.js';

/** A load that replayed at least this many changes of the log tail is followed by a checkpoint. */
const LONG_TAIL = 10_000;

export class Indexes {
  private readonly loaded = new Map<string, StoreIndex>();
  private readonly pending = new Map<string, Promise<StoreIndex>>();
  /** How long each store index took to load. */
  readonly loads = new Timings();
  /** Load-time checkpoints written and failed (a failure leaves the next start to scan again). */
  readonly checkpoints = { written: 0, failed: 0 };

  constructor(private readonly storage: Storage) {}

  has(storeId: string): boolean {
    return this.loaded.has(storeId);
  }

  /** The store's index if it is loaded (no load started): the synchronous query path. */
  peek(storeId: string): StoreIndex | undefined {
    return this.loaded.get(storeId);
  }

  /** The store's index, loading it on first use; concurrent callers share one load. */
  get(storeId: string): Promise<StoreIndex> {
    const hit = this.loaded.get(storeId);
    if (hit) return Promise.resolve(hit);
    let p = this.pending.get(storeId);
    if (!p) {
      const t0 = performance.now();
      p = StoreIndex.load(this.storage, storeId).then(
        async (index) => {
          const scanned = !index.loaded.fromCheckpoint && index.snapshot().base.layout.entries > 0;
          if (scanned || index.loaded.tailChanges >= LONG_TAIL) await this.checkpoint(storeId, index);
          this.loads.observe(performance.now() - t0);
          this.pending.delete(storeId);
          this.loaded.set(storeId, index);
          return index;
        },
        (err: unknown) => {
          this.pending.delete(storeId);
          throw err;
        },
      );
      this.pending.set(storeId, p);
    }
    return p;
  }

  /** Tuples and base bytes across the loaded indexes (a scrape reads each store's latest snapshot). */
  totals(): { stores: number; tuples: number; bytes: number } {
    let tuples = 0;
    let bytes = 0;
    for (const index of this.loaded.values()) {
      const s = index.snapshot();
      tuples += s.base.layout.entries + s.overlay.addCount - s.overlay.delCount;
      bytes += index.baseBytes;
    }
    return { stores: this.loaded.size, tuples, bytes };
  }

  private async checkpoint(storeId: string, index: StoreIndex): Promise<void> {
    try {
      await index.checkpoint(this.storage, storeId);
      this.checkpoints.written++;
    } catch {
      this.checkpoints.failed++;
    }
  }

  /** Forgets a deleted store's index (its memory is released with the last snapshot reader). */
  drop(storeId: string): void {
    this.loaded.get(storeId)?.close();
    this.loaded.delete(storeId);
  }

  /** Saves a checkpoint of every loaded index, then releases them. */
  async close(): Promise<void> {
    for (const [storeId, index] of this.loaded) {
      await index.checkpoint(this.storage, storeId);
      index.close();
    }
    this.loaded.clear();
  }
}
