// The Storage contract on PostgreSQL (docs/architecture.md, "The PostgreSQL datastore"): real
// tables for stores (with tombstones), models, assertions, tuples, the changelog, per-store
// revisions and checkpoints; one transaction per mutation; commit events by LISTEN/NOTIFY.
//
// Liveness is read from the database on every call (another node may create or delete a store):
// a store-scoped read of an unknown or deleted store returns empty results, a mutation throws
// store_id_not_found. Mutations of one store made through this object run in call order (a
// per-store mutex, as in KvStorage); across objects and nodes the store's row lock orders them.

import { randomBytes } from 'node:crypto';
import { fail } from '../../errors.js';
import { isUlid, ulid, ulidTime } from '../../domain/ids.js';
import type {
  Assertion,
  AuthorizationModel,
  AuthorizationModelInput,
  Store,
  Tuple,
  TupleKey,
} from '../../domain/types.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { FlatIterator, KeyedMutex } from '../kv.js';
import type {
  ChangePage,
  ChangeQuery,
  CheckpointWriter,
  DeletedMatching,
  Page,
  PageRequest,
  PermissionIndexRecord,
  RevisionChange,
  ShadowSetting,
  Storage,
  StorageEvent,
  StoreQuery,
  TupleFilter,
  TupleWrite,
  WriteResult,
} from '../types.js';
import { changesSince, readChanges } from './changes.js';
import { openCheckpoint, readCheckpoint } from './checkpoint.js';
import { writeAllChunks } from '../checkpoint.js';
import { PgClusterRegistry } from './cluster.js';
import { classify, Db, num, q, type Client, type PostgresOptions, type Row } from './db.js';
import { CHANNEL, encodeEvent, Listener } from './events.js';
import { PgReclaimer } from './reclaim.js';
import { readShadow, readShadows, writeShadow } from './shadow.js';
import { GroupWriter } from './group-writer.js';
import { importChunk, prepareChunk } from './import.js';
import {
  deleteMatching,
  type DeleteResume,
  expiredTuples,
  firstExpiry,
  GuardedWriter,
  readTuples,
  STORE_TUPLES_ANY,
  toKey,
} from './tuples.js';

const LIVE = 'EXISTS (SELECT 1 FROM latch_stores s WHERE s.id = $1 AND s.deleted_ms IS NULL)';
const SCAN_ROWS = 10_000;
/** Stores remembered as importing tuples already stored (PgStorage.importsStaged). */
const IMPORTS_STAGED = 1024;

async function* nothing<T>(): AsyncGenerator<T> {}

const toStore = (r: Row): Store => ({
  id: r[0] as string,
  name: r[1] as string,
  created_at: r[2] as string,
  updated_at: r[3] as string,
});

export interface PgStorageOptions extends PostgresOptions {
  /** Reclaim deleted stores in the background (default true). */
  readonly reclaim?: boolean | undefined;
}

export class PgStorage implements Storage {
  readonly kind = 'postgres';
  /** latch_write takes the store's row lock inside the statement (docs/architecture.md). */
  readonly ordersWrites = true;
  /** Its by-user Read shape is served by an index of the tuples table (Storage.readsByUser). */
  readonly readsByUser = true;
  readonly db: Db;
  readonly cluster: PgClusterRegistry;
  private readonly mutex = new KeyedMutex();
  private readonly reclaimer: PgReclaimer;
  private readonly listeners = new Set<(event: StorageEvent) => void>();
  /** The LISTEN connection, from `init` on; `node` tags this object's NOTIFY payloads (delivered locally, not twice). */
  private listenerNode: Listener | undefined;
  private readonly node = randomBytes(6).toString('base64url');
  private readonly guarded: GuardedWriter;
  /** Group commit of the Writes of one store queued on this object (group-writer.ts). */
  private readonly groups: GroupWriter;
  /** Per store, where its last delete by filter that left more matches stopped (deleteMatching). */
  private readonly resumes = new Map<string, DeleteResume>();
  /**
   * The stores whose last import chunk held stored tuples (import.ts: their next chunk goes
   * straight to the staged path), at most IMPORTS_STAGED, the oldest forgotten first.
   */
  private readonly importsStaged = new Set<string>();

