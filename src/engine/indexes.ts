// The loaded per-store indexes: each store's compact index is built once (from its checkpoint
// plus the change-log tail, or from a full scan) and then kept current by the write path.

import { StoreIndex } from '../index/store-index.js';
import type { Storage } from '../storage/types.js';
import { Timings } from './stats.js';

export class Indexes {
  private readonly loaded = new Map<string, StoreIndex>();
  private readonly pending = new Map<string, Promise<StoreIndex>>();
  /** How long each store index took to load. */
  readonly loads = new Timings();

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
        (index) => {
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
