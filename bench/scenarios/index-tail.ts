// Cold load with a long change-log tail: what a restart after a crash pays when the last
// checkpoint is old. A 200k-tuple store is checkpointed, then written to at random existing
// objects (the worst case for the overlay: every change lands in the middle of its sorted
// records), and StoreIndex.load reads the checkpoint plus the tail. Memory storage: the figure is
// the index's cost, not LevelDB's.

import type { TupleKey } from '../../src/domain/types.js';
import { StoreIndex } from '../../src/index/store-index.js';
import { openMemoryStorage } from '../../src/storage/memory.js';
import { verify, type Metric, type Scenario } from '../scenario.js';

const BASE = 200_000;

async function loadWithTail(tail: number): Promise<number> {
  const storage = await openMemoryStorage();
  try {
    const store = (await storage.createStore('tail')).id;
    const base = (i: number): TupleKey => ({
      object: `doc:${Math.floor(i / 5)}`,
      relation: 'viewer',
      user: `user:${(i * 7919) % 100_000}`,
    });
    const change = (i: number): TupleKey => ({
      object: `doc:${(i * 7907) % 40_000}`,
      relation: 'editor',
      user: `user:${i % 977}`,
    });
    for (let i = 0; i < BASE; i += 10_000) {
      await storage.writeTuples(store, {
        deletes: [],
        writes: Array.from({ length: 10_000 }, (_, j) => base(i + j)),
        onDuplicate: 'ignore',
        onMissing: 'ignore',
      });
    }
    await (await StoreIndex.load(storage, store)).checkpoint(storage, store);
    for (let i = 0; i < tail; i += 1000) {
      await storage.writeTuples(store, {
        deletes: [],
        writes: Array.from({ length: 1000 }, (_, j) => change(i + j)),
        onDuplicate: 'ignore',
        onMissing: 'ignore',
      });
    }
    const t0 = performance.now();
    const ix = await StoreIndex.load(storage, store);
    const ms = performance.now() - t0;
    const s = ix.snapshot();
    const last = change(tail - 1);
    verify(
      'tail change loaded',
      [...s.users(last.object, 'editor')].some((e) => e.user === last.user),
      true,
    );
    verify('base tuple kept', [...s.users('doc:7', 'viewer')].length, 5);
    return ms;
  } finally {
    await storage.close();
  }
}

export const indexTail: Scenario = {
  name: 'index-tail',
  description: 'cold load of a checkpoint plus a long change-log tail (200k tuples + 80k / 320k changes)',
  async run(opts) {
    const rows: Metric[] = [];
    for (const tail of opts.quick ? [20_000] : [80_000, 320_000]) {
      rows.push({
        scenario: 'index-tail',
        metric: `load checkpoint + ${tail / 1000}k changes`,
        value: Math.round(await loadWithTail(tail)),
        unit: 'ms',
      });
    }
    return rows;
  },
};