  constructor(private readonly options: PgStorageOptions) {
    this.db = new Db(options);
    this.reclaimer = new PgReclaimer(this.db);
    this.guarded = new GuardedWriter(this.db, this.node, (options.poolSize ?? 10) - 1);
    this.groups = new GroupWriter(this.db, this.node, this.mutex);
    // Its own connection, opened by the first heartbeat (placement only): leases never queue behind the pool.
    this.cluster = PgClusterRegistry.dedicated(options);
  }

  /** Starts listening for other nodes' commits and resumes the reclamation of tombstoned stores. */
  async init(): Promise<this> {
    this.listenerNode ??= new Listener(
      this.options.url,
      this.node,
      (e) => this.emit(e),
      (m) => this.options.onError?.(m),
    );
    for (const [id] of await this.db.rows('SELECT id FROM latch_stores WHERE deleted_ms IS NOT NULL'))
      this.scheduleReclaim(id as string);
    return this;
  }

  async close(): Promise<void> {
    await this.mutex.idle();
    await this.reclaimer.stop();
    await this.listenerNode?.close();
    await this.cluster.close();
    await this.db.close();
  }

  /** Resolves once background reclamation has caught up. */
  settled(): Promise<void> {
    return this.reclaimer.settled();
  }

  /** Rows the store occupies in every table (its record or tombstone included); tests. */
  async countStoreKeys(storeId: string): Promise<number> {
    const tables = [
      'latch_tuples',
      'latch_changes',
      'latch_revisions',
      'latch_models',
      'latch_assertions',
      'latch_permission_indexes',
      'latch_shadows',
      'latch_checkpoint_chunks',
      'latch_checkpoints',
    ];
    const sum = tables
      .map((t) => `(SELECT count(*) FROM ${t} WHERE ${t === 'latch_tuples' ? STORE_TUPLES_ANY : 'store_id = $1'})`)
      .join(' + ');
    return num(await this.db.value(`SELECT ${sum} + (SELECT count(*) FROM latch_stores WHERE id = $1)`, [storeId]));
  }

  // ---- events ----

