// Index checkpoints at load (src/engine/state/store-indexes.ts): a load that had to scan the tuples or replay a
// long change-log tail starts one in the background as it begins to serve, so the next start
// reads the image instead (`settled()` waits for it).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreIndexes } from '../../src/engine/state/store-indexes.js';
import type { StoreIndex } from '../../src/index/store-index.js';
import { openStorage } from '../../src/storage/index.js';
import { openLevelStorage } from '../../src/storage/level.js';
import type { CheckpointWriter, Storage } from '../../src/storage/types.js';
import type { TupleKey } from '../../src/domain/types.js';
import { everyTuple, stored } from '../index/helpers.js';
import { collect } from '../storage/helpers.js';
import type { EngineLog } from '../../src/engine/contract.js';

const viewer = (i: number): TupleKey => ({ user: `user:u${i}`, relation: 'viewer', object: `doc:d${i % 50}` });
const plain = { onDuplicate: 'error', onMissing: 'error', deletes: [] } as const;

describe('checkpoints written at load', () => {
  it('a scan is followed by a checkpoint; the next load starts from it and writes none', async () => {
    const storage = await openStorage({});
    const store = await storage.createStore('s');
    await storage.writeTuples(store.id, { ...plain, writes: Array.from({ length: 100 }, (_, i) => viewer(i)) });

    const first = new StoreIndexes(storage);
    expect((await first.get(store.id)).loaded).toEqual({ fromCheckpoint: false, tailChanges: 0 });
    await first.settled();
    expect(first.checkpoints).toEqual({ written: 1, failed: 0 });
    expect((await storage.readCheckpoint(store.id))?.revision).toBe(1);

    await storage.writeTuples(store.id, { ...plain, writes: [viewer(100)] });
    const second = new StoreIndexes(storage);
    expect((await second.get(store.id)).loaded).toEqual({ fromCheckpoint: true, tailChanges: 1 });
    await second.settled();
    expect(second.checkpoints).toEqual({ written: 0, failed: 0 });
    await first.close();
    await second.close();
    await storage.close();
  });

  it('an empty store is not checkpointed at load; a long tail is', async () => {
    const storage = await openStorage({});
    const store = await storage.createStore('s');
    const empty = new StoreIndexes(storage);
    await empty.get(store.id);
    await empty.settled();
    expect(empty.checkpoints.written).toBe(0);

    // 10,000 logged changes after the image (LONG_TAIL): the load replays them, then checkpoints.
    await storage.writeTuples(store.id, { ...plain, writes: [viewer(0)] });
    const scan = new StoreIndexes(storage);
    await scan.get(store.id); // scan → image at revision 2
    await scan.settled();
    for (let b = 0; b < 100; b++) {
      await storage.writeTuples(store.id, {
        ...plain,
        writes: Array.from({ length: 100 }, (_, i) => ({
          user: `user:b${b}x${i}`,
          relation: 'viewer',
          object: 'doc:t',
        })),
      });
    }
    const replay = new StoreIndexes(storage);
    expect((await replay.get(store.id)).loaded).toEqual({ fromCheckpoint: true, tailChanges: 10_000 });
    await replay.settled();
    expect(replay.checkpoints.written).toBe(1);
    expect((await new StoreIndexes(storage).get(store.id)).loaded).toEqual({ fromCheckpoint: true, tailChanges: 0 });
    await storage.close();
  });
});

// Background checkpoints (StoreIndex.checkpointDue after a merge): written while the index serves,
// counted and logged when they fail, stopped by drop and by close.

const many = (tag: string, n: number): TupleKey[] =>
  Array.from({ length: n }, (_, i) => ({ user: `user:${tag}${i % 37}`, relation: 'viewer', object: `doc:${tag}${i}` }));
const small = { mergeThreshold: 300, checkpointChanges: 1000 };

interface Gate {
  /** While false, every checkpoint writer waits before each chunk. */
  open: boolean;
  /** Thrown by openCheckpoint while set. */
  fail?: Error | undefined;
  /** openCheckpoint calls so far. */
  started: number;
}

/** The same storage, with its checkpoint writers behind `gate`. */
function gated(storage: Storage, gate: Gate): Storage {
  const wait = async (): Promise<void> => {
    while (!gate.open) await new Promise((r) => setTimeout(r, 1));
  };
  return Object.assign(Object.create(storage) as Storage, {
    openCheckpoint: async (id: string, revision: number): Promise<CheckpointWriter> => {
      gate.started++;
      if (gate.fail) throw gate.fail;
      const w = await storage.openCheckpoint(id, revision);
      return { write: async (c) => (await wait(), w.write(c)), commit: () => w.commit(), abort: () => w.abort() };
    },
  });
}

/**
 * Writes `n` tuples in writes of 50 through storage and the index, as the service does, with an
 * event-loop turn after each (the memory backend's writes take none) so merges make progress.
 */
async function fill(storage: Storage, storeId: string, index: StoreIndex, tag: string, n: number): Promise<void> {
  const all = many(tag, n);
  for (let i = 0; i < n; i += 50) {
    index.apply(await storage.writeTuples(storeId, { ...plain, writes: all.slice(i, i + 50) }));
    await new Promise((r) => setImmediate(r));
  }
}

/**
 * A memory store seeded with 100 tuples, served by StoreIndexes over `gated` storage (small merge and
 * checkpoint thresholds), its index loaded and the scan's load-time checkpoint written.
 */
