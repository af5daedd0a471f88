// The loaded per-store indexes: each store's compact index is built once (from its checkpoint
// plus the change-log tail, or from a full scan) and then kept current by the write path.

import { StoreIndex } from '../index/store-index.js';
import type { Storage } from '../storage/types.js';

export class Indexes {
  private readonly loaded = new Map<string, StoreIndex>();
  private readonly pending = new Map<string, Promise<StoreIndex>>();

  constructor(private readonly storage: Storage) {}

  has(storeId: string): boolean {
    return this.loaded.has(storeId);
  }

  /** The store's index, loading it on first use; concurrent callers share one load. */
  get(storeId: string): Promise<StoreIndex> {
    const hit = this.loaded.get(storeId);
    if (hit) return Promise.resolve(hit);
    let p = this.pending.get(storeId);
    if (!p) {
      p = StoreIndex.load(this.storage, storeId).then(
        (index) => {
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
