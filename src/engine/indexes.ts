// The loaded per-store indexes: each store's compact index is built once (from its checkpoint
// plus the change-log tail, or from a full scan) and then kept current by the write path.
//
// Checkpoints keep the next start fast (10M tuples: ≈ 3 s from an image, ≈ 40 s from a scan,
// bench/RESULTS.md). One is written in the background after a load that had to scan or replay a
// long log tail, every CHECKPOINT_EVERY tuple changes written through this process, and at close.
// At most one checkpoint per store runs at a time; a failed one is counted and retried later.

import { StoreIndex } from '../index/store-index.js';
import type { Storage } from '../storage/types.js';
import { Timings } from './stats.js';

/** Tuple changes written through this process after which a store's index is checkpointed again. */
export const CHECKPOINT_EVERY = 250_000;
/** A load that replayed at least this many changes of the log tail is followed by a checkpoint. */
const LONG_TAIL = 10_000;

export class Indexes {
  private readonly loaded = new Map<string, StoreIndex>();
  private readonly pending = new Map<string, Promise<StoreIndex>>();
  /** Changes written since each store's last checkpoint. */
  private readonly sinceCheckpoint = new Map<string, number>();
  private readonly checkpointing = new Map<string, Promise<void>>();
  /** How long each store index took to load. */
  readonly loads = new Timings();
  /** Background checkpoints written and failed (a failure is retried after the next changes). */
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
        (index) => {
          this.loads.observe(performance.now() - t0);
          this.pending.delete(storeId);
          this.loaded.set(storeId, index);
          if (!index.loaded.fromCheckpoint || index.loaded.tailChanges >= LONG_TAIL) this.checkpointSoon(storeId, index);
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

  /** Counts `changes` written to a loaded store; past CHECKPOINT_EVERY a checkpoint follows. */
  noteChanges(storeId: string, changes: number): void {
    const n = (this.sinceCheckpoint.get(storeId) ?? 0) + changes;
    this.sinceCheckpoint.set(storeId, n);
    const index = this.loaded.get(storeId);
    if (n >= CHECKPOINT_EVERY && index) this.checkpointSoon(storeId, index);
  }

  /** Starts a background checkpoint of one store unless one is running. */
  private checkpointSoon(storeId: string, index: StoreIndex): void {
    if (this.checkpointing.has(storeId)) return;
    this.sinceCheckpoint.set(storeId, 0);
    const run = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => (this.loaded.get(storeId) === index ? index.checkpoint(this.storage, storeId) : undefined))
      .then(
        () => void this.checkpoints.written++,
        () => void this.checkpoints.failed++,
      )
      .finally(() => this.checkpointing.delete(storeId));
    this.checkpointing.set(storeId, run);
  }

  /** Running background checkpoints (tests, and close). */
  async idle(): Promise<void> {
    await Promise.all(this.checkpointing.values());
  }

  /** Forgets a deleted store's index (its memory is released with the last snapshot reader). */
  drop(storeId: string): void {
    this.loaded.get(storeId)?.close();
    this.loaded.delete(storeId);
  }

  /** Saves a checkpoint of every loaded index, then releases them. */
  async close(): Promise<void> {
    await this.idle();
    for (const [storeId, index] of this.loaded) {
      await index.checkpoint(this.storage, storeId);
      index.close();
    }
    this.loaded.clear();
  }
}
