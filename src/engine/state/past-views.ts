// Past views: a store's index as it was at an earlier revision, for queries with `at` (latch
// extension, docs/audit.md). A view is built from the live snapshot and the changelog read back
// from its revision to the target (src/index/past.ts undoes the difference in a private overlay),
// so the live index, its overlay and its snapshots are never written. Memory is bounded by
// `maxUndo` (the changes one view may undo) and a small cache of the most recent views.
//
// Example: live revision 1,000, `at: {revision: 990}` → the changes of revisions 991..1,000 are
// read, each key's first change after 990 says whether it existed then (first change a delete)
// or not (first change a write); an existing one is restored as that delete recorded it (its
// `prior`), or else as the last write of that key up to 990.

import type { Store, TupleKey } from '../../domain/types.js';
import { AppError } from '../../errors.js';
import { pastSnapshot, type Undo } from '../../index/past.js';
import type { IndexSnapshot, StoreIndex } from '../../index/store-index.js';
import type { RevisionChange, Storage } from '../../storage/types.js';
import { DEFAULT_HISTORY_LIMITS } from '../config.js';
import type { HistoryLimits, PastPoint } from '../contract.js';
import type { RevisionFeed } from './revision-feed.js';
import type { StoreIndexes } from './store-indexes.js';

/** The store as a query at a past point sees it. */
interface PastView {
  readonly snapshot: IndexSnapshot;
  readonly revision: number;
  /** The instant tuple expiry is judged at, and the latest model is chosen at (ms). */
  readonly instant: number;
}

/** Commit times of past revisions remembered at most (≈ 100 B each). */
const REMEMBERED_TIMES = 4096;

const keyOf = (t: TupleKey): string => `${t.object}#${t.relation}@${t.user}`;

export class PastViews {
  private readonly cache = new Map<string, { readonly index: StoreIndex; readonly snapshot: IndexSnapshot }>();
  /** Commit times of revisions queried (`${store}\0${revision}` → ms). */
  private readonly times = new Map<string, number>();

  constructor(
    private readonly storage: Storage,
    private readonly indexes: StoreIndexes,
    private readonly feed: RevisionFeed,
    private readonly limits: HistoryLimits = DEFAULT_HISTORY_LIMITS,
  ) {}

  /** The view at `at`; 400 for a point in the future, before the store, or too far back. */
  async view(store: Store, at: PastPoint, deadline: number): Promise<PastView> {
    let index = await this.indexes.get(store.id);
    const { revision, instant } = await this.target(store, at, index.currentRevision);
    if (index.currentRevision < revision)
      index = await this.feed.fresh(store.id, { consistency: 'MINIMIZE_LATENCY', minRevision: revision }, deadline);
    const live = index.snapshot();
    if (live.revision === revision) return { snapshot: live, revision, instant };
    const key = `${store.id}\u0000${revision}`;
    const hit = this.cache.get(key);
    if (hit && hit.index === index) return { snapshot: hit.snapshot, revision, instant };
    live.pin();
    let snapshot: IndexSnapshot;
    try {
      const undo = await this.undo(store.id, revision, live.revision);
      snapshot = pastSnapshot(live, revision, undo);
    } finally {
      live.unpin();
    }
    this.remember(key, index, snapshot);
    return { snapshot, revision, instant };
  }

  /** Commit time of a committed revision, remembered (REMEMBERED_TIMES, oldest forgotten first). */
  private async revisionTime(storeId: string, revision: number): Promise<number | undefined> {
    const key = `${storeId}\u0000${revision}`;
    const known = this.times.get(key);
    if (known !== undefined) return known;
    const ms = await this.storage.revisionTime(storeId, revision);
    if (ms === undefined) return undefined;
    this.times.set(key, ms);
    if (this.times.size > REMEMBERED_TIMES) this.times.delete(this.times.keys().next().value as string);
    return ms;
  }

