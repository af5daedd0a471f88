// Delete by filter below the HTTP layer: the key-value backends' one-step `deleteMatching`
// (src/storage/delete-matching.ts) leaves exactly what deleting the same keys through
// `writeTuples` leaves (tuples, by-user and expiry indexes, changelog with each tuple's prior
// state), on LevelDB and memory; and the engine's relation-only filter neither scans a store whose
// index never saw the relation nor holds up the store's other writes while it scans.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AuthorizationModelInput, TupleKey } from '../../src/domain/types.js';
import { LatchService } from '../../src/engine/service.js';
import { DEFAULT_ENGINE_CONFIG } from '../../src/engine/config.js';
import { openLevelStorage } from '../../src/storage/level.js';
import { openMemoryStorage } from '../../src/storage/memory.js';
import type { RevisionChange, Storage, TupleFilter } from '../../src/storage/types.js';
import { MODEL as MODEL_JSON } from '../http/helpers.js';

const MODEL = MODEL_JSON as unknown as AuthorizationModelInput;
const EXPIRES = '2999-01-01T00:00:00.000Z';

const dirs: string[] = [];
const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function open(kind: 'leveldb' | 'memory'): Promise<Storage> {
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

async function everything(storage: Storage, storeId: string, filter: TupleFilter = {}): Promise<TupleKey[]> {
  return (await storage.readTuples(storeId, filter, { pageSize: 10_000 })).items.map((t) => t.key);
}

describe.each(['leveldb', 'memory'] as const)('deleteMatching on %s', (kind) => {
  const filters: [string, TupleFilter][] = [
    ['an object type', { object: 'doc:' }],
    ['an object type and relation', { object: 'doc:', relation: 'owner' }],
    ['one object', { object: 'doc:d1' }],
    ['an object type and user (by-user index)', { object: 'doc:', user: 'user:u4' }],
    ['a userset user', { object: 'doc:', user: 'group:g1#member' }],
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
    // The by-user index and the expiry index lost the same entries.
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
