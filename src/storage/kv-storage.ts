// The Storage contract over an ordered key-value map (LevelDB or memory): store lifecycle,
// per-store write serialization, models, assertions and checkpoints. Tuple writes are planned in
// ./write-plan.ts, reads served by ./tuples.ts and ./changes.ts.
//
// Liveness: the set of live stores is held in memory (loaded at open). A store-scoped read of an
// unknown or deleted store returns empty results; a store-scoped mutation throws
// store_id_not_found. Every mutation runs under the store's mutex and re-checks liveness there,
// so nothing is written to a store after its tombstone.

import { randomBytes } from 'node:crypto';
import type { PriorityLane } from '../domain/turn.js';
import { fail } from '../errors.js';
import { isUlid, ulid, ulidTime } from '../domain/ids.js';
import type {
  Assertion,
  AuthorizationModel,
  AuthorizationModelInput,
  Store,
  Tuple,
  TupleKey,
} from '../domain/types.js';
import { changesSince, readChanges, revisionAt, revisionTime } from './changes.js';
import { CheckpointGenerations, readCheckpoint, writeAllChunks } from './checkpoint.js';
import {
  decodeJson,
  decodeRevision,
  decodeTupleValue,
  encodeJson,
  key,
  NO_BY_USER_KEYS,
  prefixEnd,
  STORE,
  TOMBSTONE,
  withValue,
} from './codec.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { KeyedMutex, type Kv, type KvWriter } from './kv.js';
import { Reclaimer } from './reclaim.js';
import { readTuples, scanTuples } from './tuples.js';
import { planMatchingDeletes, ScanAhead } from './delete-matching.js';
import {
  expiredTuples,
  firstExpiry,
  loadState,
  planImport,
  planWrite,
  type PlannedWrite,
  type StoreState,
} from './write-plan.js';
import type {
  ChangePage,
  ChangeQuery,
  CheckpointWriter,
  DeletedMatching,
  HeldHint,
  Page,
  PageRequest,
  PermissionIndexRecord,
  ShadowSetting,
  RevisionChange,
  Storage,
  StorageEvent,
  StoreQuery,
  TupleFilter,
  TupleWrite,
  WriteResult,
} from './types.js';

type TupleId = Pick<TupleKey, 'object' | 'relation' | 'user'>;

async function* nothing<T>(): AsyncGenerator<T> {}

/**
 * How long a stopped delete-by-filter scan waits for the same filter's next request before its
 * iterator (and LevelDB snapshot) is closed: a client deleting in pages sends the next request
 * at once; one that does not holds, this long, the rows read ahead (delete-matching.ts
 * AHEAD_ROWS, and the rest of one native read).
 */
const REST_MS = 2000;

/** Where a store's last delete by filter stopped (KvStorage.resumes). */
interface Resume {
  readonly filter: string;
  readonly revision: number;
  readonly after: string;
  rest: ScanAhead | undefined;
  timer: NodeJS.Timeout | undefined;
}

/** Closes a stopped scan nobody will take (a failed close only loses a read ahead). */
function drop(resume: Resume | undefined): Promise<void> {
  if (!resume) return Promise.resolve();
  clearTimeout(resume.timer);
  const rest = resume.rest;
  resume.rest = undefined;
  return rest ? rest.close().catch(() => undefined) : Promise.resolve();
}

interface KvStorageOptions {
  /** Reclaim deleted stores in the background (default true; tests turn it off to test resumption). */
  readonly reclaim?: boolean | undefined;
}

