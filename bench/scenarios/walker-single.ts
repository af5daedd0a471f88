// Single-thread Check latency per graph shape: the walker from interned ids (what a pool worker
// pays per item) and the full inline path from strings (what one HTTP Check pays in the engine).

import { R_TRUE } from '../../src/abi.js';
import { createWalkerChecker } from '../../src/engine/evaluation/walker/checker.js';
import { StoreIndex } from '../../src/index/store-index.js';
import {
  conditions,
  contextual,
  direct,
  folderTree,
  groupLattice,
  nestedGroups,
  setOps,
  type Shape,
} from '../graphs.js';
import { perOp } from '../harness.js';
import { verify, type Metric, type Scenario } from '../scenario.js';
import { IdWalker } from '../walker-ids.js';

function measureShape(shape: Shape, quick: boolean): Metric[] {
  const ix = StoreIndex.build(shape.tuples, 1);
  shape.tuples.length = 0; // a server does not keep the tuple objects on its heap
  const snap = ix.snapshot();
  const checker = createWalkerChecker({ workers: 0, resolveDepth: 25 });
  const qs = shape.queries;
  // verify every answer on the string path
  const got = qs.map((x) => {
    const o = checker.checkInline(snap, shape.model, x);
    return 'allowed' in o ? o.allowed : o.error.code;
  });
  verify(
    `${shape.name} answers`,
    got,
    qs.map((x) => x.want),
  );
  const samples = quick ? 300 : 2000;
  const rows: Metric[] = [];
  const add = (metric: string, v: number): void =>
    void rows.push({ scenario: shape.name, metric, value: Math.round(v), unit: 'ns/check' });
  const plain = qs.every((x) => x.contextualTuples.length === 0 && !x.context);
  if (plain) {
    const w = new IdWalker(snap, shape.model);
    const ids = w.intern(qs);
    verify(
      `${shape.name} id answers`,
      qs.map((_, i) => w.check(ids, i) === R_TRUE),
      qs.map((x) => x.want),
    );
    const n = qs.length;
    const p = perOp((i) => w.check(ids, i % n), { batch: 64, samples });
    add('ids p50', p.p50);
    add('ids p99', p.p99);
  }
  const n = qs.length;
  const s = perOp((i) => checker.checkInline(snap, shape.model, qs[i % n]!), { batch: 16, samples });
  add('strings p50', s.p50);
  add('strings p99', s.p99);
  ix.close();
  return rows;
}

export const walkerSingle: Scenario = {
  name: 'walker-single',
  description: 'single-thread Check latency per graph shape (ids and strings)',
  async run(opts) {
    const rows: Metric[] = [];
    for (const make of [
      () => direct(opts.quick ? 20_000 : 100_000),
      () => nestedGroups(),
      () => groupLattice(),
      () => folderTree(),
      () => setOps(),
      () => conditions(),
      () => contextual(),
    ]) {
      rows.push(...measureShape(make(), opts.quick));
    }
    return rows;
  },
};
