// The one write path of tuples: Write, delete-by-filter and the expiry sweeper all commit through
// `StoreWriter.write`, which runs in the store's write order, times the storage commit and applies
// the committed revision to the store's index before it resolves. Hence a query on this node that
// starts after an acknowledged write sees it, and revisions reach the index in commit order.
//
// Write order: on a datastore that orders a store's writes itself (`Storage.ordersWrites`:
// PostgreSQL) writes run at once and the revision feed applies their revisions in order whichever
// answer comes first (`applyLocal` catches up from the change log); elsewhere each write of a
// store waits until every earlier one of this node has settled (commit order = revision order).

import type { StoreIndex } from '../../index/store-index.js';
import type { Storage, TupleWrite, WriteResult } from '../../storage/types.js';
import type { RevisionFeed } from './revision-feed.js';
import type { StoreIndexes } from './store-indexes.js';
import { Timings } from '../stats.js';
import type { PriorityLane } from '../../domain/turn.js';

/** Commits one storage write of a store and applies its result to the store's index. */
type Commit = (write: (storage: Storage) => Promise<WriteResult>) => Promise<WriteResult>;

export class StoreWriter {
  /** Storage commit latency of every tuple write. */
  readonly timings = new Timings();
  private readonly queues = new Map<string, Promise<unknown>>();

  /**
   * `importLane` is open while a bulk import chunk is planned on this thread
   * (Storage.importTuples): the validation of other chunks and the indexes' background merges
   * wait for it between their slices (PriorityLane).
   */
  constructor(
    private readonly storage: Storage,
    private readonly indexes: StoreIndexes,
    private readonly feed: RevisionFeed,
    readonly importLane: PriorityLane,
  ) {}

  /**
   * Runs `txn` in the store's write order (loading the store's index first: an unknown store
   * throws store_id_not_found). `txn` may read, then commits its writes through `commit`; reads
   * and writes of one `txn` see no other write of this node in between.
   */
  async write<T>(storeId: string, txn: (commit: Commit) => Promise<T>): Promise<T> {
    const index = await this.indexes.get(storeId);
    const commit: Commit = async (write) => {
      const t0 = performance.now();
      const result = await write(this.storage);
      this.timings.observe(performance.now() - t0);
      // Through the revision feed: another node may have committed a revision in between.
      await this.feed.applyLocal(storeId, index, result);
      return result;
    };
    return this.storage.ordersWrites ? txn(commit) : this.queued(storeId, () => txn(commit));
  }

  /**
   * A guarded tuple write: `guard` sees the store's index holding every revision committed before
   * the write, and the write applies only if `guard` returns (a throw → nothing written, thrown).
   * Memory and LevelDB: in the store's write order, where the index holds every earlier
   * acknowledged write. PostgreSQL: under the store's row lock (Storage.writeTuplesGuarded) the
   * index first catches up to the locked revision from the change log (this node may lag other
   * nodes), waiting at most until `deadline` (Date.now() ms; past it throttled_timeout_error).
   */
  guardedWrite(
    storeId: string,
    write: TupleWrite,
    deadline: number,
    guard: (index: StoreIndex) => void,
  ): Promise<WriteResult> {
    return this.write(storeId, (commit) =>
      commit(async (storage) => {
        if (!storage.writeTuplesGuarded) {
          guard(await this.indexes.get(storeId));
          return storage.writeTuples(storeId, write);
        }
        return storage.writeTuplesGuarded(storeId, write, async (revision) =>
          guard(await this.feed.waitFor(storeId, revision, deadline)),
        );
      }),
    );
  }

  /** Resolves when every write queued now has settled (close). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.queues.values()]);
  }

  /** Runs `fn` after every earlier queued write to the same store has settled. */
  private queued<T>(storeId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.queues.get(storeId) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const settled = next.then(
      () => undefined,
      () => undefined,
    );
    this.queues.set(storeId, settled);
    void settled.then(() => {
      if (this.queues.get(storeId) === settled) this.queues.delete(storeId);
    });
    return next;
  }
}
