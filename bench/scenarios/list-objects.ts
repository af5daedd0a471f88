// ListObjects over 1M candidate objects: `doc:i#viewer@group:all#member` for 1M docs,
// `group:all#member@user:anne`. Four evaluators in one run so their ratios are comparable:
// the service's path (the indexed walk; this model is union-only, so the walk alone is exact and
// no candidate is re-checked), the same walk confirming every candidate with the wasm walker
// (what a model with `and` / `but not` pays), the same walk confirming with the reference
// ReferenceChecker, and the reference evaluator over the TupleView (the previous implementation: collect
// every candidate, then confirm each by strings).

import { listObjects } from '../../test/oracle/reference.js';
import { openObjectWalk } from '../../src/engine/evaluation/list/open.js';
import type { TupleKey } from '../../src/domain/types.js';
import { StoreIndex } from '../../src/index/store-index.js';
import { compile } from '../graphs.js';
import { perOp } from '../harness.js';
import { verify, type Metric, type Scenario } from '../scenario.js';

function take(walk: Generator<string, void>, max: number): string[] {
  const out: string[] = [];
  if (max <= 0) return out;
  for (const o of walk) {
    out.push(o);
    if (out.length >= max) break;
  }
  return out;
}

export const listObjects1M: Scenario = {
  name: 'list-objects',
  description:
    'ListObjects with 1M reachable objects: service path, walker / reference confirmation of every candidate, the TupleView evaluator',
  async run(opts) {
    const n = opts.quick ? 100_000 : 1_000_000;
    const model = compile(
      'model\n  schema 1.1\ntype user\ntype group\n  relations\n    define member: [user]\ntype doc\n  relations\n    define viewer: [user, group#member]\n',
    );
    function* tuples(): Generator<TupleKey> {
      yield { object: 'group:all', relation: 'member', user: 'user:anne' };
      for (let i = 0; i < n; i++) yield { object: `doc:${i}`, relation: 'viewer', user: 'group:all#member' };
    }
    const ix = StoreIndex.build(tuples(), 1);
    const snapshot = ix.snapshot();
    const query = { type: 'doc', relation: 'viewer', user: 'user:anne' };
    const deadline = (): number => Date.now() + 600_000;
    type Mode = 'service' | 'walker' | 'reference';
    const indexed = (mode: Mode, max: number, q = query): string[] => {
      const opts = mode === 'service' ? {} : { confirm: mode, confirmAll: true };
      return take(
        openObjectWalk({ snapshot, model, contextual: [], resolveDepth: 25, deadline: deadline(), ...opts }, q),
        max,
      );
    };
    const reference = (max: number): string[] =>
      listObjects({ model, view: snapshot, resolveDepth: 25, deadline: deadline() }, query, max);

    for (const c of ['service', 'walker', 'reference'] as const) {
      verify(`list-objects ${c} 1000`, new Set(indexed(c, 1000)).size, 1000);
      verify(`list-objects ${c} none`, indexed(c, 1000, { ...query, user: 'user:bob' }).length, 0);
    }
    // The indexed paths are timed before the TupleView evaluator runs at all: its millions of
    // short-lived tuple objects would put their garbage collection into the others' p99.
    const samples = opts.quick ? 5 : 60;
    const ps = perOp(() => indexed('service', 1000), { batch: 1, samples, warmup: 5 });
    const pw = perOp(() => indexed('walker', 1000), { batch: 1, samples, warmup: 5 });
    const pr = perOp(() => indexed('reference', 1000), { batch: 1, samples, warmup: 5 });
    verify('list-objects tupleview 1000', reference(1000).length, 1000);
    const pv = perOp(() => reference(1000), { batch: 1, samples: opts.quick ? 3 : 5, warmup: 1 });
    const full = (fn: () => string[]): number => {
      const t0 = performance.now();
      verify('list-objects all', fn().length, n);
      return performance.now() - t0;
    };
    full(() => indexed('service', Infinity)); // warm-up of the all-objects path
    const allService = full(() => indexed('service', Infinity));
    const allWalker = full(() => indexed('walker', Infinity));
    const allRef = full(() => indexed('reference', Infinity));
    const allView = full(() => reference(Infinity));
    ix.close();
    const s = `list-objects-${n / 1e6}M`;
    const ms = (ns: number): number => +(ns / 1e6).toFixed(3);
    const rows: Metric[] = [
      { scenario: s, metric: 'maxResults 1000 p50 (service)', value: ms(ps.p50), unit: 'ms' },
      { scenario: s, metric: 'maxResults 1000 p99 (service)', value: ms(ps.p99), unit: 'ms' },
      { scenario: s, metric: 'maxResults 1000 p50 (walker confirm)', value: ms(pw.p50), unit: 'ms' },
      { scenario: s, metric: 'maxResults 1000 p99 (walker confirm)', value: ms(pw.p99), unit: 'ms' },
      { scenario: s, metric: 'maxResults 1000 p50 (reference confirm)', value: ms(pr.p50), unit: 'ms' },
      { scenario: s, metric: 'maxResults 1000 p50 (TupleView evaluator)', value: ms(pv.p50), unit: 'ms' },
      { scenario: s, metric: 'all objects (service)', value: Math.round(allService), unit: 'ms' },
      { scenario: s, metric: 'all objects (walker confirm)', value: Math.round(allWalker), unit: 'ms' },
      { scenario: s, metric: 'all objects (reference confirm)', value: Math.round(allRef), unit: 'ms' },
      { scenario: s, metric: 'all objects (TupleView evaluator)', value: Math.round(allView), unit: 'ms' },
      {
        scenario: s,
        metric: 'speed-up maxResults 1000 (TupleView / service)',
        value: +(pv.p50 / ps.p50).toFixed(1),
        unit: 'x',
      },
    ];
    return rows;
  },
};
