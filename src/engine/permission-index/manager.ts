// This node's permission indexes, per store: their definitions live in the datastore (so every
// node serves every index), their materialised state here, built from this node's tuple index and
// kept current by the RevisionFeed's AppliedObserver hook, on local writes and on revisions
// committed by other nodes alike. The hook only queues the revision (the Write is acknowledged
// without waiting for it); the maintenance runs after it, in slices of at most maintainSliceMs
// of event-loop time, each index taking the store's revisions in order. A write waits before its
// acknowledgement only while the store's backlog exceeds `maxLagChanges`. A definition created
// or deleted on another node is found on the next lookup of it (get, list, or a stream's heartbeat).

import { nextTurn } from '../../domain/turn.js';
import { ulid } from '../../domain/ids.js';
import type { TupleKey } from '../../domain/types.js';
import { AppError } from '../../errors.js';
import type { IndexSnapshot } from '../../index/store-index.js';
import { Backlog, type RevisionViews } from './backlog.js';
import type { PermissionIndexRecord, Storage } from '../../storage/types.js';
import type { AppliedObserver } from '../state/revision-feed.js';
import type { StoreIndexes } from '../state/store-indexes.js';
import type { ModelCache } from '../state/model-cache.js';
import { indexGraph } from './graph.js';
import { PermissionIndex } from './permission-index.js';
import type { CreatePermissionIndex, EngineLog, PermissionIndexLimits } from '../contract.js';

/** Work per event-loop turn while building (ms). */
const BUILD_SLICE_MS = 10;

export const indexNotFound = (id: string): AppError =>
  new AppError('index_id_not_found', `permission index '${id}' not found`);

export class PermissionIndexes implements AppliedObserver {
  private readonly byStore = new Map<string, Map<string, PermissionIndex>>();
  private readonly builds = new Set<Promise<void>>();
  private readonly backlogs = new Map<string, Backlog>();
  /** The maintenance in progress per index (a revision half applied), with its views. */
  private readonly jobs = new Map<
    PermissionIndex,
    { readonly run: Generator<void, void>; readonly views: RevisionViews; readonly revision: number }
  >();
  private scheduled = false;
  private closed = false;
  /** Time spent maintaining (ms of event-loop time), slices run, the longest slice (ms). */
  readonly maintenance = { busyMs: 0, slices: 0, longestMs: 0 };

  constructor(
    private readonly storage: Storage,
    private readonly indexes: StoreIndexes,
    private readonly models: ModelCache,
    private readonly limits: PermissionIndexLimits,
    private readonly log: EngineLog,
  ) {}

  wants(storeId: string): boolean {
    return (this.byStore.get(storeId)?.size ?? 0) > 0;
  }

  /** Queues the revision for the store's indexes (they maintain it after the write's reply). */
  applied(storeId: string, revision: number, deleted: readonly TupleKey[], written: readonly TupleKey[]): void {
    let backlog = this.backlogs.get(storeId);
    if (!backlog) this.backlogs.set(storeId, (backlog = new Backlog()));
    backlog.push({ revision, deleted, written, at: performance.now(), expansions: new Map() });
    this.schedule();
  }

  room(storeId: string): Promise<void> | undefined {
    return this.backlogs.get(storeId)?.below(this.limits.maxLagChanges);
  }

  /** Revisions queued and not yet maintained by every index of the store (tuple changes). */
  lag(storeId: string): number {
    return this.backlogs.get(storeId)?.changes ?? 0;
  }

