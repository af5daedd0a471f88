// This node's permission indexes, per store: their definitions live in the datastore (so every
// node serves every index), their materialised state here, built from this node's tuple index and
// kept current by the RevisionFeed's AppliedObserver hook, on local writes and on revisions committed
// by other nodes alike. A definition created or deleted on another node is found on the next
// lookup of it (get, list, or a stream's heartbeat).

import { ulid } from '../../domain/ids.js';
import type { TupleKey } from '../../domain/types.js';
import { AppError } from '../../errors.js';
import type { IndexSnapshot } from '../../index/store-index.js';
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
  private closed = false;

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

  applied(
    storeId: string,
    before: IndexSnapshot,
    after: IndexSnapshot,
    revision: number,
    deleted: readonly TupleKey[],
    written: readonly TupleKey[],
  ): void {
    for (const pi of this.byStore.get(storeId)?.values() ?? []) pi.applied(before, after, revision, deleted, written);
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
    for (const pi of this.byStore.get(storeId)?.values() ?? []) pi.close();
    this.byStore.delete(storeId);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const storeId of [...this.byStore.keys()]) this.dropStore(storeId);
    await Promise.allSettled([...this.builds]);
  }

  private forget(storeId: string, id: string): void {
    const store = this.byStore.get(storeId);
    store?.get(id)?.close();
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
      if (pi.buildStep(index.snapshot(), BUILD_SLICE_MS)) break;
      await new Promise((resolve) => setImmediate(resolve));
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
