// The storage suite against PostgreSQL (a fresh database per file on the run's server, see
// test/support/postgres.ts), plus what only a shared database shows: commit events across
// storage objects, persistence across reopen, migrations and their refusals.

import { describe, expect, it } from 'vitest';
import pg from 'pg';
import {
  openPostgresStorage,
  PgStorage,
  PostgresStartError,
  SCHEMA_VERSION,
  schemaVersion,
  migrate,
  Db,
} from '../../src/storage/postgres/index.js';
import { SchemaPreReleaseError, type SchemaError } from '../../src/storage/postgres/migrations.js';
import type { StorageEvent } from '../../src/storage/types.js';
import { runCli } from '../../src/cli/commands.js';
import type { CliIo } from '../../src/cli/common.js';
import { createTestDatabase, databasePerFile } from '../support/postgres.js';
import { allTuples, collect, str, tk, writes } from './helpers.js';
import { storageSuite } from './suite.js';
import { StoreIndex } from '../../src/index/store-index.js';
import type { AuthorizationModelInput } from '../../src/domain/types.js';
import { node } from '../support/replicas.js';
import { MODEL } from '../http/helpers.js';

const pgdb = databasePerFile();
const run = pgdb.run;

/** Removes every row: each suite case starts from an empty datastore, as on the other backends. */
async function empty(): Promise<void> {
  const c = new pg.Client({ connectionString: pgdb.url });
  await c.connect();
  try {
    const tables = (
      await c.query<{ t: string }>(
        `SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE 'latch\\_%' AND tablename <> 'latch_schema'`,
      )
    ).rows;
    if (tables.length > 0) await c.query(`TRUNCATE ${tables.map((r) => r.t).join(', ')}`);
  } finally {
    await c.end();
  }
}

const open = (reclaim = true): Promise<PgStorage> => openPostgresStorage({ url: pgdb.url, poolSize: 4, reclaim });

/** The tuple events `storage` hears from now on; `arrived` resolves once `count` have. */
function tupleEvents(storage: PgStorage, count: number): { events: StorageEvent[]; arrived: Promise<void> } {
  const events: StorageEvent[] = [];
  let done: () => void = () => undefined;
  const arrived = new Promise<void>((resolve) => (done = resolve));
  storage.subscribe((e) => {
    if (e.kind !== 'tuples') return;
    events.push(e);
    if (events.length === count) done();
  });
  return { events, arrived };
}