  /** Resolves once the store's backlog, as it is now, is maintained by every index. */
  caughtUp(storeId: string): Promise<void> {
    const backlog = this.backlogs.get(storeId);
    const revision = backlog?.latest;
    if (!backlog || revision === undefined) return Promise.resolve();
    return new Promise((resolve) => backlog.onPassed(revision, resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.closed) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.maintain(this.limits.maintainSliceMs)) this.schedule();
    });
  }

  /**
   * Maintains queued revisions for about `budgetMs` (every store, every index, in revision
   * order); true while some are left. Each slice reads the stores' latest snapshots afresh.
   */
  private maintain(budgetMs: number): boolean {
    const start = performance.now();
    const left = this.maintainUntil(start + budgetMs);
    const ms = performance.now() - start;
    this.maintenance.busyMs += ms;
    this.maintenance.slices++;
    if (ms > this.maintenance.longestMs) this.maintenance.longestMs = ms;
    return left;
  }

  private maintainUntil(until: number): boolean {
    let left = false;
    let first = true;
    for (const [storeId, backlog] of this.backlogs) {
      const store = this.byStore.get(storeId);
      const index = this.indexes.peek(storeId);
      if (!store || store.size === 0 || !index) {
        this.backlogs.delete(storeId);
        backlog.release(Infinity);
        backlog.passed(Infinity);
        continue;
      }
      const snap = index.snapshot();
      let oldest = Infinity;
      for (const pi of store.values()) {
        // The slice's first index takes a step whatever the budget: every slice makes progress.
        if (first || performance.now() < until) this.advance(pi, backlog, snap, until);
        first = false;
        oldest = Math.min(oldest, pi.revision);
      }
      backlog.dropThrough(oldest);
      backlog.passed(oldest);
      backlog.release(this.limits.maxLagChanges);
      if (backlog.latest !== undefined) left = true;
    }
    return left;
  }

  /** Steps `pi` through the backlog until it is current or the slice ends. */
  private advance(pi: PermissionIndex, backlog: Backlog, snap: IndexSnapshot, until: number): void {
    for (;;) {
      let job = this.jobs.get(pi);
      if (!job) {
        const next = backlog.after(pi.revision);
        if (!next) {
          // Current: a build goes on here too (its own turns may keep landing between writes).
          if (pi.status === 'BUILDING') pi.buildStep(snap, Math.max(0, until - performance.now()));
          return;
        }
        const views = { before: backlog.view(snap, next.revision - 1), after: backlog.view(snap, next.revision) };
        job = { run: pi.maintain(next, views), views, revision: next.revision };
        this.jobs.set(pi, job);
      } else {
        job.views.before = backlog.view(snap, job.revision - 1);
        job.views.after = backlog.view(snap, job.revision);
      }
      for (;;) {
        if (job.run.next().done) {
          this.jobs.delete(pi);
          break;
        }
        if (performance.now() >= until) return;
      }
      if (performance.now() >= until) return;
    }
  }

  /** Starts every index defined for the store (at start, once the store's tuple index is loaded). */
  async loadStore(storeId: string): Promise<void> {
    for (const record of await this.storage.listPermissionIndexes(storeId)) await this.ensure(storeId, record);
  }

  /** Validates, stores and starts a new index; its status is BUILDING until the build ends. */
  async create(input: CreatePermissionIndex): Promise<PermissionIndex> {
    const model = await this.models.resolve(input.storeId, input.modelId);
    const record: PermissionIndexRecord = {
      id: ulid(),
      name: input.name,
      relations: input.relations,
      modelId: model.id,
      createdAt: new Date().toISOString(),
    };
    indexGraph(model, record.relations); // throws 400 for a relation that cannot be indexed
    await this.storage.putPermissionIndex(input.storeId, record);
    return this.ensure(input.storeId, record);
  }

  /** The index, started here if another node created it; 404 index_id_not_found when it is not defined. */
  async get(storeId: string, id: string): Promise<PermissionIndex> {
    const record = await this.storage.getPermissionIndex(storeId, id);
    if (!record) {
      this.forget(storeId, id);
      throw indexNotFound(id);
    }
    return this.ensure(storeId, record);
  }

  /** True while the definition exists in the datastore (a stream's heartbeat asks). */
  async stillDefined(storeId: string, id: string): Promise<boolean> {
    if (await this.storage.getPermissionIndex(storeId, id)) return true;
    this.forget(storeId, id);
    return false;
  }

  /** Every index of the store, in creation order, each started here if it was not. */
  async list(storeId: string): Promise<PermissionIndex[]> {
    const records = await this.storage.listPermissionIndexes(storeId);
    const ids = new Set(records.map((r) => r.id));
    for (const id of [...(this.byStore.get(storeId)?.keys() ?? [])]) if (!ids.has(id)) this.forget(storeId, id);
    const out: PermissionIndex[] = [];
    for (const r of records) out.push(await this.ensure(storeId, r));
    return out;
  }

  async delete(storeId: string, id: string): Promise<void> {
    const gone = await this.storage.deletePermissionIndex(storeId, id);
    this.forget(storeId, id);
    if (!gone) throw indexNotFound(id);
  }

  /** A deleted store: its indexes close. */
  dropStore(storeId: string): void {
    for (const pi of this.byStore.get(storeId)?.values() ?? []) {
      this.jobs.delete(pi);
      pi.close();
    }
    this.byStore.delete(storeId);
    this.backlogs.get(storeId)?.release(Infinity);
    this.backlogs.get(storeId)?.passed(Infinity);
    this.backlogs.delete(storeId);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const storeId of [...this.byStore.keys()]) this.dropStore(storeId);
    // Nothing maintains after close: writers and waiters still waiting are let go.
    for (const backlog of this.backlogs.values()) {
      backlog.release(Infinity);
      backlog.passed(Infinity);
    }
    this.backlogs.clear();
    await Promise.allSettled([...this.builds]);
  }

  private forget(storeId: string, id: string): void {
    const store = this.byStore.get(storeId);
    const pi = store?.get(id);
    if (pi) this.jobs.delete(pi);
    pi?.close();
    store?.delete(id);
    if (store?.size === 0) this.byStore.delete(storeId);
  }

  /** The loaded index of `record`, else a new one whose build starts now. */
  private async ensure(storeId: string, record: PermissionIndexRecord): Promise<PermissionIndex> {
    const hit = this.byStore.get(storeId)?.get(record.id);
    if (hit) return hit;
    const [model, index] = await Promise.all([this.models.resolve(storeId, record.modelId), this.indexes.get(storeId)]);
    const again = this.byStore.get(storeId)?.get(record.id);
    if (again) return again;
    const pi = new PermissionIndex(record, model, this.limits);
    if (this.closed) return pi;
    let store = this.byStore.get(storeId);
    if (!store) this.byStore.set(storeId, (store = new Map()));
    store.set(record.id, pi);
    // Registered and listed in one step: every later revision reaches it through `applied`.
    pi.startBuild(index.snapshot());
    const build = this.build(storeId, pi).finally(() => this.builds.delete(build));
    this.builds.add(build);
    return pi;
  }

  private async build(storeId: string, pi: PermissionIndex): Promise<void> {
    const t0 = performance.now();
    for (;;) {
      const index = this.indexes.peek(storeId);
      if (!index || pi.deleted || this.closed) return;
      // The queued revisions first (the build reads the revision the index has reached), then a
      // build slice: writes landing between every turn cannot starve the build.
      if (this.maintain(this.limits.maintainSliceMs)) this.schedule();
      if (pi.buildStep(index.snapshot(), BUILD_SLICE_MS)) break;
      await nextTurn();
    }
    pi.buildMs = performance.now() - t0;
    if (pi.status === 'FAILED')
      this.log('warn', 'permission index build failed', {
        store_id: storeId,
        index_id: pi.record.id,
        reason: pi.reason,
      });
  }
}