  /** Commits of this object at once after they commit; other nodes' through LISTEN/NOTIFY. */
  subscribe(listener: (event: StorageEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves once the LISTEN connection is up, also after a reconnect (events before it may be missed). */
  listening(): Promise<void> {
    return this.listenerNode?.whenConnected() ?? Promise.resolve();
  }

  private emit(event: StorageEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  private payload(event: StorageEvent): string {
    return encodeEvent(this.node, event);
  }

  private notify(c: Client, event: StorageEvent): Promise<Row[]> {
    return q(c, `SELECT pg_notify('${CHANNEL}', $1)`, [this.payload(event)]);
  }

  // ---- stores ----

  async createStore(name: string): Promise<Store> {
    const now = new Date().toISOString();
    const store: Store = { id: ulid(), name, created_at: now, updated_at: now };
    await this.db.tx(async (c) => {
      await q(c, 'INSERT INTO latch_stores (id, name, created_at, updated_at) VALUES ($1, $2, $3, $4)', [
        store.id,
        store.name,
        now,
        now,
      ]);
      await this.notify(c, { kind: 'store', storeId: store.id, deleted: false });
    });
    this.emit({ kind: 'store', storeId: store.id, deleted: false });
    return store;
  }

  async getStore(id: string): Promise<Store | undefined> {
    const row = (
      await this.db.rows(
        'SELECT id, name, created_at, updated_at FROM latch_stores WHERE id = $1 AND deleted_ms IS NULL',
        [id],
      )
    )[0];
    return row ? toStore(row) : undefined;
  }

  async listStores(query: StoreQuery): Promise<Page<Store>> {
    const after = decodeCursor(query.after, 's', isUlid);
    const values: unknown[] = [after ?? '', query.pageSize + 1];
    let where = 'deleted_ms IS NULL AND id > $1';
    if (query.name !== undefined) {
      values.push(query.name);
      where += ' AND name = $3';
    }
    const rows = await this.db.rows(
      `SELECT id, name, created_at, updated_at FROM latch_stores WHERE ${where} ORDER BY id LIMIT $2`,
      values,
    );
    const items = rows.slice(0, query.pageSize).map(toStore);
    const last = items[items.length - 1];
    return rows.length > query.pageSize && last ? { items, next: encodeCursor('s', last.id) } : { items };
  }

  async deleteStore(id: string): Promise<boolean> {
    const deleted = await this.groups.exclusive(id, () =>
      this.db.tx(async (c) => {
        if (
          (await q(c, 'SELECT 1 FROM latch_stores WHERE id = $1 AND deleted_ms IS NULL FOR UPDATE', [id])).length === 0
        )
          return false;
        await q(c, 'UPDATE latch_stores SET deleted_ms = $2 WHERE id = $1', [id, Date.now()]);
        await this.notify(c, { kind: 'store', storeId: id, deleted: true });
        return true;
      }),
    );
    if (deleted) {
      this.scheduleReclaim(id);
      this.emit({ kind: 'store', storeId: id, deleted: true });
    }
    return deleted;
  }

  private scheduleReclaim(id: string): void {
    if (this.options.reclaim !== false) this.reclaimer.schedule(id);
  }

  // ---- models ----

  async writeModel(storeId: string, model: AuthorizationModelInput): Promise<AuthorizationModel> {
    const stored = await this.groups.exclusive(storeId, () =>
      this.db.tx(async (c) => {
        // The row lock orders model writes across nodes, so each new id is above every earlier one.
        if (
          (await q(c, 'SELECT 1 FROM latch_stores WHERE id = $1 AND deleted_ms IS NULL FOR NO KEY UPDATE', [storeId]))
            .length === 0
        )
          throw fail.storeNotFound();
        const latest = (await q(c, 'SELECT max(id) FROM latch_models WHERE store_id = $1', [storeId]))[0]?.[0];
        let id = ulid();
        if (typeof latest === 'string' && id <= latest) id = ulid(ulidTime(latest) + 1);
        const m: AuthorizationModel = Object.assign({ id }, model, { id });
        await q(c, 'INSERT INTO latch_models (store_id, id, model) VALUES ($1, $2, $3)', [
          storeId,
          id,
          JSON.stringify(m),
        ]);
        await this.notify(c, { kind: 'model', storeId, modelId: id });
        return m;
      }),
    );
    this.emit({ kind: 'model', storeId, modelId: stored.id });
    return stored;
  }

  async getModel(storeId: string, id: string): Promise<AuthorizationModel | undefined> {
    const v = await this.db.value(`SELECT model FROM latch_models WHERE store_id = $1 AND id = $2 AND ${LIVE}`, [
      storeId,
      id,
    ]);
    return typeof v === 'string' ? (JSON.parse(v) as AuthorizationModel) : undefined;
  }

  async latestModel(storeId: string): Promise<AuthorizationModel | undefined> {
    return (await this.listModels(storeId, { pageSize: 1 })).items[0];
  }

  async listModels(storeId: string, page: PageRequest): Promise<Page<AuthorizationModel>> {
    const after = decodeCursor(page.after, 'm', isUlid);
    const values: unknown[] = [storeId, page.pageSize + 1];
    if (after !== undefined) values.push(after);
    const rows = await this.db.rows(
      `SELECT model FROM latch_models WHERE store_id = $1 AND ${LIVE}${after !== undefined ? ' AND id < $3' : ''} ORDER BY id DESC LIMIT $2`,
      values,
    );
    const items = rows.slice(0, page.pageSize).map((r) => JSON.parse(r[0] as string) as AuthorizationModel);
    const last = items[items.length - 1];
    return rows.length > page.pageSize && last ? { items, next: encodeCursor('m', last.id) } : { items };
  }

  // ---- tuples and changes ----

  async writeTuples(storeId: string, write: TupleWrite): Promise<WriteResult> {
    const result = await this.groups.write(storeId, write);
    if (result.deleted.length + result.written.length > 0)
      this.emit({ kind: 'tuples', storeId, revision: result.revision });
    return result;
  }

  /**
   * One import chunk (import.ts): one transaction under the store's row lock, the tuples by one
   * COPY into latch_tuples (or, when some are stored, through a staging table), the changelog as
   * one compact row per object type. A chunk that held stored tuples sends the store's next one
   * straight to the staged path, which a chunk with none stored ends.
   */
  async importTuples(storeId: string, tuples: readonly TupleKey[]): Promise<WriteResult> {
    // Encoded before the store's mutex: this chunk's rows are made while an earlier one commits.
    // The store's number keys the rows; 0 (no store has it) for an unknown store, which the lock refuses.
    const key = num((await this.db.value('SELECT key FROM latch_stores WHERE id = $1', [storeId])) ?? 0);
    const chunk = await prepareChunk(storeId, key, tuples);
    const result = await this.groups.exclusive(storeId, () =>
      importChunk(this.db, chunk, this.node, this.importsStaged.has(storeId)),
    );
    this.importsStaged.delete(storeId);
    if (result.written.length < tuples.length) {
      if (this.importsStaged.size >= IMPORTS_STAGED)
        this.importsStaged.delete(this.importsStaged.values().next().value as string);
      this.importsStaged.add(storeId);
    }
    if (result.written.length > 0) this.emit({ kind: 'tuples', storeId, revision: result.revision });
    return result;
  }

  /** tuples.ts writeGuarded: one transaction holding the store's row lock across `guard`. */
  async writeTuplesGuarded(
    storeId: string,
    write: TupleWrite,
    guard: (revision: number) => Promise<void>,
  ): Promise<WriteResult> {
    const result = await this.groups.exclusive(storeId, () => this.guarded.write(storeId, write, guard));
    if (result.deleted.length + result.written.length > 0)
      this.emit({ kind: 'tuples', storeId, revision: result.revision });
    return result;
  }

  /**
   * Delete by filter as one statement under the store's row lock (tuples.ts deleteMatching). Per
   * store, where the last request that left more matches stopped: the same filter's next request
   * resumes there if the store is still at that revision (the statement checks under the lock).
   */
  async deleteMatching(storeId: string, filter: TupleFilter, limit: number): Promise<DeletedMatching> {
    const done = await this.groups.exclusive(storeId, async () => {
      const d = await deleteMatching(this.db, storeId, filter, limit, this.node, this.resumes.get(storeId));
      if (d.resume) this.resumes.set(storeId, d.resume);
      else this.resumes.delete(storeId);
      return d;
    });
    if (done.result.deleted.length > 0) this.emit({ kind: 'tuples', storeId, revision: done.result.revision });
    return { result: done.result, more: done.more };
  }

  /**
   * The expired tuples are read first, then deleted by one write whose deletes carry each tuple's
   * expires_at: under the store's row lock a delete only takes a tuple that still expires then, so
   * a tuple rewritten in between (by this node or another) is left alone.
   */
  async deleteExpired(storeId: string, now: number, limit: number): Promise<WriteResult> {
    const deletes = await expiredTuples(this.db, storeId, now, limit);
    return this.writeTuples(storeId, { deletes, writes: [], onDuplicate: 'error', onMissing: 'ignore' });
  }

  firstExpiry(storeId: string): Promise<number | undefined> {
    return firstExpiry(this.db, storeId);
  }

  readTuples(storeId: string, filter: TupleFilter, page: PageRequest): Promise<Page<Tuple>> {
    return readTuples(this.db, storeId, filter, page);
  }

  /**
   * The revision and every tuple from one REPEATABLE READ snapshot, streamed through a server-side
   * cursor on a connection held until the scan ends (or the reader stops).
   */
  async scanTuples(storeId: string): Promise<{ revision: number; tuples: AsyncIterable<TupleKey> }> {
    let c: Client;
    try {
      c = await this.db.pool.connect();
    } catch (err) {
      return classify(err);
    }
    let revision: number;
    try {
      await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const row = (await q(c, 'SELECT revision FROM latch_stores WHERE id = $1 AND deleted_ms IS NULL', [storeId]))[0];
      if (!row) {
        await c.query('COMMIT');
        c.release();
        return { revision: 0, tuples: nothing() };
      }
      revision = num(row[0]);
      await c.query({
        text: `DECLARE latch_scan NO SCROLL CURSOR FOR SELECT object, relation, "user", condition, expires_ms FROM latch_tuples WHERE ${STORE_TUPLES_ANY} ORDER BY object, relation, "user"`,
        values: [storeId],
      });
    } catch (err) {
      c.release(err instanceof Error ? err : true);
      return classify(err);
    }
    async function* batches(): AsyncGenerator<readonly Row[]> {
      let broken: Error | undefined;
      let done = false;
      try {
        for (;;) {
          const rows = await q(c, `FETCH ${SCAN_ROWS} FROM latch_scan`);
          if (rows.length === 0) break;
          yield rows;
        }
        await c.query('COMMIT');
        done = true;
      } catch (err) {
        broken = err instanceof Error ? err : new Error(String(err));
        classify(err);
      } finally {
        if (!done && !broken)
          await c
            .query('ROLLBACK')
            .catch((err: unknown) => (broken = err instanceof Error ? err : new Error(String(err))));
        c.release(broken);
      }
    }
    const tuples = new FlatIterator(batches(), toKey);
    return { revision, tuples: { [Symbol.asyncIterator]: () => tuples } };
  }

  readChanges(storeId: string, query: ChangeQuery): Promise<ChangePage> {
    return readChanges(this.db, storeId, query);
  }

  /** The committed revision, read from the database (one round trip). */
  async revision(storeId: string): Promise<number> {
    const v = await this.db.value('SELECT revision FROM latch_stores WHERE id = $1 AND deleted_ms IS NULL', [storeId]);
    return v === undefined ? 0 : num(v);
  }

  /** One query for all: live stores answer their revision, the others are absent (undefined). */
  async revisions(storeIds: readonly string[]): Promise<Map<string, number | undefined>> {
    const out = new Map<string, number | undefined>(storeIds.map((id) => [id, undefined]));
    if (storeIds.length === 0) return out;
    const rows = await this.db.rows(
      'SELECT id, revision FROM latch_stores WHERE id = ANY($1::text[]) AND deleted_ms IS NULL',
      [storeIds],
    );
    for (const row of rows) out.set(String(row[0]), num(row[1]));
    return out;
  }

  changesSince(storeId: string, revision: number): AsyncIterable<RevisionChange> {
    return changesSince(this.db, storeId, revision);
  }

  async revisionTime(storeId: string, revision: number): Promise<number | undefined> {
    const v = await this.db.value(
      `SELECT r.ms FROM latch_revisions r JOIN latch_stores s ON s.id = r.store_id AND s.deleted_ms IS NULL
        WHERE r.store_id = $1 AND r.revision = $2`,
      [storeId, revision],
    );
    return v === undefined ? undefined : num(v);
  }

  async revisionAt(storeId: string, ms: number): Promise<{ revision: number; ms: number } | undefined> {
    const rows = await this.db.rows(
      `SELECT r.revision, r.ms FROM latch_revisions r JOIN latch_stores s ON s.id = r.store_id AND s.deleted_ms IS NULL
        WHERE r.store_id = $1 AND r.ms <= $2 ORDER BY r.ms DESC, r.revision DESC LIMIT 1`,
      [storeId, Math.floor(ms)],
    );
    const row = rows[0];
    return row ? { revision: num(row[0]), ms: num(row[1]) } : undefined;
  }

  // ---- checkpoints ----

  async writeCheckpoint(
    storeId: string,
    revision: number,
    chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  ): Promise<boolean> {
    return writeAllChunks(await this.openCheckpoint(storeId, revision), chunks);
  }

  openCheckpoint(storeId: string, revision: number): Promise<CheckpointWriter> {
    return openCheckpoint(this.db, storeId, revision);
  }

  readCheckpoint(storeId: string): Promise<{ revision: number; chunks: AsyncIterable<Uint8Array> } | undefined> {
    return readCheckpoint(this.db, storeId);
  }

  // ---- datastore secrets ----

  /** One row per name in latch_settings; the first insert wins, every node reads that one. */
  async secret(name: string): Promise<string> {
    const made = randomBytes(32).toString('base64url');
    // A concurrent first insert makes ours a no-op whose statement snapshot predates the winner's
    // row; the next statement sees it.
    for (let attempt = 0; attempt < 3; attempt++) {
      const v = await this.db.value(
        `WITH ins AS (INSERT INTO latch_settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING RETURNING value)
         SELECT value FROM ins UNION ALL SELECT value FROM latch_settings WHERE name = $1 LIMIT 1`,
        [`secret:${name}`, made],
      );
      if (typeof v === 'string') return v;
    }
    throw new Error(`latch: the datastore secret ${name} could not be read`);
  }

  // ---- permission index definitions ----

  async putPermissionIndex(storeId: string, record: PermissionIndexRecord): Promise<void> {
    await this.db.tx(async (c) => {
      if (
        (await q(c, 'SELECT 1 FROM latch_stores WHERE id = $1 AND deleted_ms IS NULL FOR KEY SHARE', [storeId]))
          .length === 0
      )
        throw fail.storeNotFound();
      await q(c, 'INSERT INTO latch_permission_indexes (store_id, id, record) VALUES ($1, $2, $3)', [
        storeId,
        record.id,
        JSON.stringify(record),
      ]);
    });
  }

  async getPermissionIndex(storeId: string, id: string): Promise<PermissionIndexRecord | undefined> {
    const v = await this.db.value(
      `SELECT record FROM latch_permission_indexes WHERE store_id = $1 AND id = $2 AND ${LIVE}`,
      [storeId, id],
    );
    return typeof v === 'string' ? (JSON.parse(v) as PermissionIndexRecord) : undefined;
  }

  async listPermissionIndexes(storeId: string): Promise<PermissionIndexRecord[]> {
    const rows = await this.db.rows(
      `SELECT record FROM latch_permission_indexes WHERE store_id = $1 AND ${LIVE} ORDER BY id`,
      [storeId],
    );
    return rows.map((r) => JSON.parse(r[0] as string) as PermissionIndexRecord);
  }

  async deletePermissionIndex(storeId: string, id: string): Promise<boolean> {
    const n = await this.db.exec(`DELETE FROM latch_permission_indexes WHERE store_id = $1 AND id = $2 AND ${LIVE}`, [
      storeId,
      id,
    ]);
    return n > 0;
  }

  readShadow = (storeId: string): Promise<ShadowSetting | undefined> => readShadow(this.db, storeId);
  readShadows = (storeIds: readonly string[]): Promise<Map<string, ShadowSetting | null>> =>
    readShadows(this.db, storeIds);
  writeShadow = (storeId: string, setting: ShadowSetting | undefined): Promise<void> =>
    writeShadow(this.db, storeId, setting);

  // ---- assertions ----

  async readAssertions(storeId: string, modelId: string): Promise<Assertion[]> {
    const v = await this.db.value(
      `SELECT assertions FROM latch_assertions WHERE store_id = $1 AND model_id = $2 AND ${LIVE}`,
      [storeId, modelId],
    );
    return typeof v === 'string' ? (JSON.parse(v) as Assertion[]) : [];
  }

  async writeAssertions(storeId: string, modelId: string, assertions: readonly Assertion[]): Promise<void> {
    await this.groups.exclusive(storeId, () =>
      this.db.tx(async (c) => {
        if (
          (await q(c, 'SELECT 1 FROM latch_stores WHERE id = $1 AND deleted_ms IS NULL FOR KEY SHARE', [storeId]))
            .length === 0
        )
          throw fail.storeNotFound();
        if (assertions.length === 0)
          await q(c, 'DELETE FROM latch_assertions WHERE store_id = $1 AND model_id = $2', [storeId, modelId]);
        else {
          await q(
            c,
            'INSERT INTO latch_assertions (store_id, model_id, assertions) VALUES ($1, $2, $3) ON CONFLICT (store_id, model_id) DO UPDATE SET assertions = EXCLUDED.assertions',
            [storeId, modelId, JSON.stringify(assertions)],
          );
        }
      }),
    );
  }
}
