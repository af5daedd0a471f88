// Polynomial guards, timed: the shapes that would explode without the evaluators' memos and the
// model validator's cycle analysis. Each answer is verified; the time is a figure to compare
// across runs, not a pass/fail bound (the tests keep the answers, this keeps the clock).

import { evalCheck, listObjects, MemoryTupleView } from '../../test/oracle/reference.js';
import { listUsers } from '../../src/engine/evaluation/list/list-users.js';
import { checkStatus } from '../../src/engine/evaluation/walker/checker.js';
import type { TupleKey } from '../../src/domain/types.js';
import { AppError } from '../../src/errors.js';
import { StoreIndex } from '../../src/index/store-index.js';
import { dslToModel } from '../../src/model/dsl.js';
import { validateModel } from '../../src/model/validate.js';
import { compile } from '../graphs.js';
import { median } from '../harness.js';
import { verify, type Metric, type Scenario } from '../scenario.js';

const HEAD = 'model\n  schema 1.1\n';

const key = (s: string): TupleKey => {
  const [left = '', user = ''] = s.split('@');
  const hash = left.lastIndexOf('#');
  return { object: left.slice(0, hash), relation: left.slice(hash + 1), user };
};

/** 2^layers paths over 2·layers groups (test/reference/scale.test.ts). */
function diamond(layers: number): TupleKey[] {
  const t = ['group:0a#member@user:u'];
  for (let i = 1; i < layers; i++)
    for (const a of ['a', 'b']) for (const b of ['a', 'b']) t.push(`group:${i}${a}#member@group:${i - 1}${b}#member`);
  t.push(`doc:1#viewer@group:${layers - 1}a#member`);
  return t.map(key);
}

/** 4^(levels-1) paths over 4·levels groups (test/walker/memo.test.ts). */
function lattice(levels: number, wide: number): TupleKey[] {
  const t: string[] = [];
  for (let i = 0; i < wide; i++) t.push(`doc:1#viewer@group:0_${i}#member`);
  for (let l = 0; l < levels - 1; l++)
    for (let i = 0; i < wide; i++)
      for (let j = 0; j < wide; j++) t.push(`group:${l}_${i}#member@group:${l + 1}_${j}#member`);
  t.push(`group:${levels - 1}_${wide - 1}#member@user:deep`);
  return t.map(key);
}

/** Median wall time of `runs` calls of `fn` (each call verified by the caller first). */
function timeIt(runs: number, fn: () => void): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  return Math.round(median(times) * 1000) / 1000;
}

export const blowup: Scenario = {
  name: 'blowup',
  description:
    'polynomial guards: model validation of a dense relation graph, diamond and lattice data (reference and walker)',
  async run(opts) {
    const runs = opts.quick ? 3 : 15;
    const rows: Metric[] = [];
    const add = (metric: string, ms: number): void =>
      void rows.push({ scenario: 'blowup', metric, value: ms, unit: 'ms' });

    const rels = Array.from(
      { length: 60 },
      (_, i) => `    define r${i}: [doc#r${(i + 1) % 60}] or r${(i + 1) % 60} or r${(i + 2) % 60}`,
    ).join('\n');
    const dense = dslToModel(`${HEAD}type user\ntype doc\n  relations\n${rels}\n`);
    const rejected = (): string => {
      try {
        validateModel(dense);
        return 'accepted';
      } catch (e) {
        return e instanceof AppError ? e.message : String(e);
      }
    };
    verify('dense model rejected', rejected().includes('potential loop'), true);
    add('validate 60 relations, no entrypoint', timeIt(runs, rejected));

    const groups = compile(
      `${HEAD}type user\ntype group\n  relations\n    define member: [user, group#member]\ntype doc\n  relations\n    define viewer: [user, group#member]\n`,
    );
    const view = new MemoryTupleView(diamond(22));
    const ctx = { model: groups, view, context: undefined, resolveDepth: 25, deadline: Infinity };
    verify(
      'diamond check',
      [evalCheck(ctx, 'doc:1', 'viewer', 'user:u'), evalCheck(ctx, 'doc:1', 'viewer', 'user:v')],
      [true, false],
    );
    add(
      'reference: diamond(22) Check true + false',
      timeIt(runs, () => [evalCheck(ctx, 'doc:1', 'viewer', 'user:u'), evalCheck(ctx, 'doc:1', 'viewer', 'user:v')]),
    );
    verify(
      'diamond lists',
      [
        listObjects(ctx, { type: 'doc', relation: 'viewer', user: 'user:u' }, 1000),
        listUsers(ctx, { object: 'doc:1', relation: 'viewer', filter: { type: 'user' } }, 1000).length,
      ],
      [['doc:1'], 1],
    );
    add(
      'reference: diamond(22) ListObjects + ListUsers',
      timeIt(runs, () => {
        listObjects(ctx, { type: 'doc', relation: 'viewer', user: 'user:u' }, 1000);
        listUsers(ctx, { object: 'doc:1', relation: 'viewer', filter: { type: 'user' } }, 1000);
      }),
    );

    const ix = StoreIndex.build(lattice(24, 4), 1);
    const snap = ix.snapshot();
    const walk = (user: string) => {
      const o = checkStatus(snap, groups, { object: 'doc:1', relation: 'viewer', user, contextualTuples: [] });
      return 'allowed' in o ? o.allowed : o.error.code;
    };
    verify('lattice answers', [walk('user:deep'), walk('user:nobody')], [true, false]);
    add(
      'walker: lattice(24×4) Check false (4^23 paths)',
      timeIt(runs, () => walk('user:nobody')),
    );
    ix.close();
    return rows;
  },
};
