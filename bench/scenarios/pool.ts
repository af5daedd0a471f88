// Pool throughput: checks/s for batches of 1k / 10k / 100k on 2 workers, from interned query
// records (CheckPool.runIds) and from request strings (Checker.check, interning on this thread).

import { QUERY_WORDS, R_TRUE } from '../../src/abi.js';
import { CheckPool } from '../../src/engine/pool/pool.js';
import { createChecker, type CheckItem } from '../../src/engine/walker/checker.js';
import { programFor } from '../../src/engine/walker/program.js';
import { walkerModule } from '../../src/engine/walker/wasm.js';
import { StoreIndex } from '../../src/index/store-index.js';
import { direct } from '../graphs.js';
import { verify, type Metric, type Scenario } from '../scenario.js';
import { IdWalker } from '../walker-ids.js';

const WORKERS = 2;

async function rate(fn: () => Promise<void>, batch: number, quick: boolean): Promise<number> {
  await fn(); // warm-up
  const budget = quick ? 300 : 1500;
  let n = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < budget) {
    await fn();
    n += batch;
  }
  return n / ((performance.now() - t0) / 1000);
}

export const poolThroughput: Scenario = {
  name: 'pool',
  description: `checks/s through ${WORKERS} Piscina workers by batch size (direct graph, 1M tuples)`,
  async run(opts) {
    const shape = direct(opts.quick ? 20_000 : 100_000);
    const ix = StoreIndex.build(shape.tuples, 1);
    shape.tuples.length = 0; // a server does not keep 1M tuple objects on its heap
    const snap = ix.snapshot();
    const prog = programFor(shape.model, snap.dict);
    const pool = new CheckPool(WORKERS, walkerModule());
    const checker = createChecker({ workers: WORKERS, resolveDepth: 25, poolThreshold: 1000 });
    const ids = new IdWalker(snap, shape.model).intern(shape.queries);
    const rows: Metric[] = [];
    for (const batch of [1_000, 10_000, 100_000]) {
      const q = new Uint32Array(batch * QUERY_WORDS);
      const items: CheckItem[] = [];
      const want: boolean[] = [];
      for (let i = 0; i < batch; i++) {
        const k = i % shape.queries.length;
        q.set(ids.subarray(k * QUERY_WORDS, (k + 1) * QUERY_WORDS), i * QUERY_WORDS);
        const s = shape.queries[k]!;
        items.push({ object: s.object, relation: s.relation, user: s.user, contextualTuples: [] });
        want.push(s.want);
      }
      const st = await pool.runIds(snap, prog, q, 25);
      verify(`pool ids ${batch}`, [...st].map((x) => x === R_TRUE), want);
      const out = await checker.check(snap, shape.model, items);
      verify(`pool strings ${batch}`, out.map((o) => 'allowed' in o && o.allowed), want);
      const r1 = await rate(async () => void (await pool.runIds(snap, prog, q, 25)), batch, opts.quick);
      const r2 = await rate(async () => void (await checker.check(snap, shape.model, items)), batch, opts.quick);
      rows.push({ scenario: 'pool', metric: `ids batch ${batch}`, value: Math.round(r1), unit: 'checks/s' });
      rows.push({ scenario: 'pool', metric: `strings batch ${batch}`, value: Math.round(r2), unit: 'checks/s' });
    }
    await pool.close();
    await checker.close();
    ix.close();
    return rows;
  },
};