async function seededGated(
  log?: EngineLog,
): Promise<{ storage: Storage; storeId: string; gate: Gate; indexes: StoreIndexes; index: StoreIndex }> {
  const storage = await openStorage({});
  const storeId = (await storage.createStore('s')).id;
  await storage.writeTuples(storeId, { ...plain, writes: many('seed', 100) });
  const gate: Gate = { open: true, started: 0 };
  const indexes = new StoreIndexes(gated(storage, gate), { index: small, log });
  const index = await indexes.get(storeId);
  await indexes.settled(); // the scan's checkpoint, at load
  return { storage, storeId, gate, indexes, index };
}

describe('checkpoints written in the background', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
  });

  it('a serving index checkpoints once enough changes are merged; a restart without close loads that image and replays only the later changes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'latch-bgcp-'));
    dirs.push(dir);
    const storage = await openLevelStorage(dir);
    const store = await storage.createStore('s');
    await storage.writeTuples(store.id, { ...plain, writes: many('seed', 100) });
    const logs: string[] = [];
    const indexes = new StoreIndexes(storage, { index: small, log: (_l, msg) => logs.push(msg) });
    const index = await indexes.get(store.id);
    await indexes.settled();
    expect(indexes.checkpoints).toEqual({ written: 1, failed: 0 }); // the scan's, at load
    const atLoad = index.checkpointRevision ?? 0;

    await fill(storage, store.id, index, 'w', 3000);
    await index.settled();
    await indexes.settled();
    expect(indexes.checkpoints.written).toBeGreaterThanOrEqual(2);
    expect([indexes.checkpoints.failed, logs]).toEqual([0, []]);
    const image = (await storage.readCheckpoint(store.id))?.revision ?? 0;
    expect(image).toBe(index.checkpointRevision);
    expect(image).toBeGreaterThan(atLoad);
    await fill(storage, store.id, index, 'late', 100);
    const current = index.currentRevision;
    // The process stops here without closing the indexes (every write was synced): no checkpoint at close.
    await storage.close();
    index.close();

    const reopened = await openLevelStorage(dir);
    const later = (await collect(reopened.changesSince(store.id, image))).length;
    expect(later).toBeGreaterThanOrEqual(100);
    expect(later).toBeLessThan(3200);
    const restarted = new StoreIndexes(reopened);
    const again = await restarted.get(store.id);
    expect(again.loaded).toEqual({ fromCheckpoint: true, tailChanges: later });
    expect(again.currentRevision).toBe(current);
    const truth = (await collect((await reopened.scanTuples(store.id)).tuples)).map(stored).sort();
    expect(truth.length).toBe(3200);
    expect(everyTuple(again.snapshot())).toEqual(truth);
    await restarted.close();
    await reopened.close();
  });

  it('a failed background checkpoint is counted and logged, the writes go on, and the next due merge writes one', async () => {
    const logs: [string, Readonly<Record<string, unknown>>][] = [];
    const { storage, storeId, gate, indexes, index } = await seededGated((_l, msg, fields) => logs.push([msg, fields]));
    gate.fail = new Error('disk full');
    await fill(storage, storeId, index, 'a', 1500);
    await index.settled();
    await indexes.settled();
    expect(indexes.checkpoints.written).toBe(1);
    expect(indexes.checkpoints.failed).toBeGreaterThanOrEqual(1);
    expect(indexes.checkpoints.failed).toBe(gate.started - 1);
    expect(logs).toEqual(
      Array.from({ length: indexes.checkpoints.failed }, () => [
        'index checkpoint failed',
        { store_id: storeId, cause: 'disk full' },
      ]),
    );
    expect(everyTuple(index.snapshot())).toEqual([...many('seed', 100), ...many('a', 1500)].map(stored).sort());

    gate.fail = undefined;
    await fill(storage, storeId, index, 'b', 1500);
    await index.settled();
    await indexes.settled();
    expect(indexes.checkpoints.written).toBeGreaterThanOrEqual(2);
    expect((await storage.readCheckpoint(storeId))?.revision).toBe(index.checkpointRevision);
    await indexes.close();
    await storage.close();
  });

  it('a store deleted while its checkpoint is copied: the copy stops, nothing is counted or written', async () => {
    const logs: string[] = [];
    const { storage, storeId, gate, indexes, index } = await seededGated((_l, msg) => logs.push(msg));
    gate.open = false;
    await fill(storage, storeId, index, 'a', 1500);
    await index.settled();
    expect(gate.started).toBe(2); // at load, and after a merge found one due: that copy waits at the gate
    await storage.deleteStore(storeId);
    indexes.drop(storeId);
    gate.open = true;
    await indexes.settled();
    expect([indexes.checkpoints, logs]).toEqual([{ written: 1, failed: 0 }, []]);
    expect(await storage.readCheckpoint(storeId)).toBeUndefined();
    await indexes.close();
    await storage.close();
  });

  it('close stops a running background checkpoint and writes one at the current revision', async () => {
    const { storage, storeId, gate, indexes, index } = await seededGated();
    gate.open = false;
    await fill(storage, storeId, index, 'a', 1500);
    await index.settled();
    expect(gate.started).toBe(2); // at load, and a background copy now waiting at the gate
    const closing = indexes.close();
    gate.open = true;
    await closing;
    expect(indexes.checkpoints).toEqual({ written: 2, failed: 0 }); // at load, at close
    const cp = await storage.readCheckpoint(storeId);
    expect(cp?.revision).toBe(await storage.revision(storeId));
    const again = await new StoreIndexes(storage).get(storeId);
    expect(again.loaded).toEqual({ fromCheckpoint: true, tailChanges: 0 });
    expect(everyTuple(again.snapshot())).toEqual([...many('seed', 100), ...many('a', 1500)].map(stored).sort());
    again.close();
    await storage.close();
  });
});
