// Child process of the cold-load scenario (run with --expose-gc). One phase per process so every
// RSS figure starts from a fresh heap:
//   fill <dir> <n>        writes n tuples into a LevelDB store (10,000-tuple synced batches)
//   tuples <dir> <n>      StoreIndex.load with no checkpoint (scanTuples), then writes a checkpoint
//   checkpoint <dir> <n>  StoreIndex.load from the checkpoint image
//   tail <dir> <n>        writes MAX_TAIL more tuples (the most a crash leaves since the last
//                         background checkpoint), then StoreIndex.load: image + change-log tail
// Prints one JSON line of metrics. Tuples: 5 per document, subjects from 100k users (parents
// from 20k folders), as in the index-memory scenario.

import type { TupleKey } from '../../src/domain/types.js';
import { allocatedBytes } from '../../src/index/memory.js';
import { MAX_TAIL, StoreIndex } from '../../src/index/store-index.js';
import { openLevelStorage } from '../../src/storage/level.js';
import type { Storage } from '../../src/storage/types.js';
import { rss } from '../harness.js';

const [phase = '', dir = '', count = '1000000'] = process.argv.slice(2);
const n = Number(count);
const RELS = ['viewer', 'editor', 'owner', 'commenter', 'parent'];
const BATCH = 10_000;
/** The background-checkpoint cap: the longest tail a crash can leave. */
const TAIL = MAX_TAIL;

/** Writes tuples `make(from) … make(to - 1)` in synced batches of BATCH. */
async function write(
  storage: Storage,
  store: string,
  from: number,
  to: number,
  make: (i: number) => TupleKey,
): Promise<void> {
  for (let i = from; i < to; i += BATCH) {
    const writes: TupleKey[] = [];
    for (let j = i; j < Math.min(to, i + BATCH); j++) writes.push(make(j));
    await storage.writeTuples(store, { deletes: [], writes, onDuplicate: 'error', onMissing: 'error' });
  }
}

/** The tail phase's tuples: new documents, so every change is an insert the replay must apply. */
function tailTuple(i: number): TupleKey {
  return { object: `doc:tail-${i}`, relation: 'viewer', user: `user:${(i * 7919) % 100_000}` };
}

function tuple(i: number): TupleKey {
  const rel = RELS[i % 5] ?? 'viewer';
  const user = rel === 'parent' ? `folder:${(i * 31) % 20_000}` : `user:${(i * 7919) % 100_000}`;
  return { object: `doc:${Math.floor(i / 5)}`, relation: rel, user };
}

/** A few tuples must read back exactly: a fast wrong load is not a result. */
function verifyIndex(ix: StoreIndex): void {
  const s = ix.snapshot();
  for (const i of [0, 7, Math.floor(n / 2) + 3, n - 1]) {
    const t = tuple(i);
    const users = [...s.users(t.object, t.relation)].map((e) => e.user);
    if (!users.includes(t.user)) throw new Error(`cold load lost ${t.object}#${t.relation}@${t.user}`);
  }
  if (s.nodeCount < n / 5) throw new Error(`cold load has ${s.nodeCount} nodes`);
}

async function main(): Promise<Record<string, number>> {
  const storage = await openLevelStorage(dir);
  try {
    const stores = await storage.listStores({ pageSize: 10 });
    const store = stores.items[0]?.id ?? (await storage.createStore('cold-load')).id;
    if (phase === 'fill') {
      const t0 = performance.now();
      await write(storage, store, 0, n, tuple);
      return { fillMs: performance.now() - t0 };
    }
    if (phase === 'tail') await write(storage, store, 0, TAIL, tailTuple);
    global.gc?.();
    const rss0 = rss();
    const shared0 = allocatedBytes();
    const t0 = performance.now();
    // The tuples phase must not see a checkpoint of an earlier run: the same LevelDB storage with
    // its checkpoint hidden, so StoreIndex.load takes the scan path.
    const source: Storage =
      phase === 'tuples'
        ? Object.assign(Object.create(storage) as Storage, { readCheckpoint: async () => undefined })
        : storage;
    const ix = await StoreIndex.load(source, store);
    const loadMs = performance.now() - t0;
    global.gc?.();
    const rss1 = rss();
    verifyIndex(ix);
    const out: Record<string, number> = {
      loadMs,
      rssMB: (rss1 - rss0) / 1048576,
      rssMBPer1M: ((rss1 - rss0) / 1048576) * (1e6 / n),
      indexBytesPerTuple: ix.baseBytes / n,
      sharedBytesPerTuple: (allocatedBytes() - shared0) / n,
    };
    if (phase === 'tail') {
      if (ix.loaded.tailChanges !== TAIL)
        throw new Error(`tail load replayed ${ix.loaded.tailChanges} changes, not ${TAIL}`);
      const t = tailTuple(TAIL - 1);
      const has = (): boolean => [...ix.snapshot().users(t.object, t.relation)].some((e) => e.user === t.user);
      if (!has()) throw new Error('tail load lost the last change');
      // The index serves from base + overlay at once; the fold of the tail into the base goes on
      // in a background merge, timed on its own.
      const f0 = performance.now();
      await ix.settled();
      out.foldMs = performance.now() - f0;
      if (!has()) throw new Error('the fold of the tail lost the last change');
    }
    if (phase === 'tuples') {
      const c0 = performance.now();
      await ix.checkpoint(storage, store);
      out.checkpointWriteMs = performance.now() - c0;
    }
    return out;
  } finally {
    await storage.close();
  }
}

const r = await main();
process.stdout.write(JSON.stringify(r) + '\n');
process.exit(0);