  /** Forgets the views of a deleted store. */
  forgetStore(storeId: string): void {
    for (const k of this.times.keys()) if (k.startsWith(`${storeId}\u0000`)) this.times.delete(k);
    for (const [k, v] of this.cache)
      if (k.startsWith(`${storeId}\u0000`)) {
        v.snapshot.retire(0);
        this.cache.delete(k);
      }
  }

  private remember(key: string, index: StoreIndex, snapshot: IndexSnapshot): void {
    if (this.limits.cachedViews <= 0) return snapshot.retire(0);
    this.cache.delete(key);
    this.cache.set(key, { index, snapshot });
    while (this.cache.size > this.limits.cachedViews) {
      const [oldest, entry] = this.cache.entries().next().value as [string, { snapshot: IndexSnapshot }];
      this.cache.delete(oldest);
      entry.snapshot.retire(0);
    }
  }

  /**
   * The revision and instant `at` names, checked against the store's history. A revision at or
   * below the live index's (`indexed`) is committed, and its commit time never changes: neither
   * asks the datastore again (on PostgreSQL each would be a round trip per query).
   */
  private async target(store: Store, at: PastPoint, indexed: number): Promise<{ revision: number; instant: number }> {
    const created = Date.parse(store.created_at);
    if ('revision' in at) {
      if (at.revision > indexed) {
        const head = await this.storage.revision(store.id);
        if (at.revision > head)
          throw new AppError('revision_in_future', `revision ${at.revision} is after the store's revision ${head}`);
      }
      if (at.revision === 0) return { revision: 0, instant: at.time ?? created };
      const ms = await this.revisionTime(store.id, at.revision);
      if (ms === undefined)
        throw new AppError('revision_not_retained', `revision ${at.revision} is not in the store's changelog`);
      return { revision: at.revision, instant: at.time ?? ms };
    }
    if (at.time > Date.now()) throw new AppError('revision_in_future', 'at_time is in the future');
    if (at.time < created)
      throw new AppError('time_before_store', `at_time is before the store was created (${store.created_at})`);
    const r = await this.storage.revisionAt(store.id, at.time);
    return { revision: r?.revision ?? 0, instant: at.time };
  }

  /** The net difference between revisions `from` (target) and `to` (the live snapshot's). */
  private async undo(storeId: string, from: number, to: number): Promise<Undo> {
    // Per key, its first change after `from`: a write → absent then; a delete → present then.
    const first = new Map<string, RevisionChange>();
    let n = 0;
    for await (const c of this.storage.changesSince(storeId, from)) {
      if (c.revision > to) break;
      if (++n > this.limits.maxUndo)
        throw new AppError(
          'revision_too_far_back',
          `revision ${from} is more than ${this.limits.maxUndo} changes before the store's revision ${to}`,
        );
      const k = keyOf(c.tuple);
      if (!first.has(k)) first.set(k, c);
    }
    const absent: TupleKey[] = [];
    const present: TupleKey[] = [];
    const wanted = new Set<string>();
    for (const [k, c] of first) {
      if (c.operation === 'write') absent.push(c.tuple);
      else if (c.prior) present.push(c.prior);
      else wanted.add(k);
    }
    present.push(...(await this.statesAt(storeId, wanted, from)));
    return { absent, present };
  }

  /**
   * The stored form (condition, expiry) at revision `at` of keys known to exist then: the last
   * write of each up to `at`, read forward through the changelog. Only for deletes logged without
   * the deleted tuple's state (RevisionChange.prior: LevelDB entries written before it was
   * recorded): costs a read of the changelog up to `at`.
   */
  private async statesAt(storeId: string, wanted: ReadonlySet<string>, at: number): Promise<TupleKey[]> {
    if (wanted.size === 0) return [];
    const last = new Map<string, TupleKey>();
    for await (const c of this.storage.changesSince(storeId, 0)) {
      if (c.revision > at) break;
      if (c.operation === 'write' && wanted.has(keyOf(c.tuple))) last.set(keyOf(c.tuple), c.tuple);
    }
    if (last.size < wanted.size)
      throw new AppError('revision_not_retained', `the changelog no longer holds the tuples of revision ${at}`);
    return [...last.values()];
  }
}
