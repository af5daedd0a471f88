// Comparative micro benchmark (benchmark.js: statistically sound ops/s for A-vs-B questions):
// one direct check as a wasm call over the shared CSR, as plain JS over the same typed arrays,
// and as a Map<string, Set<string>> lookup — the reason the index is laid out the way it is.

import Benchmark from 'benchmark';
import { QUERY_WORDS, R_TRUE, SR_MASK } from '../../src/abi.js';
import { StoreIndex } from '../../src/index/store-index.js';
import { u32 } from '../../src/index/memory.js';
import { direct } from '../graphs.js';
import { verify, type Metric, type Scenario } from '../scenario.js';
import { IdWalker } from '../walker-ids.js';

export const micro: Scenario = {
  name: 'micro',
  description: 'direct check: wasm vs JS over the same CSR vs Map<string, Set<string>> (benchmark.js)',
  async run(opts) {
    const shape = direct(10_000, 10);
    const ix = StoreIndex.build(shape.tuples, 1);
    const snap = ix.snapshot();
    const w = new IdWalker(snap, shape.model);
    const ids = w.intern(shape.queries);
    const n = shape.queries.length;
    const map = new Map<string, Set<string>>();
    for (const t of shape.tuples) {
      const k = `${t.object}#${t.relation}`;
      (map.get(k) ?? map.set(k, new Set()).get(k))?.add(t.user);
    }
    const jsCheck = (i: number): boolean => {
      const o = i * QUERY_WORDS;
      const obj = ids[o] ?? 0;
      const subj = ids[o + 2] ?? 0;
      const at = snap.base.find(obj, ids[o + 1] ?? 0, 0, subj);
      if (at < 0) return false;
      return ((u32()[snap.base.w('fwdEnt') + 2 * at + 1] ?? 0) & SR_MASK) === 0;
    };
    verify(
      'micro wasm',
      shape.queries.map((_, i) => w.check(ids, i) === R_TRUE),
      shape.queries.map((x) => x.want),
    );
    verify(
      'micro js',
      shape.queries.map((_, i) => jsCheck(i)),
      shape.queries.map((x) => x.want),
    );
    verify(
      'micro map',
      shape.queries.map((x) => map.get(`${x.object}#${x.relation}`)?.has(x.user) ?? false),
      shape.queries.map((x) => x.want),
    );
    let i = 0;
    let sink = 0;
    const suite = new Benchmark.Suite();
    const maxTime = opts.quick ? 0.3 : 1.5;
    suite
      .add('wasm walker (ids)', () => void (sink += w.check(ids, i++ % n)), { maxTime })
      .add('JS binary search over the CSR (ids)', () => void (sink += jsCheck(i++ % n) ? 1 : 0), { maxTime })
      .add(
        'Map<string, Set<string>> (strings)',
        () => {
          const x = shape.queries[i++ % n]!;
          sink += map.get(`${x.object}#${x.relation}`)?.has(x.user) ? 1 : 0;
        },
        { maxTime },
      );
    const rows: Metric[] = [];
    suite.on('cycle', (e: Benchmark.Event) => {
      const b = e.target as unknown as Benchmark;
      rows.push({
        scenario: 'micro-direct',
        metric: String(b.name),
        value: Math.round(1e9 / (b.hz ?? 1)),
        unit: 'ns/op',
      });
    });
    suite.run();
    if (sink < 0) throw new Error('unreachable');
    ix.close();
    return rows;
  },
};
