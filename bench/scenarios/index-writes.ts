// Writes against a 1M-tuple index: latency of a 10-tuple write followed by a snapshot (the worst
// case: a reader after every write, so every write publishes an image of the whole overlay), the
// longest event-loop stall while background merges fold the overlay into new bases, and the
// shared memory held: its peak during the burst and how far the WebAssembly.Memory grew (it never
// shrinks, so the peak of a burst stays resident for the life of the process). The burst runs
// twice in one process: with the index's retention (a superseded snapshot released once unused)
// and with a 5 s grace period (the previous policy), so the two peaks compare under one load.

import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { TupleKey } from '../../src/domain/types.js';
import { allocatedBytes, memory } from '../../src/index/memory.js';
import { StoreIndex } from '../../src/index/store-index.js';
import { checkStatus } from '../../src/engine/evaluation/walker/checker.js';
import { direct } from '../graphs.js';
import { rss } from '../harness.js';
import { verify, type Metric, type Scenario } from '../scenario.js';

async function burst(opts: { quick: boolean }, retireAfterMs: number | undefined, label: string): Promise<Metric[]> {
  const shape = direct(opts.quick ? 20_000 : 100_000);
  const ix = StoreIndex.build(shape.tuples, 1, {
    mergeThreshold: 16_384,
    ...(retireAfterMs === undefined ? {} : { retireAfterMs }),
  });
  const writes = opts.quick ? 1000 : 4000;
  const stored = shape.tuples.slice(0, writes + 2);
  shape.tuples.length = 0; // keep the heap realistic: GC pauses would count as merge stalls
  const lat = new Float64Array(writes);
  const memory0 = memory.buffer.byteLength;
  const shared0 = allocatedBytes();
  const rss0 = rss();
  let peakShared = 0;
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  for (let w = 0; w < writes; w++) {
    const written: TupleKey[] = [];
    for (let k = 0; k < 10; k++) written.push({ object: `doc:w${w}`, relation: 'viewer', user: `user:w${w}_${k}` });
    const deleted: TupleKey[] = w % 2 === 0 ? [stored[w]!] : [];
    const t0 = process.hrtime.bigint();
    ix.apply({ revision: 2 + w, timestamp: '', written, deleted });
    ix.snapshot();
    lat[w] = Number(process.hrtime.bigint() - t0);
    peakShared = Math.max(peakShared, allocatedBytes() - shared0);
    if (w % 50 === 0) await new Promise<void>((r) => setImmediate(r)); // let merges run between writes
  }
  await ix.settled();
  h.disable();
  const rssBurst = rss();
  const sharedAfter = allocatedBytes() - shared0;
  ix.snapshot();
  await new Promise((r) => setTimeout(r, (retireAfterMs ?? 0) + 1500)); // superseded snapshots retire
  const sharedSettled = allocatedBytes() - shared0;
  const snap = ix.snapshot();
  const ask = (o: string, u: string): boolean => {
    const out = checkStatus(snap, shape.model, { object: o, relation: 'viewer', user: u, contextualTuples: [] });
    return 'allowed' in out && out.allowed;
  };
  verify('late write visible', ask(`doc:w${writes - 1}`, `user:w${writes - 1}_3`), true);
  verify('deleted tuple gone', ask(stored[0]!.object, stored[0]!.user), false);
  verify('untouched tuple kept', ask(stored[1]!.object, stored[1]!.user), true);
  lat.sort();
  ix.close();
  const s = `index-writes${label}`;
  const mb = (b: number): number => Math.round(b / 1048576);
  return [
    {
      scenario: s,
      metric: 'write 10 tuples + snapshot p50',
      value: Math.round(lat[Math.floor(writes / 2)]! / 1000),
      unit: 'µs',
    },
    {
      scenario: s,
      metric: 'write 10 tuples + snapshot p99',
      value: Math.round(lat[Math.floor(writes * 0.99)]! / 1000),
      unit: 'µs',
    },
    { scenario: s, metric: 'shared memory peak during the burst', value: mb(peakShared), unit: 'MB' },
    {
      scenario: s,
      metric: 'wasm memory growth over the burst',
      value: mb(memory.buffer.byteLength - memory0),
      unit: 'MB',
    },
    { scenario: s, metric: 'RSS growth over the burst', value: mb(rssBurst - rss0), unit: 'MB' },
    { scenario: s, metric: 'shared memory right after the burst', value: mb(sharedAfter), unit: 'MB' },
    { scenario: s, metric: 'shared memory once retired', value: mb(sharedSettled), unit: 'MB' },
    { scenario: s, metric: 'max event-loop delay (merges)', value: Math.round(h.max / 1e6), unit: 'ms' },
  ];
}

export const indexWrites: Scenario = {
  name: 'index-writes',
  description:
    'write + snapshot latency, merge stalls and snapshot memory (1M tuples; released once unused vs a 5 s grace)',
  async run(opts) {
    // The index's policy first: the grace-period run grows the wasm memory for good.
    const released = await burst(opts, undefined, '');
    const grace = await burst(opts, 5_000, ' (5 s grace)');
    return [...released, ...grace];
  },
};