export class KvStorage implements Storage {
  private readonly stores = new Map<string, Store>();
  private readonly states = new Map<string, StoreState>();
  /** One process owns the data: the service queues a store's writes (see Storage.ordersWrites). */
  readonly ordersWrites = false;
  /** No by-user keys (Storage.readsByUser): the engine reads that shape from its index. */
  readonly readsByUser = false;
  private readonly mutex = new KeyedMutex();
  private readonly reclaimer: Reclaimer;
  private readonly checkpoints: CheckpointGenerations;
  private readonly listeners = new Set<(event: StorageEvent) => void>();
  /**
   * Per store, where the last delete by filter that left more matches stopped: its filter, the
   * revision it committed and the scan key of its last deleted tuple. Every tuple of that filter
   * before the key is gone, so while the store is still at that revision (no write since) the
   * same filter's next request starts after the key instead of reading again, from the range's
   * start, every non-matching tuple and deleted key before it (bulk deletes in requests of
   * `limit` read the range once, not once per request). For REST_MS it also holds the stopped
   * scan itself, still reading ahead (delete-matching.ts ScanAhead): the next request takes its
   * rows instead of reading them.
   */
  private readonly resumes = new Map<string, Resume>();
  constructor(
    readonly kind: string,
    private readonly kv: Kv,
    private readonly options: KvStorageOptions = {},
  ) {
    this.reclaimer = new Reclaimer(kv);
    this.checkpoints = new CheckpointGenerations(kv, (storeId, fn) => this.exclusive(storeId, fn));
  }