describe.runIf(run)('postgres', () => {
  storageSuite(
    'postgres',
    async () => {
      await empty();
      const storage = await open();
      return { storage, second: () => open(), dispose: () => storage.close() };
    },
    true,
  );

  describe('storage: postgres index checkpoints', () => {
    it('loading an index from a checkpoint gives its connection back (a pool of one serves the next query)', async () => {
      await empty();
      const one = await openPostgresStorage({ url: pgdb.url, poolSize: 1 });
      try {
        const id = (await one.createStore('cp')).id;
        await one.writeTuples(id, writes('doc:1#viewer@user:anne', 'doc:2#viewer@user:bob'));
        const built = await StoreIndex.load(one, id);
        expect(await built.checkpoint(one, id)).toBe('written');
        built.close();
        for (let i = 0; i < 3; i++) {
          const loaded = await StoreIndex.load(one, id);
          expect(loaded.loaded.fromCheckpoint).toBe(true);
          expect(loaded.snapshot().base.layout.entries).toBe(2);
          loaded.close();
        }
        expect(await one.revision(id)).toBe(1); // would wait forever for the one connection if a load kept it
      } finally {
        await one.close();
      }
    });
  });

  describe('storage: postgres shared by several objects', () => {
    it('delivers commit events of other storage objects through LISTEN/NOTIFY, each once', async () => {
      const a = await open();
      const b = await open();
      try {
        await Promise.all([a.listening(), b.listening()]);
        const seenA: StorageEvent[] = [];
        const seenB: StorageEvent[] = [];
        a.subscribe((e) => seenA.push(e));
        const gotAll = new Promise<void>((resolve) => {
          b.subscribe((e) => {
            seenB.push(e);
            if (seenB.length === 4) resolve();
          });
        });
        const store = (await a.createStore('events')).id;
        const model = await a.writeModel(store, { schema_version: '1.1', type_definitions: [{ type: 'user' }] });
        await a.writeTuples(store, writes('doc:1#viewer@user:anne'));
        await a.deleteStore(store);
        await gotAll;
        const expected: StorageEvent[] = [
          { kind: 'store', storeId: store, deleted: false },
          { kind: 'model', storeId: store, modelId: model.id },
          { kind: 'tuples', storeId: store, revision: 1 },
          { kind: 'store', storeId: store, deleted: true },
        ];
        // Another node's event carries the revision's changes; this object's own does not.
        const carried = { deleted: [], written: [{ object: 'doc:1', relation: 'viewer', user: 'user:anne' }] };
        expect(seenB).toEqual(expected.map((e) => (e.kind === 'tuples' ? { ...e, changes: carried } : e)));
        expect(seenA).toEqual(expected);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('a commit event carries the changes of a write of at most 32 that fit in NOTIFY, exactly as the log has them', async () => {
      const a = await open();
      const b = await open();
      try {
        await Promise.all([a.listening(), b.listening()]);
        const store = (await a.createStore('carried')).id;
        const events: StorageEvent[] = [];
        let wanted = 0;
        let done: () => void = () => undefined;
        b.subscribe((e) => {
          if (e.kind !== 'tuples') return;
          events.push(e);
          if (events.length === wanted) done();
        });
        const expiring = { ...tk('doc:1#viewer@user:anne'), expires_at: '2099-01-01T00:00:00.000Z' };
        const conditioned = tk('doc:2#viewer@user:\u0000bob', { name: 'c', context: { b: [1], a: 'x' } });
        const long = (i: number): string => `doc:${i}#viewer@user:${'x'.repeat(400)}`;
        const arrived = new Promise<void>((resolve) => (done = resolve));
        wanted = 4;
        await a.writeTuples(store, { ...writes(), writes: [expiring, conditioned] });
        await a.writeTuples(store, {
          ...writes('doc:3#viewer@user:carl'),
          deletes: [tk('doc:1#viewer@user:anne'), tk('doc:2#viewer@user:\u0000bob')],
        });
        await a.writeTuples(store, writes(...Array.from({ length: 33 }, (_, i) => `doc:m${i}#viewer@user:anne`)));
        await a.writeTuples(store, writes(...Array.from({ length: 20 }, (_, i) => long(i))));
        await arrived;
        const log = await collect(a.changesSince(store, 0));
        const fromLog = (revision: number): unknown => ({
          deleted: log.filter((c) => c.revision === revision && c.operation === 'delete').map((c) => c.tuple),
          written: log.filter((c) => c.revision === revision && c.operation === 'write').map((c) => c.tuple),
        });
        expect(events.map((e) => (e.kind === 'tuples' ? e.revision : 0))).toEqual([1, 2, 3, 4]);
        expect(events.map((e) => (e.kind === 'tuples' ? e.changes : undefined))).toEqual([
          fromLog(1),
          fromLog(2),
          undefined, // 33 changes
          undefined, // over 8000 bytes
        ]);
        expect(fromLog(1)).toEqual({ deleted: [], written: [expiring, conditioned] });
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('an import chunk’s commit event carries its changes as the log has them, whether any was stored', async () => {
      const a = await open();
      const b = await open();
      try {
        await Promise.all([a.listening(), b.listening()]);
        const store = (await a.createStore('imported')).id;
        const { events, arrived } = tupleEvents(b, 3);
        const fresh = [
          tk('group:g#member@user:\u0000bob'),
          {
            ...tk('doc:1#viewer@user:anne', { name: 'c', context: { b: [1], a: 'x' } }),
            expires_at: '2099-01-01T00:00:00.000Z',
          },
          tk('doc:2#viewer@user:a\\b\tc'),
        ];
        // All new (one COPY into the tuples table); then one stored among new ones (staged); then 33.
        await a.importTuples(store, fresh);
        await a.importTuples(store, [tk('doc:3#viewer@user:carl'), fresh[0]!, tk('folder:f#viewer@user:x')]);
        await a.importTuples(
          store,
          Array.from({ length: 33 }, (_, i) => tk(`doc:m${i}#viewer@user:anne`)),
        );
        await arrived;
        const log = await collect(a.changesSince(store, 0));
        const fromLog = (revision: number): unknown => ({
          deleted: [],
          written: log.filter((c) => c.revision === revision).map((c) => c.tuple),
        });
        expect(events.map((e) => (e.kind === 'tuples' ? e.revision : 0))).toEqual([1, 2, 3]);
        expect(events.map((e) => (e.kind === 'tuples' ? e.changes : undefined))).toEqual([
          fromLog(1),
          fromLog(2),
          undefined, // 33 changes
        ]);
        expect(fromLog(1)).toEqual({ deleted: [], written: fresh });
        expect(fromLog(2)).toEqual({
          deleted: [],
          written: [tk('doc:3#viewer@user:carl'), tk('folder:f#viewer@user:x')],
        });
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('an import chunk timed before the store’s last write takes that write’s time: times never go back', async () => {
      const a = await open();
      const c = new pg.Client({ connectionString: pgdb.url });
      await c.connect();
      try {
        const store = (await a.createStore('clock')).id;
        // Another node's clock an hour ahead wrote last: this node's chunk, timed by its own clock
        // when prepared, commits after it. More tuples than one slice of COPY rows.
        const ahead = Date.now() + 3_600_000;
        await c.query('UPDATE latch_stores SET last_ms = $2 WHERE id = $1', [store, ahead]);
        const chunk = Array.from({ length: 5000 }, (_, i) => tk(`doc:${i}#viewer@user:u${i % 7}`));
        const r = await a.importTuples(store, chunk);
        expect(r.timestamp).toBe(new Date(ahead).toISOString());
        const rows = await c.query<{ n: string; ms: string }>(
          'SELECT count(*) AS n, min(written_ms) AS ms FROM latch_tuples WHERE store_key = (SELECT key FROM latch_stores WHERE id = $1) AND written_ms = $2',
          [store, ahead],
        );
        expect(rows.rows[0]).toEqual({ n: '5000', ms: String(ahead) });
        const changes = await a.readChanges(store, { pageSize: 1 });
        expect(changes.items[0]?.timestamp).toBe(new Date(ahead).toISOString());
        // The next chunk again: no earlier than the store's last write.
        const next = await a.importTuples(store, [tk('doc:x#viewer@user:anne')]);
        expect(Date.parse(next.timestamp)).toBeGreaterThanOrEqual(ahead);
        expect((await a.readTuples(store, { object: 'doc:x' }, { pageSize: 1 })).items[0]?.timestamp).toBe(
          next.timestamp,
        );
      } finally {
        await c.end();
        await a.close();
      }
    });

    it('a delete by filter cut by its limit: the commit event carries exactly the tuples it deleted', async () => {
      const a = await open();
      const b = await open();
      try {
        await Promise.all([a.listening(), b.listening()]);
        const store = (await a.createStore('cut')).id;
        const { events, arrived } = tupleEvents(b, 2);
        await a.writeTuples(
          store,
          writes('doc:1#viewer@user:anne', 'doc:2#viewer@user:anne', 'doc:3#viewer@user:anne'),
        );
        const cut = await a.deleteMatching?.(store, { object: 'doc:' }, 2);
        expect(cut?.more).toBe(true);
        await arrived;
        const deleted = [tk('doc:1#viewer@user:anne'), tk('doc:2#viewer@user:anne')];
        expect(cut?.result.deleted).toEqual(deleted);
        expect(events[1]?.kind === 'tuples' ? events[1].changes : undefined).toEqual({ deleted, written: [] });
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('a type’s tuples are its objects’ range: delete by filter and Read of a type and a user take no other type', async () => {
      const a = await open();
      try {
        const store = (await a.createStore('type-range')).id;
        // Types whose objects sort right before, inside and after `doc:`'s range in byte order, the
        // same user and relation: the by-user index holds them side by side.
        const all = [
          'do:1#viewer@user:anne',
          'doc:1#viewer@user:anne',
          'doc:2#viewer@user:anne',
          'doc:2#owner@user:anne',
          'doc;:1#viewer@user:anne',
          'doc9:1#viewer@user:anne',
          'docs:1#viewer@user:anne',
          'doc:3#viewer@user:bob',
        ];
        await a.writeTuples(store, writes(...all));
        const read = await a.readTuples(store, { object: 'doc:', user: 'user:anne' }, { pageSize: 1 });
        expect(read.items.map((t) => str(t.key))).toEqual(['doc:2#owner@user:anne']);
        const next = await a.readTuples(
          store,
          { object: 'doc:', user: 'user:anne' },
          { pageSize: 10, after: read.next },
        );
        expect(next.items.map((t) => str(t.key))).toEqual(['doc:1#viewer@user:anne', 'doc:2#viewer@user:anne']);
        const cut = await a.deleteMatching?.(store, { object: 'doc:', user: 'user:anne' }, 10);
        expect(cut?.result.deleted.map(str)).toEqual([
          'doc:2#owner@user:anne',
          'doc:1#viewer@user:anne',
          'doc:2#viewer@user:anne',
        ]);
        const left = await a.readTuples(store, {}, { pageSize: 100 });
        expect(left.items.map((t) => str(t.key)).sort()).toEqual(
          all.filter((k) => !k.startsWith('doc:') || k.endsWith('bob')).sort(),
        );
        const type = await a.deleteMatching?.(store, { object: 'doc:' }, 10);
        expect(type?.result.deleted.map(str)).toEqual(['doc:3#viewer@user:bob']);
      } finally {
        await a.close();
      }
    });

    it('a node applies another node’s small write from its commit event, without reading the log', async () => {
      const sa = await open();
      const sb = await open();
      const a = node(sa);
      // No poll on b: a poll that saw the new revision before the commit event (a loaded machine
      // delays the event) read the log and failed this test at load 20. The event is the path here.
      const b = node(sb, {}, { pollIntervalMs: 0 });
      try {
        await Promise.all([sa.listening(), sb.listening()]);
        const store = (await a.createStore('follow')).id;
        await a.writeModel(store, MODEL as unknown as AuthorizationModelInput);
        const check = { storeId: store, tupleKey: tk('doc:1#viewer@user:anne'), contextualTuples: [] };
        expect((await b.check({ ...check, consistency: 'MINIMIZE_LATENCY' })).allowed).toBe(false);
        let logReads = 0;
        const read = sb.changesSince.bind(sb);
        // Reads of this store's log only: b preloads the stores earlier tests left, in the background.
        sb.changesSince = (id, revision) => {
          if (id === store) logReads++;
          return read(id, revision);
        };
        // b's follower subscribed first: when this listener runs, it has handled the event.
        const heard = new Promise<void>((resolve) => sb.subscribe((e) => e.kind === 'tuples' && resolve()));
        await a.write({
          storeId: store,
          writes: [tk('doc:1#viewer@user:anne')],
          deletes: [],
          onDuplicate: 'error',
          onMissing: 'error',
        });
        await heard;
        expect(b.checkSync({ ...check, consistency: 'MINIMIZE_LATENCY' })?.allowed).toBe(true);
        expect(b.stats().replication).toMatchObject({ revisionsApplied: 1, revisionsCarried: 1 });
        expect(b.stats().replication.applyLag.count).toBe(1);
        expect(logReads).toBe(0);
      } finally {
        await Promise.all([a.close(), b.close()]);
        await Promise.all([sa.close(), sb.close()]);
      }
    });

    it('keeps everything across a reopen and sees another object’s writes at once', async () => {
      const a = await open();
      const id = (await a.createStore('persist')).id;
      const model = await a.writeModel(id, { schema_version: '1.1', type_definitions: [{ type: 'user' }] });
      await a.writeTuples(id, writes('doc:1#viewer@user:anne'));
      await a.writeCheckpoint(id, 1, [new Uint8Array([9, 9])]);
      const b = await open();
      await b.writeTuples(id, writes('doc:2#viewer@user:bob'));
      expect(await a.revision(id)).toBe(2);
      await Promise.all([a.close(), b.close()]);

      const c = await open();
      expect((await c.getStore(id))?.name).toBe('persist');
      expect(await allTuples(c, id)).toEqual(['doc:1#viewer@user:anne', 'doc:2#viewer@user:bob']);
      expect((await c.latestModel(id))?.id).toBe(model.id);
      expect((await collect((await c.readCheckpoint(id))?.chunks ?? [])).map((x) => [...x])).toEqual([[9, 9]]);
      await c.close();
    });

    it('resumes reclaiming a tombstoned store when another object opens', async () => {
      const a = await open(false);
      const id = (await a.createStore('doomed')).id;
      for (let i = 0; i < 3; i++)
        await a.writeTuples(id, writes(...Array.from({ length: 50 }, (_, j) => `doc:${i}-${j}#viewer@user:anne`)));
      await a.deleteStore(id);
      expect(await a.countStoreKeys(id)).toBeGreaterThan(300);
      await a.close();
      const b = await open();
      expect(await b.getStore(id)).toBeUndefined();
      await b.settled();
      expect(await b.countStoreKeys(id)).toBe(0);
      await b.close();
    });
  });

  describe('migrations', () => {
    it('nodes starting together migrate once; latch_schema records each step', async () => {
      const fresh = await createTestDatabase();
      try {
        const opened = await Promise.all([0, 1, 2].map(() => openPostgresStorage({ url: fresh.url, poolSize: 2 })));
        const dbh = new Db({ url: fresh.url });
        expect(await schemaVersion(dbh)).toBe(SCHEMA_VERSION);
        expect((await dbh.rows('SELECT version FROM latch_schema ORDER BY version')).map((r) => r[0])).toEqual(
          Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1),
        );
        expect(await migrate(dbh)).toEqual({ from: SCHEMA_VERSION, to: SCHEMA_VERSION });
        await dbh.close();
        await Promise.all(opened.map((s) => s.close()));
      } finally {
        await fresh.drop();
      }
    });

    it('latch migrate creates the schema once, then has nothing to do; it names a bad URL or a newer schema', async () => {
      const fresh = await createTestDatabase();
      try {
        const io = (): { io: CliIo; out: string[]; err: string[] } => {
          const out: string[] = [];
          const err: string[] = [];
          return {
            out,
            err,
            io: {
              out: (t) => void out.push(t),
              err: (t) => void err.push(t),
              env: { LATCH_POSTGRES_URL: fresh.url },
              errIsTTY: false,
            },
          };
        };
        const first = io();
        expect(await runCli(['migrate'], first.io)).toBe(0);
        expect(first.out.join('')).toBe(`schema migrated from version 0 to ${SCHEMA_VERSION}\n`);
        const second = io();
        expect(await runCli(['migrate', '--postgres-url', fresh.url], second.io)).toBe(0);
        expect(second.out.join('')).toBe(`schema is at version ${SCHEMA_VERSION}; nothing to do\n`);
        const bad = io();
        expect(await runCli(['migrate', '--postgres-url', 'nope'], bad.io)).toBe(2);
        expect(bad.err.join('')).toMatch(/--postgres-url is not a valid URL/);
        const c = new pg.Client({ connectionString: fresh.url });
        await c.connect();
        await c.query('INSERT INTO latch_schema (version) VALUES ($1)', [SCHEMA_VERSION + 1]);
        await c.end();
        const newer = io();
        expect(await runCli(['migrate'], newer.io)).toBe(1);
        expect(newer.err.join('')).toBe(
          `latch migrate: the database schema is version ${SCHEMA_VERSION + 1}, newer than this latch (schema version ${SCHEMA_VERSION}): upgrade latch\n`,
        );
      } finally {
        await fresh.drop();
      }
    });

    it('refuses a schema newer than the code, and an unmigrated one when migration is off', async () => {
      const fresh = await createTestDatabase();
      try {
        await expect(openPostgresStorage({ url: fresh.url, migrate: false })).rejects.toThrow(
          `the database schema is version 0, this latch needs version ${SCHEMA_VERSION}: run 'latch migrate --postgres-url …' or start with --postgres-migrate true`,
        );
        await (await openPostgresStorage({ url: fresh.url })).close();
        const c = new pg.Client({ connectionString: fresh.url });
        await c.connect();
        await c.query('INSERT INTO latch_schema (version) VALUES ($1)', [SCHEMA_VERSION + 1]);
        await c.end();
        const message = `the database schema is version ${SCHEMA_VERSION + 1}, newer than this latch (schema version ${SCHEMA_VERSION}): upgrade latch`;
        await expect(openPostgresStorage({ url: fresh.url })).rejects.toThrow(message);
        await expect(openPostgresStorage({ url: fresh.url, migrate: false })).rejects.toThrow(message);
      } finally {
        await fresh.drop();
      }
    });

    it('refuses a database made by a development build (steps in latch_schema_version) and writes nothing to it', async () => {
      const fresh = await createTestDatabase();
      try {
        // What a development build left: its version table (steps 1-8) and its tables.
        const c = new pg.Client({ connectionString: fresh.url });
        await c.connect();
        await c.query(
          `CREATE TABLE latch_schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
           INSERT INTO latch_schema_version (version) SELECT generate_series(1, 8);
           CREATE TABLE latch_stores (id text PRIMARY KEY)`,
        );
        const tables = async (): Promise<string[]> =>
          (
            await c.query<{ t: string }>(
              `SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
            )
          ).rows.map((r) => r.t);
        for (const migrate of [true, false]) {
          const err: unknown = await openPostgresStorage({ url: fresh.url, migrate }).catch((e: unknown) => e);
          expect(err).toBeInstanceOf(PostgresStartError);
          expect((err as PostgresStartError).transient).toBe(false);
          expect(((err as PostgresStartError).cause as SchemaError).code).toBe('schema_pre_release');
        }
        const out: string[] = [];
        const io: CliIo = {
          out: (t) => void out.push(t),
          err: (t) => void out.push(t),
          env: { LATCH_POSTGRES_URL: fresh.url },
          errIsTTY: false,
        };
        expect(await runCli(['migrate'], io)).toBe(1);
        expect(out.join('')).toBe(`latch migrate: ${new SchemaPreReleaseError().message}\n`);
        expect(await tables()).toEqual(['latch_schema_version', 'latch_stores']);
        await c.end();
      } finally {
        await fresh.drop();
      }
    });
  });
});
