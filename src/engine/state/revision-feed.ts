// The revision feed: keeps this node's loaded store indexes and model caches current with the
// datastore, whatever node committed the change (this node's own writes arrive through
// `applyLocal`, from the store writer): it applies each revision of the change log as one atomic step, in
// revision order, woken by the storage's commit events and by a poll of `revision()` (events may
// be late, doubled or, across nodes, lost). It also answers "wait until the index of store S has
// applied revision n" for HIGHER_CONSISTENCY and Latch-Min-Revision queries.
//
// Invariant: an index only ever moves from revision r to r + 1, with all of revision r + 1's
// changes applied in one synchronous call (`StoreIndex.apply`), so a snapshot, which is taken
// between two turns of the event loop, holds every change of a revision or none of it.

import type { Consistency, TupleKey } from '../../domain/types.js';
import { AppError } from '../../errors.js';
import type { StoreIndex } from '../../index/store-index.js';
import type { RevisionChanges, Storage, StorageEvent, WriteResult } from '../../storage/types.js';
import type { StoreIndexes } from './store-indexes.js';
import type { ModelCache } from './model-cache.js';
import { Timings } from '../stats.js';
import type { EngineLog, ReplicationStats } from '../contract.js';

/** What a query asks of its index's freshness. */
export interface Freshness {
  readonly consistency: Consistency;
  readonly minRevision?: number | undefined;
  /** The query's model id: without one, HIGHER_CONSISTENCY also reads the latest model's id. */
  readonly modelId?: string | undefined;
}

/** A query waiting for its store's index to reach `revision`. */
interface Waiter {
  readonly revision: number;
  readonly resolve: (index: StoreIndex) => void;
  readonly reject: (err: AppError) => void;
  readonly timer: NodeJS.Timeout;
}

/** One catch-up loop of a store; `target` may rise while it runs. */
interface Run {
  target: number;
  done: Promise<void>;
}

/**
 * Told of every revision an index applies, right after it, in the same synchronous step, in
 * revision order (the permission indexes queue it and maintain it later, off the write's path).
 */
export interface AppliedObserver {
  /** False when nothing of the store follows its revisions. */
  wants(storeId: string): boolean;
  applied(storeId: string, revision: number, deleted: readonly TupleKey[], written: readonly TupleKey[]): void;
  /**
   * A local write waits on this before it is acknowledged (undefined: no wait): the bound on
   * what the observer may lag behind.
   */
  room(storeId: string): Promise<void> | undefined;
}

interface RevisionFeedOptions {
  /** How often every loaded store's committed revision is read (ms; 0 = never: events only). */
  readonly pollIntervalMs: number;
  readonly log: EngineLog;
}