  /** In-process events: every commit made through this object, after it is durable. */
  subscribe(listener: (event: StorageEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: StorageEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /** Loads the live stores, resumes the reclamation of tombstoned ones and drops stale by-user keys. */
  async init(): Promise<this> {
    for await (const [, v] of this.kv.entries({ gt: STORE, lt: prefixEnd(STORE) })) {
      const s = decodeJson<Store>(v);
      this.stores.set(s.id, s);
    }
    for await (const k of this.kv.keys({ gt: TOMBSTONE, lt: prefixEnd(TOMBSTONE) })) this.scheduleReclaim(k.slice(1));
    if (this.options.reclaim !== false) await this.dropStaleByUserKeys();
    return this;
  }

  /**
   * By-user keys an older version wrote: nothing reads or maintains them now (readsByUser). Each
   * store is looked at (one seek) and those that have some are cleaned in the background, until
   * an open finds none: then a marker (codec.ts NO_BY_USER_KEYS) is stored, no version writes
   * them again, and later opens look no more.
   */
  private async dropStaleByUserKeys(): Promise<void> {
    const marker = key.meta(NO_BY_USER_KEYS);
    if (await this.kv.get(marker)) return;
    let stale = 0;
    for (const id of this.stores.keys()) {
      const prefix = key.byUser(id);
      for await (const _ of this.kv.keys({ gte: prefix, lt: prefixEnd(prefix), limit: 1 })) {
        this.reclaimer.scheduleStale(prefix);
        stale++;
      }
    }
    if (stale === 0) await this.kv.batch([{ type: 'put', key: marker, value: new Uint8Array(1) }], true);
  }

  /** Lets queued mutations finish, stops reclamation (it resumes at the next open), closes. */
  async close(): Promise<void> {
    await this.mutex.idle();
    await Promise.all([...this.resumes.values()].map(drop));
    this.resumes.clear();
    await this.reclaimer.stop();
    await this.kv.close();
  }

  /** Resolves once background reclamation has caught up (tests, shutdown tooling). */
  settled(): Promise<void> {
    return this.reclaimer.settled();
  }

  /** Number of keys (including the record or tombstone) that the store occupies; counted with an iterator. */
  async countStoreKeys(storeId: string): Promise<number> {
    let n = 0;
    const data = key.data(storeId);
    for await (const _ of this.kv.keys({ gte: data, lt: prefixEnd(data) })) n++;
    for (const k of [key.store(storeId), key.tombstone(storeId)]) if (await this.kv.get(k)) n++;
    return n;
  }

  // ---- stores ----

  async createStore(name: string): Promise<Store> {
    const now = new Date().toISOString();
    const store: Store = { id: ulid(), name, created_at: now, updated_at: now };
    await this.kv.batch([{ type: 'put', key: key.store(store.id), value: encodeJson(store) }], true);
    this.stores.set(store.id, store);
    this.emit({ kind: 'store', storeId: store.id, deleted: false });
    return store;
  }

  async getStore(id: string): Promise<Store | undefined> {
    return this.stores.get(id);
  }

  /** Oldest first (id order); `name` is an exact filter. */
  async listStores(q: StoreQuery): Promise<Page<Store>> {
    const after = decodeCursor(q.after, 's', isUlid);
    const range = after === undefined ? { gt: STORE } : { gt: key.store(after) };
    const items: Store[] = [];
    for await (const [, v] of this.kv.entries({ ...range, lt: prefixEnd(STORE) })) {
      const s = decodeJson<Store>(v);
      if (q.name !== undefined && s.name !== q.name) continue;
      if (items.length === q.pageSize) return { items, next: encodeCursor('s', items[items.length - 1]?.id ?? '') };
      items.push(s);
    }
    return { items };
  }

  async deleteStore(id: string): Promise<boolean> {
    return this.mutex.run(id, async () => {
      if (!this.stores.has(id)) return false;
      const tombstone = { id, deleted_at: new Date().toISOString() };
      await this.kv.batch(
        [
          { type: 'del', key: key.store(id) },
          { type: 'put', key: key.tombstone(id), value: encodeJson(tombstone) },
        ],
        true,
      );
      this.stores.delete(id);
      this.states.delete(id);
      void drop(this.resumes.get(id));
      this.resumes.delete(id);
      this.checkpoints.forget(id);
      this.scheduleReclaim(id);
      this.emit({ kind: 'store', storeId: id, deleted: true });
      return true;
    });
  }

  private scheduleReclaim(id: string): void {
    if (this.options.reclaim !== false) this.reclaimer.schedule(id);
  }

  /** Runs `fn` under the store's mutex after checking that the store is live. */
  private exclusive<T>(storeId: string, fn: () => Promise<T>): Promise<T> {
    return this.mutex.run(storeId, async () => {
      if (!this.stores.has(storeId)) throw fail.storeNotFound();
      return fn();
    });
  }

  // ---- models ----

  async writeModel(storeId: string, model: AuthorizationModelInput): Promise<AuthorizationModel> {
    return this.exclusive(storeId, async () => {
      const latest = (await this.latestModel(storeId))?.id;
      let id = ulid();
      if (latest !== undefined && id <= latest) id = ulid(ulidTime(latest) + 1);
      const stored: AuthorizationModel = Object.assign({ id }, model, { id });
      await this.kv.batch([{ type: 'put', key: key.model(storeId, id), value: encodeJson(stored) }], true);
      this.emit({ kind: 'model', storeId, modelId: id });
      return stored;
    });
  }

  async getModel(storeId: string, id: string): Promise<AuthorizationModel | undefined> {
    if (!this.stores.has(storeId)) return undefined;
    const v = await this.kv.get(key.model(storeId, id));
    return v ? decodeJson<AuthorizationModel>(v) : undefined;
  }

  async latestModel(storeId: string): Promise<AuthorizationModel | undefined> {
    return (await this.listModels(storeId, { pageSize: 1 })).items[0];
  }

  /** Newest first; the cursor is the last model id returned. */
  async listModels(storeId: string, page: PageRequest): Promise<Page<AuthorizationModel>> {
    const after = decodeCursor(page.after, 'm', isUlid);
    if (!this.stores.has(storeId)) return { items: [] };
    const base = key.models(storeId);
    const lt = after === undefined ? prefixEnd(base) : base + after;
    const items: AuthorizationModel[] = [];
    for await (const [, v] of this.kv.entries({ gt: base, lt, reverse: true, limit: page.pageSize + 1 })) {
      if (items.length === page.pageSize) return { items, next: encodeCursor('m', items[items.length - 1]?.id ?? '') };
      items.push(decodeJson<AuthorizationModel>(v));
    }
    return { items };
  }

  // ---- tuples and changes ----

  async writeTuples(storeId: string, write: TupleWrite): Promise<WriteResult> {
    return this.exclusive(storeId, () => this.commitWrite(storeId, write));
  }

  async importTuples(
    storeId: string,
    tuples: readonly TupleKey[],
    held?: HeldHint,
    lane?: PriorityLane,
  ): Promise<WriteResult> {
    return this.exclusive(storeId, async () => {
      const state = this.states.get(storeId) ?? (await loadState(this.kv, storeId));
      this.states.set(storeId, state);
      // The hint describes the store at its revision: taken only if no write came in between.
      const hint = held?.revision === state.revision ? held : undefined;
      // The new plain tuples' keys go straight into a native batch (write-plan.ts planImport),
      // planned in a section of `lane` (closed before the batch is written).
      lane?.open();
      const [plan, writer] = await this.planInto((w) => planImport(this.kv, storeId, state, tuples, hint, w)).finally(
        () => lane?.close(),
      );
      if (plan.ops.length > 0) await this.commitPlan(storeId, state, plan, writer);
      else await writer?.discard();
      return plan.result;
    });
  }

  /**
   * Runs `plan` with the backend's native batch to fill (Kv.writer; none on the memory backend),
   * discarding that batch when planning throws. The caller commits it (commitPlan) or discards it.
   */
  private async planInto<T>(plan: (writer: KvWriter | undefined) => Promise<T>): Promise<[T, KvWriter | undefined]> {
    const writer = this.kv.writer?.();
    try {
      return [await plan(writer), writer];
    } catch (err) {
      await writer?.discard();
      throw err;
    }
  }

  /** Plans and commits one tuple write; the caller holds the store's mutex. */
  private async commitWrite(storeId: string, write: TupleWrite): Promise<WriteResult> {
    const state = this.states.get(storeId) ?? (await loadState(this.kv, storeId));
    this.states.set(storeId, state);
    const plan = await planWrite(this.kv, storeId, state, write);
    if (plan.ops.length > 0) await this.commitPlan(storeId, state, plan);
    return plan.result;
  }

  /** Commits a planned write (its ops, after those `writer` holds); the caller holds the store's mutex. */
  private async commitPlan(storeId: string, state: StoreState, plan: PlannedWrite, writer?: KvWriter): Promise<void> {
    if (writer) {
      for (const op of plan.ops) {
        if (op.type === 'put') writer.put(op.key, op.value);
        else writer.del(op.key);
      }
      await writer.write(true);
    } else await this.kv.batch(plan.ops, true);
    state.revision = plan.result.revision;
    state.lastMs = plan.ms;
    this.emit({ kind: 'tuples', storeId, revision: plan.result.revision });
  }

  /** Scan and delete under the store's mutex (delete-matching.ts); `planned` runs while the batch is written. */
  async deleteMatching(
    storeId: string,
    filter: TupleFilter,
    limit: number,
    planned?: (result: WriteResult) => void,
  ): Promise<DeletedMatching> {
    return this.exclusive(storeId, async () => {
      const state = this.states.get(storeId) ?? (await loadState(this.kv, storeId));
      this.states.set(storeId, state);
      const f = `${filter.object ?? ''}\u0000${filter.relation ?? ''}\u0000${filter.user ?? ''}`;
      const hint = this.resumes.get(storeId);
      this.resumes.delete(storeId);
      let from: string | ScanAhead | undefined;
      if (hint?.filter === f && hint.revision === state.revision) {
        clearTimeout(hint.timer);
        from = hint.rest ?? hint.after;
      } else void drop(hint);
      // The scan adds its deletes to a native batch while it waits on reads (delete-matching.ts).
      const [{ plan, more, last, rest }, writer] = await this.planInto((w) =>
        planMatchingDeletes(this.kv, storeId, state, filter, limit, from, w),
      );
      try {
        if (plan.ops.length > 0) {
          const committed = this.commitPlan(storeId, state, plan, writer);
          planned?.(plan.result);
          await committed;
        } else await writer?.discard();
      } catch (err) {
        await rest?.close();
        throw err;
      }
      if (more && last !== undefined) {
        const resume: Resume = { filter: f, revision: state.revision, after: last, rest, timer: undefined };
        if (rest) (resume.timer = setTimeout(() => void drop(resume), REST_MS)).unref();
        this.resumes.set(storeId, resume);
      } else await rest?.close();
      return { result: plan.result, more };
    });
  }

  async deleteExpired(storeId: string, now: number, limit: number): Promise<WriteResult> {
    return this.exclusive(storeId, async () => {
      const deletes = await expiredTuples(this.kv, storeId, now, limit);
      return this.commitWrite(storeId, { deletes, writes: [], onDuplicate: 'error', onMissing: 'ignore' });
    });
  }

  async firstExpiry(storeId: string): Promise<number | undefined> {
    if (!this.stores.has(storeId)) return undefined;
    return firstExpiry(this.kv, storeId);
  }

  async readTuples(storeId: string, filter: TupleFilter, page: PageRequest): Promise<Page<Tuple>> {
    if (!this.stores.has(storeId)) return { items: [] };
    return readTuples(this.kv, storeId, filter, page);
  }

  async tupleValues(storeId: string, keys: readonly TupleId[]): Promise<(Tuple | undefined)[]> {
    if (!this.stores.has(storeId)) return keys.map(() => undefined);
    const values = await this.kv.getMany(keys.map((t) => key.tuple(storeId, t)));
    return values.map((v, i) => {
      if (v === undefined) return undefined;
      const value = decodeTupleValue(v);
      return { key: withValue(keys[i] as TupleId, value), timestamp: value.timestamp };
    });
  }

  async scanTuples(storeId: string): Promise<{ revision: number; tuples: AsyncIterable<TupleKey> }> {
    if (!this.stores.has(storeId)) return { revision: 0, tuples: nothing() };
    return scanTuples(this.kv, storeId);
  }

  async readChanges(storeId: string, query: ChangeQuery): Promise<ChangePage> {
    if (!this.stores.has(storeId)) return { items: [], cursors: [], next: query.after };
    return readChanges(this.kv, storeId, query);
  }

  async revision(storeId: string): Promise<number> {
    if (!this.stores.has(storeId)) return 0;
    const cached = this.states.get(storeId);
    if (cached) return cached.revision;
    const v = await this.kv.get(key.revision(storeId));
    return v ? decodeRevision(v) : 0;
  }

  async revisions(storeIds: readonly string[]): Promise<Map<string, number | undefined>> {
    const out = new Map<string, number | undefined>();
    for (const id of storeIds) out.set(id, this.stores.has(id) ? await this.revision(id) : undefined);
    return out;
  }

  changesSince(storeId: string, revision: number): AsyncIterable<RevisionChange> {
    if (!this.stores.has(storeId)) return nothing();
    return changesSince(this.kv, storeId, revision);
  }

  async revisionTime(storeId: string, revision: number): Promise<number | undefined> {
    if (!this.stores.has(storeId)) return undefined;
    return revisionTime(this.kv, storeId, revision);
  }

  async revisionAt(storeId: string, ms: number): Promise<{ revision: number; ms: number } | undefined> {
    if (!this.stores.has(storeId)) return undefined;
    return revisionAt(this.kv, storeId, ms);
  }

  // ---- checkpoints ----

  async writeCheckpoint(
    storeId: string,
    revision: number,
    chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  ): Promise<boolean> {
    return writeAllChunks(await this.openCheckpoint(storeId, revision), chunks);
  }

  /** Each chunk batch and the commit run under the store's mutex, so none lands after a tombstone. */
  openCheckpoint(storeId: string, revision: number): Promise<CheckpointWriter> {
    return this.checkpoints.open(storeId, revision);
  }

  async readCheckpoint(storeId: string): Promise<{ revision: number; chunks: AsyncIterable<Uint8Array> } | undefined> {
    if (!this.stores.has(storeId)) return undefined;
    return readCheckpoint(this.kv, storeId);
  }

  // ---- datastore secrets ----

  /** Read, else made and stored (under a mutex of its own, so one value per name). */
  secret(name: string): Promise<string> {
    return this.mutex.run(`\u0000secret:${name}`, async () => {
      const k = key.meta(name);
      const v = await this.kv.get(k);
      if (v) return Buffer.from(v).toString('utf8');
      const made = randomBytes(32).toString('base64url');
      await this.kv.batch([{ type: 'put', key: k, value: Buffer.from(made, 'utf8') }], true);
      return made;
    });
  }

  // ---- permission index definitions ----

  async putPermissionIndex(storeId: string, record: PermissionIndexRecord): Promise<void> {
    await this.exclusive(storeId, () =>
      this.kv.batch([{ type: 'put', key: key.permissionIndex(storeId, record.id), value: encodeJson(record) }], true),
    );
  }

  async getPermissionIndex(storeId: string, id: string): Promise<PermissionIndexRecord | undefined> {
    if (!this.stores.has(storeId)) return undefined;
    const v = await this.kv.get(key.permissionIndex(storeId, id));
    return v ? decodeJson<PermissionIndexRecord>(v) : undefined;
  }

  async listPermissionIndexes(storeId: string): Promise<PermissionIndexRecord[]> {
    if (!this.stores.has(storeId)) return [];
    const base = key.permissionIndexes(storeId);
    const out: PermissionIndexRecord[] = [];
    for await (const [, v] of this.kv.entries({ gt: base, lt: prefixEnd(base) }))
      out.push(decodeJson<PermissionIndexRecord>(v));
    return out;
  }

  async deletePermissionIndex(storeId: string, id: string): Promise<boolean> {
    if (!this.stores.has(storeId)) return false;
    return this.exclusive(storeId, async () => {
      const k = key.permissionIndex(storeId, id);
      if (!(await this.kv.get(k))) return false;
      await this.kv.batch([{ type: 'del', key: k }], true);
      return true;
    });
  }

  // ---- the shadow model setting ----

  async readShadow(storeId: string): Promise<ShadowSetting | undefined> {
    if (!this.stores.has(storeId)) return undefined;
    const v = await this.kv.get(key.shadow(storeId));
    return v ? decodeJson<ShadowSetting>(v) : undefined;
  }

  async readShadows(storeIds: readonly string[]): Promise<Map<string, ShadowSetting | null>> {
    const live = storeIds.filter((id) => this.stores.has(id));
    const values = await this.kv.getMany(live.map((id) => key.shadow(id)));
    const out = new Map<string, ShadowSetting | null>();
    live.forEach((id, i) => {
      const v = values[i];
      out.set(id, v ? decodeJson<ShadowSetting>(v) : null);
    });
    return out;
  }

  async writeShadow(storeId: string, setting: ShadowSetting | undefined): Promise<void> {
    await this.exclusive(storeId, () =>
      this.kv.batch(
        [
          setting
            ? { type: 'put', key: key.shadow(storeId), value: encodeJson(setting) }
            : { type: 'del', key: key.shadow(storeId) },
        ],
        true,
      ),
    );
  }

  // ---- assertions ----

  async readAssertions(storeId: string, modelId: string): Promise<Assertion[]> {
    if (!this.stores.has(storeId)) return [];
    const v = await this.kv.get(key.assertions(storeId, modelId));
    return v ? decodeJson<Assertion[]>(v) : [];
  }

  /** Replaces the set; an empty set removes the key. */
  async writeAssertions(storeId: string, modelId: string, assertions: readonly Assertion[]): Promise<void> {
    await this.exclusive(storeId, async () => {
      const k = key.assertions(storeId, modelId);
      await this.kv.batch(
        [assertions.length === 0 ? { type: 'del', key: k } : { type: 'put', key: k, value: encodeJson(assertions) }],
        true,
      );
    });
  }
}
