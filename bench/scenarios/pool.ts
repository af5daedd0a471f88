// Pool throughput: checks/s for batches of 1k / 10k / 100k on 2 workers, from interned query
// records (CheckPool.runIds) and from request strings (WalkerChecker.check, interning on this thread).

import { QUERY_WORDS, R_TRUE } from '../../src/abi.js';
import { CheckPool } from '../../src/engine/evaluation/pool/pool.js';
import { createWalkerChecker, type CheckItem } from '../../src/engine/evaluation/walker/checker.js';
import { programFor } from '../../src/engine/evaluation/walker/program.js';
import { walkerModule } from '../../src/engine/evaluation/walker/wasm.js';
import { StoreIndex } from '../../src/index/store-index.js';
import { direct } from '../graphs.js';
import { verify, type Metric, type Scenario } from '../scenario.js';
import { IdWalker } from '../walker-ids.js';
import { median } from '../harness.js';

const WORKERS = 2;
/** Rounds per batch size (each about a second); the rows are their medians. */
const ROUNDS = 5;

async function rate(fn: () => Promise<void>, batch: number, quick: boolean): Promise<number> {
  await fn(); // warm-up
  const budget = quick ? 200 : 1000;
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
    const checker = createWalkerChecker({ workers: WORKERS, resolveDepth: 25, poolThreshold: 1000 });
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
      verify(
        `pool ids ${batch}`,
        [...st].map((x) => x === R_TRUE),
        want,
      );
      const out = await checker.check(snap, shape.model, items);
      verify(
        `pool strings ${batch}`,
        out.map((o) => 'allowed' in o && o.allowed),
        want,
      );
      // Interleaved rounds (ids, strings, ids, …), medians: the rate of two workers on this
      // shared host moves by ±30 % from one second to the next, steal or not.
      const ids1: number[] = [];
      const str1: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        ids1.push(await rate(async () => void (await pool.runIds(snap, prog, q, 25)), batch, opts.quick));
        str1.push(await rate(async () => void (await checker.check(snap, shape.model, items)), batch, opts.quick));
      }
      ids1.sort((a, b) => a - b);
      rows.push({ scenario: 'pool', metric: `ids batch ${batch}`, value: Math.round(median(ids1)), unit: 'checks/s' });
      rows.push({
        scenario: 'pool',
        metric: `strings batch ${batch}`,
        value: Math.round(median(str1)),
        unit: 'checks/s',
      });
      rows.push({
        scenario: 'pool',
        metric: `ids batch ${batch} slowest / fastest round`,
        value: Number(((ids1[0] ?? 0) / (ids1[ids1.length - 1] ?? 1)).toFixed(2)),
        unit: 'ratio',
      });
    }
    await pool.close();
    await checker.close();
    ix.close();
    return rows;
  },
};
