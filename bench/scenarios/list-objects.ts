// ListObjects over 1M candidate objects with the TypeScript evaluator reading the index through
// TupleView: `doc:i#viewer@group:all#member` for 1M docs, `group:all#member@user:anne`.

import { listObjects } from '../../src/engine/eval/index.js';
import type { TupleKey } from '../../src/domain/types.js';
import { StoreIndex } from '../../src/index/store-index.js';
import { compile } from '../graphs.js';
import { perOp } from '../harness.js';
import { verify, type Metric, type Scenario } from '../scenario.js';

export const listObjects1M: Scenario = {
  name: 'list-objects',
  description: 'ListObjects (TS evaluator over the index) with 1M reachable objects',
  async run(opts) {
    const n = opts.quick ? 100_000 : 1_000_000;
    const model = compile('model\n  schema 1.1\ntype user\ntype group\n  relations\n    define member: [user]\ntype doc\n  relations\n    define viewer: [user, group#member]\n');
    function* tuples(): Generator<TupleKey> {
      yield { object: 'group:all', relation: 'member', user: 'user:anne' };
      for (let i = 0; i < n; i++) yield { object: `doc:${i}`, relation: 'viewer', user: 'group:all#member' };
    }
    const ix = StoreIndex.build(tuples(), 1);
    const ctx = { model, view: ix.snapshot(), resolveDepth: 25, deadline: Date.now() + 600_000 };
    const query = { type: 'doc', relation: 'viewer', user: 'user:anne' };
    const first = listObjects(ctx, query, 1000);
    verify('list-objects 1000', first.length, 1000);
    verify('list-objects none', listObjects(ctx, { ...query, user: 'user:bob' }, 1000).length, 0);
    const p = perOp(() => listObjects({ ...ctx, deadline: Date.now() + 600_000 }, query, 1000), { batch: 1, samples: opts.quick ? 5 : 20, warmup: 2 });
    const t0 = performance.now();
    const all = listObjects({ ...ctx, deadline: Date.now() + 600_000 }, query, Infinity);
    const fullMs = performance.now() - t0;
    verify('list-objects all', all.length, n);
    ix.close();
    const rows: Metric[] = [
      { scenario: `list-objects-${n / 1e6}M`, metric: 'maxResults 1000 p50', value: +(p.p50 / 1e6).toFixed(2), unit: 'ms' },
      { scenario: `list-objects-${n / 1e6}M`, metric: 'maxResults 1000 p99', value: +(p.p99 / 1e6).toFixed(2), unit: 'ms' },
      { scenario: `list-objects-${n / 1e6}M`, metric: 'all objects', value: Math.round(fullMs), unit: 'ms' },
    ];
    return rows;
  },
};