export class RevisionFeed {
  private readonly runs = new Map<string, Run>();
  private readonly waiters = new Map<string, Waiter[]>();
  /** The highest committed revision heard of per store that is not loaded yet (applied once it is). */
  private readonly heard = new Map<string, number>();
  private readonly unsubscribe: () => void;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private closed = false;
  /** The poll's last failure was logged: the next success logs the recovery. */
  private pollDown = false;
  /** Per store, the commit events not applied yet: [revision, performance.now() at receipt] pairs, oldest first. */
  private readonly heardAt = new Map<string, number[]>();
  readonly stats: ReplicationStats & { readonly applyLag: Timings } = {
    revisionsApplied: 0,
    revisionsCarried: 0,
    applyLag: new Timings(),
    catchUpFailures: 0,
    polls: 0,
    pollFailures: 0,
  };
  /** Told of every applied revision (set once by the service). */
  observer: AppliedObserver | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly indexes: StoreIndexes,
    private readonly models: ModelCache,
    private readonly options: RevisionFeedOptions,
  ) {
    this.unsubscribe = storage.subscribe((event) => this.onEvent(event));
    if (options.pollIntervalMs > 0) {
      this.timer = setInterval(() => void this.poll(), options.pollIntervalMs);
      this.timer.unref();
    }
  }

  /** Stops events and polling; pending waiters fail with `unavailable`. */
  close(): void {
    this.closed = true;
    this.unsubscribe();
    if (this.timer) clearInterval(this.timer);
    for (const storeId of [...this.waiters.keys()])
      this.failWaiters(storeId, new AppError('unavailable', 'latch is shutting down'));
  }

  /** Resolves when no catch-up is running (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.runs.size > 0) await Promise.allSettled([...this.runs.values()].map((r) => r.done));
  }

  /** The listener given to `Storage.subscribe`: runs synchronously and never throws. */
  private onEvent(event: StorageEvent): void {
    if (this.closed) return;
    try {
      // Deferred one turn: this node's own write is reported from inside the storage call, and its
      // write path applies it right after (no log read needed) before the catch-up looks.
      if (event.kind === 'tuples') this.noteHeard(event.storeId, event.revision);
      if (event.kind === 'tuples' && event.changes && this.applyCarried(event.storeId, event.revision, event.changes))
        return;
      if (event.kind === 'tuples')
        setImmediate(() => void this.catchUp(event.storeId, event.revision).catch(() => undefined));
      else if (event.kind === 'model') this.models.noteLatestChanged(event.storeId, event.modelId);
      else if (event.deleted) this.dropStore(event.storeId);
    } catch (err) {
      this.options.log('warn', 'storage event not handled', {
        store_id: event.storeId,
        kind: event.kind,
        cause: String(err),
      });
    }
  }

  /**
   * Applies a revision whose event carries its changes (another node's commit: the event comes
   * after the commit, in commit order) when it is the next one of the loaded index; false when it
   * is not (not loaded, or the index is behind: the log is read instead, in order).
   */
  private applyCarried(storeId: string, revision: number, changes: RevisionChanges): boolean {
    const index = this.indexes.peek(storeId);
    if (!index || revision !== index.currentRevision + 1) return false;
    this.applyFollowed(storeId, index, revision, [...changes.deleted], [...changes.written]);
    this.stats.revisionsCarried++;
    return true;
  }

  /** Applies another node's revision (the index's next one), counts and times it, wakes waiters. */
  private applyFollowed(
    storeId: string,
    index: StoreIndex,
    revision: number,
    deleted: TupleKey[],
    written: TupleKey[],
  ): void {
    this.apply(storeId, index, { revision, timestamp: '', deleted, written });
    this.stats.revisionsApplied++;
    this.applied(storeId, revision, true);
    this.notify(storeId, index);
  }

  /** Remembers when the event of `revision` arrived (at most 256 pending per store: the oldest go). */
  private noteHeard(storeId: string, revision: number): void {
    if ((this.indexes.peek(storeId)?.currentRevision ?? 0) >= revision) return;
    const list = this.heardAt.get(storeId);
    if (!list) return void this.heardAt.set(storeId, [revision, performance.now()]);
    if (list.length >= 512) list.splice(0, 2);
    list.push(revision, performance.now());
  }

  /** Forgets the events the index has applied, timing them when the log replay applied them. */
  private applied(storeId: string, revision: number, timed: boolean): void {
    const list = this.heardAt.get(storeId);
    if (!list) return;
    const now = performance.now();
    let i = 0;
    for (; i < list.length && (list[i] as number) <= revision; i += 2)
      if (timed) this.stats.applyLag.observe(now - (list[i + 1] as number));
    if (i >= list.length) this.heardAt.delete(storeId);
    else if (i > 0) list.splice(0, i);
  }

  /** A deleted store: its index and cached models go, its waiters fail with store_id_not_found. */
  dropStore(storeId: string): void {
    this.heard.delete(storeId);
    this.heardAt.delete(storeId);
    this.indexes.drop(storeId);
    this.models.forgetStore(storeId);
    this.failWaiters(storeId, new AppError('store_id_not_found', 'Store ID not found'));
  }

  /**
   * A store this node stops holding (placement moved it elsewhere): its index goes; waiters fail
   * with `unavailable` (the store is answered by its other owners).
   */
  releaseStore(storeId: string): void {
    this.heard.delete(storeId);
    this.heardAt.delete(storeId);
    this.indexes.drop(storeId);
    this.failWaiters(storeId, new AppError('unavailable', 'the store moved to another node'));
  }

  /** Called by StoreIndexes when a store's index finished loading: applies what was heard meanwhile. */
  loaded(storeId: string, index: StoreIndex): void {
    this.applied(storeId, index.currentRevision, false);
    this.notify(storeId, index);
    const heard = this.heard.get(storeId);
    this.heard.delete(storeId);
    if (heard !== undefined && heard > index.currentRevision) void this.catchUp(storeId, heard).catch(() => undefined);
  }

  /**
   * Applies a write this node committed. Its revision follows the index's → applied at once;
   * another node committed in between → the index first catches up from the log (which holds
   * this write too), so revisions are always applied in order. Resolves when the index holds it.
   */
  async applyLocal(storeId: string, index: StoreIndex, result: WriteResult): Promise<void> {
    if (result.revision <= index.currentRevision) return;
    if (result.revision === index.currentRevision + 1) {
      this.apply(storeId, index, result);
      this.applied(storeId, result.revision, false);
      this.notify(storeId, index);
    } else await this.catchUp(storeId, result.revision);
    const room = this.observer?.room(storeId);
    if (room) await room;
  }

  /** Applies one revision to the index and tells the observer, in one synchronous step. */
  private apply(storeId: string, index: StoreIndex, result: WriteResult): void {
    index.apply(result);
    if (this.observer?.wants(storeId)) this.observer.applied(storeId, result.revision, result.deleted, result.written);
  }

  /**
   * The store's index once it has applied `revision`, waiting at most until `deadline`
   * (Date.now() ms): past it, 422 throttled_timeout_error. Reads nothing from storage unless the
   * index is behind, and then only the change log.
   */
  async waitFor(storeId: string, revision: number, deadline: number): Promise<StoreIndex> {
    const index = await this.indexes.get(storeId);
    if (index.currentRevision >= revision) return index;
    const wait = new Promise<StoreIndex>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          this.removeWaiter(storeId, waiter);
          const now = this.indexes.peek(storeId)?.currentRevision ?? 0;
          reject(
            new AppError(
              'throttled_timeout_error',
              `timeout waiting for the index to reach revision ${revision} (applied: ${now})`,
            ),
          );
        },
        Math.max(0, deadline - Date.now()),
      );
      const waiter: Waiter = { revision, resolve, reject, timer };
      const list = this.waiters.get(storeId);
      if (list) list.push(waiter);
      else this.waiters.set(storeId, [waiter]);
    });
    void this.catchUp(storeId, revision).catch(() => undefined);
    return wait;
  }

  /**
   * The store's index, fresh enough for a query: HIGHER_CONSISTENCY reads the store's committed
   * revision (one storage round trip; without a model id the latest model id is read alongside)
   * and waits until the index has applied it; `minRevision` (Latch-Min-Revision) waits for that
   * revision without reading storage. Both waits end at `deadline` (422 throttled_timeout_error).
   */
  async fresh(storeId: string, q: Freshness, deadline: number): Promise<StoreIndex> {
    let target = q.minRevision ?? 0;
    if (q.consistency === 'HIGHER_CONSISTENCY') {
      const [committed] = await Promise.all([
        this.storage.revision(storeId),
        q.modelId ? undefined : this.models.refreshLatest(storeId),
      ]);
      target = Math.max(target, committed);
    }
    const index = await this.indexes.get(storeId);
    return index.currentRevision >= target ? index : this.waitFor(storeId, target, deadline);
  }

  /**
   * Brings the store's loaded index to `target` (a revision known to be committed, or asked for)
   * from the change log. One loop per store: a call while one runs raises its target and shares it.
   * Rejects when storage fails (the loop is retried by the next event, poll or waiter).
   */
  catchUp(storeId: string, target: number): Promise<void> {
    const index = this.indexes.peek(storeId);
    if (!index) {
      // Not loaded (or loading): the load reads the log to its end; what it misses comes here.
      if (target > (this.heard.get(storeId) ?? 0)) this.heard.set(storeId, target);
      return Promise.resolve();
    }
    if (index.currentRevision >= target) return Promise.resolve();
    const running = this.runs.get(storeId);
    if (running) {
      running.target = Math.max(running.target, target);
      return running.done;
    }
    const run: Run = { target, done: Promise.resolve() };
    run.done = this.loop(storeId, run).finally(() => this.runs.delete(storeId));
    this.runs.set(storeId, run);
    return run.done;
  }

  private async loop(storeId: string, run: Run): Promise<void> {
    try {
      for (;;) {
        const index = this.indexes.peek(storeId);
        if (!index || this.closed || index.currentRevision >= run.target) return;
        const before = index.currentRevision;
        await this.replay(storeId, index, run.target);
        // Nothing in the log past the index (a revision asked for but not committed, or a store
        // deleted meanwhile): stop; a later event, poll or waiter starts a new loop.
        if (index.currentRevision === before) return;
      }
    } catch (err) {
      this.stats.catchUpFailures++;
      this.options.log('warn', 'index catch-up failed', {
        store_id: storeId,
        cause: err instanceof Error ? err.message : String(err),
      });
      throw err;
    }
  }

  /** Applies the log's revisions after the index's, up to `target`, one revision per step. */
  private async replay(storeId: string, index: StoreIndex, target: number): Promise<void> {
    let revision = 0;
    let deleted: TupleKey[] = [];
    let written: TupleKey[] = [];
    const flush = (): boolean => {
      if (revision === 0) return true;
      // Dropped or reloaded meanwhile, or a revision missing before this one: stop here.
      if (this.indexes.peek(storeId) !== index || revision > index.currentRevision + 1) return false;
      if (revision === index.currentRevision + 1) this.applyFollowed(storeId, index, revision, deleted, written);
      deleted = [];
      written = [];
      return true;
    };
    for await (const ch of this.storage.changesSince(storeId, index.currentRevision)) {
      if (ch.revision !== revision) {
        if (!flush()) return;
        // Revisions past the target may still be committing elsewhere: only a revision known to
        // be committed is complete in what the log returned.
        if (ch.revision > target) return;
        revision = ch.revision;
      }
      if (ch.operation === 'delete') deleted.push(ch.tuple);
      else written.push(ch.tuple);
    }
    flush();
  }

  /**
   * Reads every loaded store's committed revision (and whether it still exists) and catches up
   * the ones behind: the fallback for datastores without change notification and for lost events.
   */
  async poll(): Promise<void> {
    if (this.polling || this.closed) return;
    this.polling = true;
    this.stats.polls++;
    try {
      const ids = this.indexes.storeIds();
      if (this.storage.revisions) {
        const revisions = await this.storage.revisions(ids);
        if (!this.closed) {
          for (const [id, revision] of revisions) {
            if (revision === undefined) this.dropStore(id);
            else void this.catchUp(id, revision).catch(() => undefined);
          }
        }
      } else await Promise.all(ids.map((id) => this.pollStore(id)));
      if (this.pollDown) this.options.log('warn', 'datastore reachable again: replication resumed', {});
      this.pollDown = false;
    } catch (err) {
      this.stats.pollFailures++;
      if (!this.pollDown)
        this.options.log('warn', 'replication poll failed; retrying', {
          cause: err instanceof Error ? err.message : String(err),
        });
      this.pollDown = true;
    } finally {
      this.polling = false;
    }
  }

  private async pollStore(storeId: string): Promise<void> {
    const [revision, store] = await Promise.all([this.storage.revision(storeId), this.storage.getStore(storeId)]);
    if (this.closed) return;
    if (!store) return this.dropStore(storeId);
    await this.catchUp(storeId, revision);
  }

  /** Resolves the store's waiters whose revision the index has reached. */
  private notify(storeId: string, index: StoreIndex): void {
    const list = this.waiters.get(storeId);
    if (!list) return;
    const now = index.currentRevision;
    const left: Waiter[] = [];
    for (const w of list) {
      if (w.revision <= now) {
        clearTimeout(w.timer);
        w.resolve(index);
      } else left.push(w);
    }
    if (left.length === 0) this.waiters.delete(storeId);
    else this.waiters.set(storeId, left);
  }

  private removeWaiter(storeId: string, waiter: Waiter): void {
    const list = this.waiters.get(storeId);
    if (!list) return;
    const left = list.filter((w) => w !== waiter);
    if (left.length === 0) this.waiters.delete(storeId);
    else this.waiters.set(storeId, left);
  }

  private failWaiters(storeId: string, err: AppError): void {
    const list = this.waiters.get(storeId);
    this.waiters.delete(storeId);
    for (const w of list ?? []) {
      clearTimeout(w.timer);
      w.reject(err);
    }
  }
}
