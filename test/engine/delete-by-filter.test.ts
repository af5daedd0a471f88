// Delete by filter below the HTTP layer: the key-value backends' one-step `deleteMatching`
// (src/storage/delete-matching.ts) leaves exactly what deleting the same keys through
// `writeTuples` leaves (tuples, expiry index, changelog with each tuple's prior
// state), on LevelDB and memory; and the engine's relation-only filter neither scans a store whose
// index never saw the relation nor holds up the store's other writes while it scans.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AuthorizationModelInput, TupleKey } from '../../src/domain/types.js';
import { LatchService } from '../../src/engine/service.js';
import { DEFAULT_ENGINE_CONFIG } from '../../src/engine/config.js';
import { openLevelStorage } from '../../src/storage/level.js';
import { openMemoryStorage } from '../../src/storage/memory.js';
import type { KvStorage } from '../../src/storage/kv-storage.js';
import { openPostgresStorage } from '../../src/storage/postgres/index.js';
import { databasePerFile } from '../support/postgres.js';
import type { RevisionChange, Storage, StorageEvent, TupleFilter } from '../../src/storage/types.js';
import { MODEL as MODEL_JSON } from '../http/helpers.js';

const MODEL = MODEL_JSON as unknown as AuthorizationModelInput;
const EXPIRES = '2999-01-01T00:00:00.000Z';

const pgdb = databasePerFile();
const dirs: string[] = [];
const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function open(kind: 'leveldb' | 'memory'): Promise<KvStorage> {
  if (kind === 'memory') return openMemoryStorage();
  const dir = mkdtempSync(path.join(tmpdir(), 'latch-delete-matching-'));
  dirs.push(dir);
  return openLevelStorage(dir);
}

/** Plain, conditioned and expiring tuples over two types, users and usersets. */
function content(): TupleKey[] {
  const out: TupleKey[] = [];
  for (let i = 0; i < 60; i++) {
    const object = `doc:d${i % 20}`;
    if (i % 3 === 0) out.push({ object, relation: 'viewer', user: `user:u${i}` });
    if (i % 3 === 1)
      out.push({
        object,
        relation: 'viewer',
        user: `user:u${i}`,
        condition: { name: 'office', context: { ip: '10.0.0.1' } },
      });
    if (i % 3 === 2) out.push({ object, relation: 'owner', user: `user:u${i}`, expires_at: EXPIRES });
    out.push({ object: `group:g${i % 7}`, relation: 'member', user: `user:u${i}` });
  }
  out.push({ object: 'doc:d1', relation: 'viewer', user: 'group:g1#member' });
  // Keys that are not plain ASCII take the scan's general decoder (delete-matching.ts).
  out.push({ object: 'doc:d\u00e91', relation: 'viewer', user: 'user:\u00fc' });
  out.push({ object: 'doc:d1', relation: 'owner', user: 'user:\u{1f600}', condition: { name: 'office' } });
  return out;
}

async function fill(storage: Storage): Promise<string> {
  const store = await storage.createStore('delete-matching');
  await storage.writeTuples(store.id, { writes: content(), deletes: [], onDuplicate: 'error', onMissing: 'error' });
  return store.id;
}

async function changesAfter(storage: Storage, storeId: string, revision: number): Promise<RevisionChange[]> {
  const out: RevisionChange[] = [];
  for await (const c of storage.changesSince(storeId, revision)) out.push(c);
  return out;
}

/** A new store of 40 viewers of doc:d00 … doc:d39 (key order), and those tuples. */
async function fortyViewers(storage: Storage, name: string): Promise<{ s: string; keys: TupleKey[] }> {
  const s = (await storage.createStore(name)).id;
  const keys = Array.from({ length: 40 }, (_, i) => ({
    object: `doc:d${String(i).padStart(2, '0')}`,
    relation: 'viewer',
    user: 'user:v',
  }));
  await storage.writeTuples(s, { writes: keys, deletes: [], onDuplicate: 'error', onMissing: 'error' });
  return { s, keys };
}

async function everything(storage: Storage, storeId: string, filter: TupleFilter = {}): Promise<TupleKey[]> {
  return (await storage.readTuples(storeId, filter, { pageSize: 10_000 })).items.map((t) => t.key);
}

