// The storage suite against LevelDB in a fresh temp directory, plus what only a disk can show:
// persistence across reopen, resumed reclamation and the directory lock within one process.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openStorage } from '../../src/storage/index.js';
import { openLevelKv, openLevelStorage } from '../../src/storage/level.js';
import { DataDirectoryInUseError } from '../../src/storage/lock.js';
import type { TupleKey } from '../../src/domain/types.js';
import type { HeldHint } from '../../src/storage/types.js';
import { nextTurn, PriorityLane } from '../../src/domain/turn.js';
import { allTuples, collect, rejectsWith, str, tk, writes } from './helpers.js';
import { storageSuite } from './suite.js';

async function tempDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'latch-storage-'));
}

storageSuite('leveldb', async () => {
  const dir = await tempDir();
  const storage = await openLevelStorage(dir);
  return {
    storage,
    dispose: async () => {
      await storage.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describe('storage: leveldb on disk', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
  });

  it('keeps stores, tuples, revisions, models and checkpoints across a reopen', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const a = await openLevelStorage(dir);
    const id = (await a.createStore('persist')).id;
    const model = await a.writeModel(id, { schema_version: '1.1', type_definitions: [{ type: 'user' }] });
    await a.writeTuples(id, writes('doc:1#viewer@user:anne'));
    await a.writeTuples(id, writes('doc:2#viewer@user:bob'));
    await a.writeCheckpoint(id, 2, [new Uint8Array([9, 9])]);
    await a.close();

    const b = await openLevelStorage(dir);
    expect((await b.getStore(id))?.name).toBe('persist');
    expect(await b.revision(id)).toBe(2);
    expect(await allTuples(b, id)).toEqual(['doc:1#viewer@user:anne', 'doc:2#viewer@user:bob']);
    expect((await b.latestModel(id))?.id).toBe(model.id);
    const cp = await b.readCheckpoint(id);
    expect((await collect(cp?.chunks ?? [])).map((c) => [...c])).toEqual([[9, 9]]);
    expect((await b.writeTuples(id, writes('doc:3#viewer@user:carl'))).revision).toBe(3);
    const later = (await b.writeModel(id, { schema_version: '1.1', type_definitions: [{ type: 'user' }] })).id;
    expect(later > model.id).toBe(true);
    await b.close();
  });

  it("importTuples reads only the tuples a hint at the store's revision may hold; a stale hint is ignored", async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const s = await openLevelStorage(dir);
    try {
      const id = (await s.createStore('hint')).id;
      await s.writeTuples(id, writes('doc:1#viewer@user:anne'));
      await s.writeTuples(id, { ...writes(), writes: [tk('doc:2#viewer@user:bob', { name: 'c' })] });
      const asked: string[] = [];
      const hint = (revision: number, held: (t: TupleKey) => boolean): HeldHint => ({
        revision,
        mayHold: (t) => {
          asked.push(str(t));
          return held(t);
        },
      });
      // A hint of another revision is not asked: every tuple is read, the conflict found.
      await rejectsWith(
        s.importTuples(
          id,
          [tk('doc:2#viewer@user:bob'), tk('doc:3#viewer@user:new')],
          hint(1, () => false),
        ),
        'transaction_conflict',
      );
      expect(asked).toEqual([]);
      // At the store's revision: asked once per tuple; the stored one it may hold is read and conflicts.
      await rejectsWith(
        s.importTuples(
          id,
          [tk('doc:3#viewer@user:new'), tk('doc:2#viewer@user:bob')],
          hint(2, (t) => t.object === 'doc:2'),
        ),
        'transaction_conflict',
      );
      expect(asked).toEqual(['doc:3#viewer@user:new', 'doc:2#viewer@user:bob']);
      // The same stored tuple again, identical: read and skipped; the new ones are written.
      const r = await s.importTuples(
        id,
        [tk('doc:1#viewer@user:anne'), tk('doc:3#viewer@user:new'), tk('doc:4#viewer@user:new')],
        hint(2, (t) => t.object === 'doc:1'),
      );
      expect(r.revision).toBe(3);
      expect(r.written.map((t) => t.object)).toEqual(['doc:3', 'doc:4']);
      expect((await allTuples(s, id)).sort()).toEqual([
        'doc:1#viewer@user:anne',
        'doc:2#viewer@user:bob',
        'doc:3#viewer@user:new',
        'doc:4#viewer@user:new',
      ]);
    } finally {
      await s.close();
    }
  });

  it('importTuples holds a section of the lane open while it plans, not while it writes', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const s = await openLevelStorage(dir);
    try {
      const id = (await s.createStore('lane')).id;
      const lane = new PriorityLane();
      // 10,000 tuples: planned in several slices, each a turn of the event loop apart.
      const tuples = Array.from({ length: 10_000 }, (_, i) => tk(`doc:${i}#viewer@user:u${i % 97}`));
      let turnsWhileOpen = 0;
      let sawOpen = false;
      const watch = async (): Promise<void> => {
        while (!settled) {
          await nextTurn();
          if (lane.busy) {
            sawOpen = true;
            turnsWhileOpen++;
          }
        }
      };
      let settled = false;
      const watching = watch();
      // Work that yields through the lane: none of its turns end while planning is under way.
      let laneTurns = 0;
      const behind = (async () => {
        while (!settled) {
          await lane.turn();
          expect(lane.busy).toBe(false);
          laneTurns++;
        }
      })();
      const r = await s.importTuples(id, tuples, undefined, lane);
      settled = true;
      await Promise.all([watching, behind]);
      expect(r.written).toHaveLength(10_000);
      expect(sawOpen).toBe(true);
      expect(turnsWhileOpen).toBeGreaterThan(1);
      expect(laneTurns).toBeGreaterThan(0);
      expect(lane.busy).toBe(false);
      // A chunk that fails in planning (a conflicting stored tuple) closes its section too.
      await rejectsWith(
        s.importTuples(
          id,
          [tk('doc:1#viewer@user:u1', { name: 'c' })],
          { revision: r.revision, mayHold: () => true },
          lane,
        ),
        'transaction_conflict',
      );
      expect(lane.busy).toBe(false);
    } finally {
      await s.close();
    }
  });

  it('resumes reclaiming a tombstoned store after a restart', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const a = await openLevelStorage(dir, { reclaim: false });
    const id = (await a.createStore('doomed')).id;
    for (let i = 0; i < 30; i++)
      await a.writeTuples(id, writes(...Array.from({ length: 50 }, (_, j) => `doc:${i}-${j}#viewer@user:anne`)));
    await a.deleteStore(id);
    expect(await a.countStoreKeys(id)).toBeGreaterThan(3000);
    await a.close();

    const b = await openLevelStorage(dir);
    expect(await b.getStore(id)).toBeUndefined();
    await b.settled();
    expect(await b.countStoreKeys(id)).toBe(0);
    await b.close();
  });

  it('openStorage picks LevelDB for a path and memory otherwise', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const disk = await openStorage({ path: dir });
    const mem = await openStorage({});
    expect([disk.kind, mem.kind]).toEqual(['leveldb', 'memory']);
    await Promise.all([disk.close(), mem.close()]);
  });

  it('a second open of the same directory fails fast with a clear message', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const a = await openLevelStorage(dir);
    const err = await openLevelStorage(dir).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(DataDirectoryInUseError);
    expect((err as Error).message).toBe(
      `data directory ${dir} is in use by another latch process (pid ${process.pid})`,
    );
    await a.close();
    const again = await openLevelStorage(dir);
    await again.close();
  });

  it('a writer writes the ops added to it as one batch, and a discarded one writes nothing', async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const kv = await openLevelKv(dir);
    const one = new Uint8Array([1]);
    await kv.batch(
      [
        { type: 'put', key: 'a', value: one },
        { type: 'put', key: 'b', value: one },
      ],
      true,
    );
    const dropped = kv.writer?.();
    if (!dropped) throw new Error('LevelDB gives a writer');
    dropped.del('a');
    dropped.put('c', one);
    await dropped.discard();
    const bytes = async (keys: string[]): Promise<(number[] | undefined)[]> =>
      (await kv.getMany(keys)).map((v) => (v ? [...v] : undefined));
    const w = kv.writer?.();
    if (!w) throw new Error('LevelDB gives a writer');
    w.del('a');
    w.put('d', new Uint8Array([2]));
    // Nothing is visible before `write`.
    expect(await bytes(['a', 'c', 'd'])).toEqual([[1], undefined, undefined]);
    await w.write(true);
    expect(await bytes(['a', 'b', 'c', 'd'])).toEqual([undefined, [1], undefined, [2]]);
    // Puts only, many with one value (an import chunk's keys), a del among them: all written, in
    // order (the del of a key put before it removes it; a put after a del restores it).
    const many = kv.writer?.();
    if (!many) throw new Error('LevelDB gives a writer');
    const shared = new Uint8Array([3]);
    const keys = Array.from({ length: 1000 }, (_, i) => `k${String(i).padStart(4, '0')}`);
    for (const k of keys) many.put(k, shared);
    many.del('k0001');
    many.del('k0002');
    many.put('k0002', new Uint8Array([4]));
    await many.write(true);
    const got = await bytes(keys);
    expect(got[0]).toEqual([3]);
    expect(got[1]).toBeUndefined();
    expect(got[2]).toEqual([4]);
    expect(got.slice(3).every((v) => v?.length === 1 && v[0] === 3)).toBe(true);
    const entries: string[] = [];
    for await (const k of kv.keys({ gte: 'k', lt: 'l' })) entries.push(k);
    expect(entries).toEqual(keys.filter((k) => k !== 'k0001'));
    await kv.close();
  });

  it("a writer's puts after its database closed are not written: its write fails", async () => {
    const dir = await tempDir();
    dirs.push(dir);
    const kv = await openLevelKv(dir);
    const w = kv.writer?.();
    if (!w) throw new Error('LevelDB gives a writer');
    w.put('a', new Uint8Array([1]));
    await kv.close();
    w.put('b', new Uint8Array([1]));
    await expect(w.write(true)).rejects.toThrow();
    const again = await openLevelKv(dir);
    expect(await again.getMany(['a', 'b'])).toEqual([undefined, undefined]);
    await again.close();
  });
});
