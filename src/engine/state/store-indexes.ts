// The loaded per-store indexes: each store's compact index is built once (from its checkpoint
// plus the change-log tail, or from a full scan) and then kept current by the write path.
//
// Checkpoints keep the next start fast (10M tuples: ≈ 3 s from an image, ≈ 45 s from a scan,
// bench/RESULTS.md). One is written at close; right after a load that had to scan the tuples or
// replay a long log tail (in the background: the index serves meanwhile); and while the index
// serves, each time a merge publishes a base holding enough changes since the last one
// (StoreIndex `checkpointDue`: max(100k, min(a quarter of the base's entries, MAX_TAIL = 250k))).
// Every checkpoint is copied out of shared memory one chunk per event-loop turn and streamed to
// storage under a new generation that one final batch publishes, so none blocks the thread for
// long and a crash (`kill -9`) at any point leaves the previous image; the restart replays the
// changes after the image's revision in one linear step and folds them into the base in the
// background. At most one checkpoint runs per store; a failed background one is counted and
// logged, and the next merge tries again.

import { fail } from '../../errors.js';
import { type CheckpointOutcome, StoreIndex, type StoreIndexOptions } from '../../index/store-index.js';
import type { Storage } from '../../storage/types.js';
import { Timings } from '../stats.js';
import { logger } from '../../log.js';
import type { EngineLog } from '../contract.js';
import type { ThreadBoard } from '../../index/thread-board.js';

/** A load that replayed at least this many changes of the log tail is followed by a checkpoint. */
const LONG_TAIL = 10_000;

/** Without a configured log: the process log (src/log.ts, honouring --log-level and --log-format). */
const warn: EngineLog = (level, msg, fields) => logger.log(level, msg, fields);

interface StoreIndexesOptions {
  /** Options for every store index (tests lower the merge and checkpoint thresholds). */
  readonly index?: Omit<StoreIndexOptions, 'onCheckpointDue'> | undefined;
  readonly log?: EngineLog | undefined;
  /** The HTTP threads' board (`--http-threads`): every loaded index is published on it. */
  readonly board?: ThreadBoard | undefined;
}

export class StoreIndexes {
  private readonly loaded = new Map<string, StoreIndex>();
  private readonly pending = new Map<string, Promise<StoreIndex>>();
  /** Stores deleted while their index was loading. */
  private readonly dropped = new Set<string>();
  /** Background checkpoints being written (close waits for them). */
  private readonly running = new Set<Promise<void>>();
  private readonly log: EngineLog;
  /** How long each store index took to load. */
  readonly loads = new Timings();
  /** Checkpoints written and failed: at load, in the background, at close (a failure leaves the next start a longer tail or a scan). */
  readonly checkpoints = { written: 0, failed: 0 };
  /** Told of every index that finished loading (the revision feed applies what it heard meanwhile). */
  onLoaded: ((storeId: string, index: StoreIndex) => void) | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly options: StoreIndexesOptions = {},
  ) {
    this.log = options.log ?? warn;
  }

  has(storeId: string): boolean {
    return this.loaded.has(storeId);
  }

  /** The ids of the stores whose index is loaded. */
  storeIds(): string[] {
    return [...this.loaded.keys()];
  }

  /** The loaded stores and their indexes. */
  entries(): IterableIterator<[string, StoreIndex]> {
    return this.loaded.entries();
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
      const opts: StoreIndexOptions = {
        ...this.options.index,
        onCheckpointDue: (index) => this.background(storeId, index),
      };
      p = StoreIndex.load(this.storage, storeId, opts).then(
        (index) => {
          this.loads.observe(performance.now() - t0);
          this.pending.delete(storeId);
          if (this.dropped.delete(storeId)) {
            index.close();
            throw fail.storeNotFound();
          }
          this.loaded.set(storeId, index);
          this.options.board?.attach(storeId, index);
          // A load that scanned or replayed a long tail saves its base in the background while
          // the index serves (a checkpoint never blocks the thread for long); a long tail is
          // first folded into the base by the merge the load started.
          const scanned = !index.loaded.fromCheckpoint && index.snapshot().base.layout.entries > 0;
          if (scanned || index.loaded.tailChanges >= LONG_TAIL) this.background(storeId, index, index.settled());
          this.onLoaded?.(storeId, index);
          return index;
        },
        (err: unknown) => {
          this.pending.delete(storeId);
          this.dropped.delete(storeId);
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

  /**
   * Starts a background checkpoint of the index's base, once `after` resolves (a merge in
   * progress); called by the index after a merge, and after a load.
   */
  private background(storeId: string, index: StoreIndex, after?: Promise<void>): void {
    const job = (async () => {
      await after;
      await this.record(storeId, () => index.checkpointBase(this.storage, storeId));
    })().finally(() => this.running.delete(job));
    this.running.add(job);
  }

  /** Runs one checkpoint, counting it; a failure is logged, never thrown. */
  private async record(storeId: string, write: () => Promise<CheckpointOutcome>): Promise<void> {
    try {
      if ((await write()) === 'written') this.checkpoints.written++;
    } catch (err) {
      this.checkpoints.failed++;
      this.log('warn', 'index checkpoint failed', {
        store_id: storeId,
        cause: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /** Resolves when no background checkpoint is running. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }

  /** Forgets a deleted store's index (its memory is released with the last snapshot reader); its running checkpoint stops. */
  drop(storeId: string): void {
    this.options.board?.detach(storeId, this.loaded.get(storeId));
    this.loaded.get(storeId)?.close();
    this.loaded.delete(storeId);
    // A load under way read the store before it was deleted: its index is discarded when it ends.
    if (this.pending.has(storeId)) this.dropped.add(storeId);
  }

  /** Saves a checkpoint of every loaded index (each stops its background one first), then releases them. */
  async close(): Promise<void> {
    for (const [storeId, index] of this.loaded) {
      this.options.board?.detach(storeId, index);
      await this.record(storeId, () => index.checkpoint(this.storage, storeId));
      index.close();
    }
    this.loaded.clear();
    await this.settled();
  }
}