describe.each(['leveldb', 'memory'] as const)('deleteMatching on %s', (kind) => {
  const filters: [string, TupleFilter][] = [
    ['an object type', { object: 'doc:' }],
    ['an object type and relation', { object: 'doc:', relation: 'owner' }],
    ['one object', { object: 'doc:d1' }],
    ['an object type and user (a type scan)', { object: 'doc:', user: 'user:u4' }],
    ['a userset user', { object: 'doc:', user: 'group:g1#member' }],
    // Tuples of two object types: one changelog entry per change, as a Write logs them.
    ['a user across object types', { user: 'user:u3' }],
    ['a relation alone', { relation: 'viewer' }],
  ];

  it.each(filters)('%s: the same state and changelog as deleting the keys through writeTuples', async (_n, filter) => {
    const a = await open(kind);
    const b = await open(kind);
    closers.push(
      () => a.close(),
      () => b.close(),
    );
    const [sa, sb] = [await fill(a), await fill(b)];
    const before = await a.revision(sa);
    const expected = await everything(b, sb, filter);
    expect(expected.length).toBeGreaterThan(0);

    const done = await a.deleteMatching?.(sa, filter, 10_000);
    expect(done?.more).toBe(false);
    const plain = expected.map((t) => ({ user: t.user, relation: t.relation, object: t.object }));
    const viaWrite = await b.writeTuples(sb, { writes: [], deletes: plain, onDuplicate: 'error', onMissing: 'error' });

    expect(done?.result.revision).toBe(before + 1);
    expect(done?.result.deleted).toEqual(viaWrite.deleted);
    expect(await changesAfter(a, sa, before)).toEqual(await changesAfter(b, sb, before));
    expect(await everything(a, sa)).toEqual(await everything(b, sb));
    expect(await everything(a, sa, filter)).toEqual([]);
    // Reads of a type for one user agree; the expiry index lost the same entries.
    for (const user of ['user:u2', 'user:u4', 'group:g1#member'])
      expect(await everything(a, sa, { object: 'doc:', user })).toEqual(
        await everything(b, sb, { object: 'doc:', user }),
      );
    expect(await a.firstExpiry(sa)).toBe(await b.firstExpiry(sb));
  });

  it('bounds a request by its limit and says more remain; nothing matched changes nothing', async () => {
    const a = await open(kind);
    closers.push(() => a.close());
    const s = await fill(a);
    const all = await everything(a, s, { object: 'doc:' });
    const before = await a.revision(s);
    const first = await a.deleteMatching?.(s, { object: 'doc:' }, 7);
    expect(first?.result.deleted).toHaveLength(7);
    expect(first?.more).toBe(true);
    const rest = await a.deleteMatching?.(s, { object: 'doc:' }, all.length);
    expect(rest?.more).toBe(false);
    expect((first?.result.deleted.length ?? 0) + (rest?.result.deleted.length ?? 0)).toBe(all.length);
    const none = await a.deleteMatching?.(s, { object: 'doc:' }, 10);
    expect(none?.result.deleted).toEqual([]);
    expect(none?.result.revision).toBe(before + 2);
    expect(await a.revision(s)).toBe(before + 2);
  });

  it('requests spanning many native reads (read ahead) delete exactly the first `limit` in Read order', async () => {
    const a = await open(kind);
    const b = await open(kind);
    closers.push(
      () => a.close(),
      () => b.close(),
    );
    // 2,600 viewers and as many owners, one key that is not plain ASCII among them.
    const keys: TupleKey[] = [];
    for (let i = 0; i < 2600; i++) {
      const object = i === 1500 ? 'doc:d1500\u00e9' : `doc:d${String(i).padStart(5, '0')}`;
      keys.push({ object, relation: 'owner', user: `user:o${i}` }, { object, relation: 'viewer', user: `user:v${i}` });
    }
    const [sa, sb] = [(await a.createStore('a')).id, (await b.createStore('b')).id];
    for (const [s, id] of [[a, sa] as const, [b, sb] as const])
      await s.writeTuples(id, { writes: keys, deletes: [], onDuplicate: 'error', onMissing: 'error' });
    const filter = { object: 'doc:', relation: 'viewer' };
    const expected = await everything(b, sb, filter);
    const before = await a.revision(sa);
    for (const [limit, more] of [
      [1100, true],
      [1100, true],
      [1100, false],
    ] as const) {
      const done = await a.deleteMatching?.(sa, filter, limit);
      const plain = expected.splice(0, limit);
      const viaWrite = await b.writeTuples(sb, {
        writes: [],
        deletes: plain,
        onDuplicate: 'error',
        onMissing: 'error',
      });
      expect(done?.more).toBe(more);
      expect(done?.result.deleted).toEqual(viaWrite.deleted);
    }
    expect(await changesAfter(a, sa, before)).toEqual(await changesAfter(b, sb, before));
    expect(await everything(a, sa)).toEqual(await everything(b, sb));
    expect(await everything(a, sa, { object: 'doc:', user: 'user:v1500' })).toEqual([]);
    expect(await everything(a, sa, { object: 'doc:', user: 'user:o1500' })).toHaveLength(1);
  });

  it('a write between two requests of one filter: the next request scans from the start again', async () => {
    const a = await open(kind);
    closers.push(() => a.close());
    const { s, keys } = await fortyViewers(a, 'resume');
    const filter = { object: 'doc:', relation: 'viewer' };
    const first = await a.deleteMatching?.(s, filter, 10);
    expect(first?.more).toBe(true);
    // A match that sorts before where the first request stopped, written in between.
    const early = { object: 'doc:d00', relation: 'viewer', user: 'user:w' };
    await a.writeTuples(s, { writes: [early], deletes: [], onDuplicate: 'error', onMissing: 'error' });
    const second = await a.deleteMatching?.(s, filter, 10);
    expect(second?.result.deleted[0]).toEqual({ user: 'user:w', relation: 'viewer', object: 'doc:d00' });
    expect(second?.result.deleted.slice(1)).toEqual(keys.slice(10, 19));
    // Another filter in between does not resume where the first left off either.
    const third = await a.deleteMatching?.(s, { object: 'doc:' }, 5);
    expect(third?.result.deleted).toEqual(keys.slice(19, 24));
    const rest = await a.deleteMatching?.(s, filter, 100);
    expect(rest?.result.deleted).toEqual(keys.slice(24));
    expect(rest?.more).toBe(false);
    expect(await everything(a, s)).toEqual([]);
  });

  it('a write past where a request stopped: the next request deletes it (the scan read ahead is dropped)', async () => {
    const a = await open(kind);
    closers.push(() => a.close());
    const { s, keys } = await fortyViewers(a, 'ahead');
    const filter = { object: 'doc:', relation: 'viewer' };
    expect((await a.deleteMatching?.(s, filter, 10))?.result.deleted).toEqual(keys.slice(0, 10));
    // A match after where the first request stopped (the stopped scan has read past it) and the
    // deletion of one the stopped scan holds.
    const late = { object: 'doc:d15', relation: 'viewer', user: 'user:w' };
    await a.writeTuples(s, {
      writes: [late],
      deletes: [keys[12] as TupleKey],
      onDuplicate: 'error',
      onMissing: 'error',
    });
    const second = await a.deleteMatching?.(s, filter, 10);
    expect(second?.result.deleted).toEqual([...keys.slice(10, 12), ...keys.slice(13, 16), late, ...keys.slice(16, 20)]);
    // Unchanged since: the next requests take the rows read ahead, in order, until none is left.
    const third = await a.deleteMatching?.(s, filter, 7);
    expect(third?.result.deleted).toEqual(keys.slice(20, 27));
    expect(third?.more).toBe(true);
    const rest = await a.deleteMatching?.(s, filter, 14);
    expect(rest?.result.deleted).toEqual(keys.slice(27));
    expect(rest?.more).toBe(false);
    expect(await everything(a, s)).toEqual([]);
  });

  it('an object type and a user (a type scan): requests of a limit resume in order', async () => {
    const a = await open(kind);
    closers.push(() => a.close());
    const s = (await a.createStore('by-user')).id;
    const keys: TupleKey[] = [];
    for (let i = 0; i < 30; i++)
      for (const relation of ['owner', 'viewer'])
        keys.push({ object: `doc:d${String(i).padStart(2, '0')}`, relation, user: i % 2 ? 'user:anne' : 'user:bob' });
    await a.writeTuples(s, { writes: keys, deletes: [], onDuplicate: 'error', onMissing: 'error' });
    const filter = { object: 'doc:', user: 'user:anne' };
    const expected = await everything(a, s, filter);
    expect(expected).toHaveLength(30);
    const got: TupleKey[] = [];
    for (;;) {
      const r = await a.deleteMatching?.(s, filter, 4);
      got.push(...(r?.result.deleted ?? []));
      if (!r?.more) break;
    }
    expect(got).toEqual(expected.map((t) => ({ user: t.user, relation: t.relation, object: t.object })));
    expect(await everything(a, s, filter)).toEqual([]);
    expect(await everything(a, s, { object: 'doc:', user: 'user:bob' })).toHaveLength(30);
  });
});

/** A storage whose `readTuples` calls are counted and can be held until released. */
function gated(inner: Storage): {
  storage: Storage;
  reads: () => number;
  hold: () => () => void;
  waiting: () => boolean;
} {
  let reads = 0;
  let gate: Promise<void> | undefined;
  let waiting = false;
  const storage = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop !== 'readTuples') {
        const v: unknown = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      }
      return async (...args: Parameters<Storage['readTuples']>) => {
        reads++;
        if (gate) {
          waiting = true;
          await gate;
          waiting = false;
        }
        return target.readTuples(...args);
      };
    },
  });
  return {
    storage,
    reads: () => reads,
    waiting: () => waiting,
    hold: () => {
      let release: () => void = () => undefined;
      gate = new Promise((r) => (release = r));
      return () => {
        gate = undefined;
        release();
      };
    },
  };
}

describe('relation-only delete filters (LevelDB)', () => {
  async function service(): Promise<{ latch: LatchService; store: string; spy: ReturnType<typeof gated> }> {
    const dir = mkdtempSync(path.join(tmpdir(), 'latch-delete-relation-'));
    dirs.push(dir);
    const spy = gated(await openLevelStorage(dir));
    const latch = new LatchService(spy.storage, { ...DEFAULT_ENGINE_CONFIG, maxTuplesPerWrite: 1000 });
    closers.push(() => latch.close());
    const store = (await latch.createStore('relation-only')).id;
    await latch.writeModel(store, MODEL);
    const writes = content().filter((t) => t.relation !== 'owner');
    await latch.write({ storeId: store, writes, deletes: [], onDuplicate: 'error', onMissing: 'error' });
    return { latch, store, spy };
  }

  it('a relation no tuple ever had deletes nothing without reading the store', async () => {
    const { latch, store, spy } = await service();
    const reads = spy.reads();
    const r = await latch.deleteTuples({ storeId: store, filter: { relation: 'owner' }, dryRun: false, limit: 10 });
    expect(r).toEqual({ tuples: [], more: false, revision: await spy.storage.revision(store) });
    const u = await latch.deleteTuples({ storeId: store, filter: { user: 'user:nobody' }, dryRun: false, limit: 10 });
    expect(u.tuples).toEqual([]);
    expect(spy.reads()).toBe(reads);
  });

  it('a relation-only scan does not hold up other writes of the store', async () => {
    const { latch, store, spy } = await service();
    const release = spy.hold();
    const deleting = latch.deleteTuples({ storeId: store, filter: { relation: 'member' }, dryRun: false, limit: 5 });
    await vi.waitFor(() => expect(spy.waiting()).toBe(true));
    // The scan is parked inside readTuples; a Write of the same store still goes through.
    const extra = { object: 'group:g0', relation: 'member', user: 'user:late' };
    const w = await latch.write({
      storeId: store,
      writes: [extra],
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
    expect(w.revision).toBeGreaterThan(0);
    release();
    const r = await deleting;
    expect(r.tuples).toHaveLength(5);
    expect(r.tuples.every((t) => t.relation === 'member')).toBe(true);
    expect(r.more).toBe(true);
    expect(r.revision).toBe(w.revision + 1);
  });
});

/** Every ReadChanges page of `pageSize` from the start (or `startTime`), items and cursors. */
async function pagedChanges(
  storage: Storage,
  storeId: string,
  pageSize: number,
  q: { type?: string; startTime?: string } = {},
): Promise<{ items: unknown[]; cursors: string[] }> {
  const items: unknown[] = [];
  const cursors: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await storage.readChanges(storeId, { pageSize, after, ...(after ? {} : q) });
    items.push(...page.items);
    cursors.push(...page.cursors);
    if (page.items.length < pageSize) return { items, cursors };
    after = page.next;
  }
}

// Delete by filter logs a revision as ONE bulk changelog record (src/storage/codec.ts BULK_DELETE);
// every reader must see the same changes, positions and cursors as one entry per change gives.
describe.each(['leveldb', 'memory'] as const)('the bulk changelog record on %s', (kind) => {
  it('ReadChanges pages (with and without a type), cursors, start times and revision times read as per-change entries', async () => {
    const a = await open(kind);
    const b = await open(kind);
    closers.push(
      () => a.close(),
      () => b.close(),
    );
    // One clock for both stores, so their changes carry the same timestamps.
    vi.useFakeTimers({ toFake: ['Date'] });
    closers.push(async () => void vi.useRealTimers());
    vi.setSystemTime(Date.parse('2026-01-01T10:00:00.000Z'));
    const [sa, sb] = [await fill(a), await fill(b)];
    vi.setSystemTime(Date.parse('2026-01-01T10:00:01.000Z'));
    const plainFiltered = (await everything(b, sb, { object: 'doc:' })).map((t) => ({
      user: t.user,
      relation: t.relation,
      object: t.object,
    }));
    const keysBefore = [await a.countStoreKeys(sa), await b.countStoreKeys(sb)];
    const bulk = await a.deleteMatching?.(sa, { object: 'doc:' }, 10_000);
    await b.writeTuples(sb, { writes: [], deletes: plainFiltered, onDuplicate: 'error', onMissing: 'error' });
    expect(bulk?.result.deleted).toHaveLength(plainFiltered.length);
    // One changelog value and one per-type index entry instead of one of each per tuple.
    const n = plainFiltered.length;
    expect((await b.countStoreKeys(sb)) - keysBefore[1]! - ((await a.countStoreKeys(sa)) - keysBefore[0]!)).toBe(
      2 * (n - 1),
    );
    // A write after the bulk record: paging runs through and past it.
    const later = { object: 'doc:late', relation: 'viewer', user: 'user:late' };
    vi.setSystemTime(Date.parse('2026-01-01T10:00:02.000Z'));
    for (const [s, id] of [
      [a, sa],
      [b, sb],
    ] as const)
      await s.writeTuples(id, { writes: [later], deletes: [], onDuplicate: 'error', onMissing: 'error' });

    for (const pageSize of [1, 3, 7, 50, 1000])
      for (const type of [undefined, 'doc', 'group']) {
        const q = type === undefined ? {} : { type };
        const got = await pagedChanges(a, sa, pageSize, q);
        const want = await pagedChanges(b, sb, pageSize, q);
        expect(got).toEqual(want);
      }
    const all = await pagedChanges(b, sb, 1000);
    expect(all.items.length).toBe(content().length + n + 1);
    // A cursor inside the bulk record resumes right after its change.
    for (const at of [content().length, content().length + 5, content().length + n - 1]) {
      const page = await a.readChanges(sa, { pageSize: 4, after: all.cursors[at - 1] });
      expect(page.items).toEqual(all.items.slice(at, at + 4));
      expect(page.cursors).toEqual(all.cursors.slice(at, at + 4));
    }
    const ts = bulk?.result.timestamp as string;
    for (const pageSize of [2, 100])
      expect(await pagedChanges(a, sa, pageSize, { startTime: ts })).toEqual(
        await pagedChanges(b, sb, pageSize, { startTime: ts }),
      );
    for (const rev of [1, 2, 3]) expect(await a.revisionTime(sa, rev)).toBe(await b.revisionTime(sb, rev));
    expect(await a.revisionTime(sa, 2)).toBe(Date.parse(ts));
  });

  it('Watch streams every change of a bulk delete in order; a check at a past revision across it is exact', async () => {
    const storage = await open(kind);
    const latch = new LatchService(storage, { ...DEFAULT_ENGINE_CONFIG, maxTuplesPerWrite: 1000 });
    closers.push(() => latch.close());
    const store = (await latch.createStore('bulk-watch')).id;
    await latch.writeModel(store, MODEL);
    const tuples = content().filter((t) => t.condition === undefined && t.expires_at === undefined);
    const w = await latch.write({
      storeId: store,
      writes: tuples,
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
    const d = await latch.deleteTuples({
      storeId: store,
      filter: { objectType: 'doc', relation: 'viewer' },
      dryRun: false,
      limit: 10_000,
    });
    expect(d.revision).toBe(w.revision + 1);
    const gone = tuples.filter((t) => t.object.startsWith('doc:') && t.relation === 'viewer');
    expect(d.tuples).toHaveLength(gone.length);

    const expected = await pagedChanges(storage, store, 1000);
    expect(expected.items).toHaveLength(tuples.length + gone.length);
    const abort = new AbortController();
    const seen: { change: unknown; cursor: string }[] = [];
    for await (const e of latch.watch({ storeId: store, heartbeatMs: 60_000 }, abort.signal)) {
      if (e.kind !== 'change') continue;
      seen.push({ change: e.change, cursor: e.cursor });
      if (seen.length === expected.items.length) abort.abort();
    }
    expect(seen.map((e) => e.change)).toEqual(expected.items);
    expect(seen.map((e) => e.cursor)).toEqual(expected.cursors);
    // The deletes are the last changes, in the reply's order.
    const deletes = expected.items.slice(tuples.length) as { tuple_key: TupleKey; operation: string }[];
    expect(deletes.map((c) => c.tuple_key)).toEqual(d.tuples);
    expect(deletes.every((c) => c.operation === 'TUPLE_OPERATION_DELETE')).toBe(true);

    const base = { storeId: store, contextualTuples: [], consistency: 'MINIMIZE_LATENCY' as const };
    const probes = [...gone.slice(0, 5), ...tuples.filter((t) => t.relation === 'member').slice(0, 3)];
    for (const t of probes) {
      const tupleKey = { user: t.user, relation: t.relation, object: t.object };
      const before = await latch.check({ ...base, tupleKey, at: { revision: w.revision } });
      const after = await latch.check({ ...base, tupleKey, at: { revision: d.revision } });
      expect(before.allowed).toBe(true);
      expect(after.allowed).toBe(t.relation === 'member');
      expect(after.revision).toBe(d.revision);
    }
  });
});

// PostgreSQL: one function call (latch_delete_matching) selects, deletes and logs under the
// store's row lock; it must leave exactly what latch_write leaves for the same keys.
describe.runIf(pgdb.run)('deleteMatching on PostgreSQL', () => {
  const filters: [string, TupleFilter][] = [
    ['an object type', { object: 'doc:' }],
    ['an object type and relation', { object: 'doc:', relation: 'owner' }],
    ['one object', { object: 'doc:d1' }],
    ['one object and relation', { object: 'doc:d2', relation: 'viewer' }],
    ['an object type and user (Read order: relation, object)', { object: 'doc:', user: 'user:u4' }],
    ['a userset user', { object: 'doc:', user: 'group:g1#member' }],
    ['the whole store (two object types: one compact row each)', {}],
  ];

  it.each(filters)('%s: the same rows, order and changelog as latch_write with the same keys', async (_n, filter) => {
    const storage = await openPostgresStorage({ url: pgdb.url, poolSize: 2 });
    closers.push(() => storage.close());
    vi.useFakeTimers({ toFake: ['Date'] });
    closers.push(async () => void vi.useRealTimers());
    vi.setSystemTime(Date.parse('2026-01-01T10:00:00.000Z'));
    const [sa, sb] = [await fill(storage), await fill(storage)];
    const before = await storage.revision(sa);
    const expected = await everything(storage, sb, filter);
    expect(expected.length).toBeGreaterThan(0);
    vi.setSystemTime(Date.parse('2026-01-01T10:00:01.000Z'));
    // In two requests: the first bounded, saying more remain.
    const cut = Math.max(1, expected.length >> 1);
    const first = await storage.deleteMatching?.(sa, filter, cut);
    const rest = await storage.deleteMatching?.(sa, filter, 10_000);
    const none = await storage.deleteMatching?.(sa, filter, 10);
    const plain = expected.map((t) => ({ user: t.user, relation: t.relation, object: t.object }));
    for (const part of [plain.slice(0, cut), plain.slice(cut)])
      if (part.length > 0)
        await storage.writeTuples(sb, { writes: [], deletes: part, onDuplicate: 'error', onMissing: 'error' });

    expect(first?.more).toBe(cut < expected.length);
    expect(rest?.more).toBe(false);
    expect([...(first?.result.deleted ?? []), ...(rest?.result.deleted ?? [])]).toEqual(plain);
    expect(first?.result.revision).toBe(before + 1);
    expect(none?.result).toMatchObject({ deleted: [], revision: await storage.revision(sa) });
    expect(await changesAfter(storage, sa, before)).toEqual(await changesAfter(storage, sb, before));
    expect(await everything(storage, sa)).toEqual(await everything(storage, sb));
    expect(await everything(storage, sa, filter)).toEqual([]);

    // The deletes are logged as compact rows, one per request and object type,
    // where latch_write logs one row per tuple; every ReadChanges page reads them back as the
    // per-tuple rows: the same items and cursors at every page size, with and without a type, from
    // a start time, and from a cursor inside a compact row.
    const db = new pg.Client({ connectionString: pgdb.url });
    await db.connect();
    closers.push(() => db.end());
    const rowsOf = async (store: string): Promise<{ rows: number; bulk: number }> => {
      const r = await db.query<{ rows: string; bulk: string }>(
        'SELECT count(*) AS rows, count(bulk) AS bulk FROM latch_changes WHERE store_id = $1 AND revision > $2',
        [store, before],
      );
      return { rows: Number(r.rows[0]?.rows), bulk: Number(r.rows[0]?.bulk) };
    };
    const types = (rows: TupleKey[]): number => new Set(rows.map((t) => t.object.split(':')[0])).size;
    const requests = types(plain.slice(0, cut)) + types(plain.slice(cut));
    expect(await rowsOf(sa)).toEqual({ rows: requests, bulk: requests });
    expect(await rowsOf(sb)).toEqual({ rows: plain.length, bulk: 0 });
    for (const pageSize of [1, 3, 7, 50, 1000])
      for (const type of [undefined, 'doc', 'group']) {
        const q = type === undefined ? {} : { type };
        expect(await pagedChanges(storage, sa, pageSize, q)).toEqual(await pagedChanges(storage, sb, pageSize, q));
      }
    for (const pageSize of [2, 100])
      expect(await pagedChanges(storage, sa, pageSize, { startTime: '2026-01-01T10:00:01.000Z' })).toEqual(
        await pagedChanges(storage, sb, pageSize, { startTime: '2026-01-01T10:00:01.000Z' }),
      );
    const all = await pagedChanges(storage, sb, 1000);
    const start = content().length;
    expect(all.items).toHaveLength(start + plain.length);
    for (const at of [start, start + 1, start + cut - 1, start + cut, start + plain.length - 1]) {
      const page = await storage.readChanges(sa, { pageSize: 4, after: all.cursors[at - 1] });
      expect(page.items).toEqual(all.items.slice(at, at + 4));
      expect(page.cursors).toEqual(all.cursors.slice(at, at + 4));
    }
  });
  it('fields JSON escapes or that hold the key separators: the same rows and changelog as latch_write', async () => {
    const storage = await openPostgresStorage({ url: pgdb.url, poolSize: 2 });
    closers.push(() => storage.close());
    // The first three sort first and are plain (their request's compact row is made from the key
    // text); every later request holds a field the key text cannot carry as JSON as it is.
    const objects = ['doc:a0', 'doc:a1', 'doc:a2', 'doc:q"1', 'doc:b\\1', 'doc:n\u00001', 'doc:o\u00011'];
    objects.push('doc:c\u00031', 'doc:e\u00041', 'doc:f\u001f1', 'doc:z\u0000\u0003', 'doc:y\u0001\u0004', 'doc:zz');
    const keys = objects.map((object, i) => ({ object, relation: 'viewer', user: `user:x${i}` }));
    keys.push(
      { object: 'doc:zz', relation: 'viewer', user: 'user:"\\' },
      { object: 'doc:zz', relation: 'viewer', user: 'user:\u0003' },
    );
    vi.useFakeTimers({ toFake: ['Date'] });
    closers.push(async () => void vi.useRealTimers());
    vi.setSystemTime(Date.parse('2026-01-01T10:00:00.000Z'));
    const [sa, sb] = [(await storage.createStore('odd')).id, (await storage.createStore('odd')).id];
    for (const s of [sa, sb])
      await storage.writeTuples(s, { writes: keys, deletes: [], onDuplicate: 'error', onMissing: 'error' });
    const before = await storage.revision(sa);
    const expected = await everything(storage, sb);
    const deleted: TupleKey[] = [];
    for (let more = true; more;) {
      const d = await storage.deleteMatching?.(sa, { object: 'doc:', relation: 'viewer' }, 3);
      const part = d?.result.deleted ?? [];
      expect(part.length).toBeGreaterThan(0);
      deleted.push(...part);
      await storage.writeTuples(sb, { writes: [], deletes: part, onDuplicate: 'error', onMissing: 'error' });
      more = d?.more ?? false;
    }
    expect(deleted).toEqual(expected);
    expect(await everything(storage, sa)).toEqual([]);
    expect(await changesAfter(storage, sa, before)).toEqual(await changesAfter(storage, sb, before));
    for (const pageSize of [1, 2, 5, 100])
      expect(await pagedChanges(storage, sa, pageSize)).toEqual(await pagedChanges(storage, sb, pageSize));
    // Both encodings of a compact row were written: separators replaced (no space) and json_agg.
    const db = new pg.Client({ connectionString: pgdb.url });
    await db.connect();
    closers.push(() => db.end());
    const forms = await db.query<{ lean: string; agg: string }>(
      `SELECT count(*) FILTER (WHERE bulk NOT LIKE '%", "%') AS lean, count(*) FILTER (WHERE bulk LIKE '%", "%') AS agg
         FROM latch_changes WHERE store_id = $1 AND bulk IS NOT NULL`,
      [sa],
    );
    expect(Number(forms.rows[0]?.lean)).toBeGreaterThan(0);
    expect(Number(forms.rows[0]?.agg)).toBeGreaterThan(0);
  });

  it('a write by another node between two requests of one filter: the next one scans from the start', async () => {
    const storage = await openPostgresStorage({ url: pgdb.url, poolSize: 2 });
    const other = await openPostgresStorage({ url: pgdb.url, poolSize: 2 });
    closers.push(
      () => storage.close(),
      () => other.close(),
    );
    const { s, keys } = await fortyViewers(storage, 'resume');
    const filter = { object: 'doc:', relation: 'viewer' };
    const first = await storage.deleteMatching?.(s, filter, 10);
    expect(first?.more).toBe(true);
    // A match that sorts before where the first request stopped, written by the other node.
    const early = { object: 'doc:d00', relation: 'viewer', user: 'user:w' };
    await other.writeTuples(s, { writes: [early], deletes: [], onDuplicate: 'error', onMissing: 'error' });
    const second = await storage.deleteMatching?.(s, filter, 10);
    expect(second?.result.deleted[0]).toEqual({ user: 'user:w', relation: 'viewer', object: 'doc:d00' });
    expect(second?.result.deleted.slice(1)).toEqual(keys.slice(10, 19));
    // Unchanged since: the next request resumes, and still deletes exactly the next matches.
    const third = await storage.deleteMatching?.(s, filter, 10);
    expect(third?.result.deleted).toEqual(keys.slice(19, 29));
    const rest = await storage.deleteMatching?.(s, filter, 100);
    expect(rest?.result.deleted).toEqual(keys.slice(29));
    expect(rest?.more).toBe(false);
    expect(await everything(storage, s)).toEqual([]);
  });

  it("tells another node a small delete's changes inline, a large one's revision only", async () => {
    const storage = await openPostgresStorage({ url: pgdb.url, poolSize: 2 });
    const other = await openPostgresStorage({ url: pgdb.url, poolSize: 2 });
    closers.push(
      () => storage.close(),
      () => other.close(),
    );
    await other.listening();
    const events: StorageEvent[] = [];
    other.subscribe((e) => void events.push(e));
    const store = await fill(storage);
    const small = await storage.deleteMatching?.(store, { object: 'doc:d1', relation: 'viewer' }, 10_000);
    const large = await storage.deleteMatching?.(store, { object: 'group:' }, 10_000);
    expect(small?.result.deleted.length).toBeGreaterThan(0);
    expect(large?.result.deleted.length).toBeGreaterThan(32);
    await vi.waitFor(() => expect(events.filter((e) => e.kind === 'tuples' && e.storeId === store)).toHaveLength(3));
    const [, first, second] = events.filter((e) => e.kind === 'tuples' && e.storeId === store);
    expect(first).toEqual({
      kind: 'tuples',
      storeId: store,
      revision: small?.result.revision,
      changes: { deleted: small?.result.deleted, written: [] },
    });
    expect(second).toEqual({ kind: 'tuples', storeId: store, revision: large?.result.revision });
  });
});
