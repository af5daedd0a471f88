// What the Check deadline (docs/reference/decisions.md D8) costs and how closely it is met, on the engine's inline
// path (`WalkerChecker.checkInline`, what one API Check pays):
// - overhead: the same checks with and without a deadline, alternated in one run (ratio);
// - precision: a Check on a dense cyclic store (every group in every other group: factorial
//   paths) under a 50 ms deadline, from the call to the throttled_timeout_error answer; with the
//   deadline taken at the call (`checkInline`) and armed at the walker's first clock read
//   (`checkStarting`, the warm Check's path).
// Checks its answers first. Run: `npx tsx bench/auth/deadline.ts`.

import { loadavg } from 'node:os';
import { R_TRUE } from '../../src/abi.js';
import { createWalkerChecker, type CheckItem } from '../../src/engine/evaluation/walker/checker.js';
import { StoreIndex } from '../../src/index/store-index.js';
import { compile, direct, nestedGroups, type Shape } from '../graphs.js';
import { perOp } from '../harness.js';

const ROUNDS = 7;
const DEADLINE_MS = 50;

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;

function overhead(shape: Shape): Record<string, number | string> {
  const ix = StoreIndex.build(shape.tuples, 1);
  shape.tuples.length = 0;
  const snap = ix.snapshot();
  const checker = createWalkerChecker({ workers: 0, resolveDepth: 25 });
  const qs = shape.queries;
  const n = qs.length;
  const far = Date.now() + 3_600_000;
  for (const x of qs) {
    for (const o of [checker.checkInline(snap, shape.model, x), checker.checkInline(snap, shape.model, x, far)]) {
      if (!('allowed' in o) || o.allowed !== x.want) throw new Error(`${shape.name}: wrong answer`);
    }
  }
  const without: number[] = [];
  const withDeadline: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    without.push(
      perOp((i) => checker.checkInline(snap, shape.model, qs[i % n] as CheckItem), { batch: 16, samples: 500 }).p50,
    );
    withDeadline.push(
      perOp((i) => checker.checkInline(snap, shape.model, qs[i % n] as CheckItem, far), { batch: 16, samples: 500 })
        .p50,
    );
  }
  ix.close();
  const a = median(without);
  const b = median(withDeadline);
  return {
    shape: shape.name,
    no_deadline_p50_ns: Math.round(a),
    deadline_p50_ns: Math.round(b),
    ratio: +(b / a).toFixed(3),
  };
}

function precision(): Record<string, number | string> {
  const model = compile(
    'model\n  schema 1.1\ntype user\ntype group\n  relations\n    define member: [user, group#member]',
  );
  const tuples = [];
  for (let i = 0; i < 24; i++)
    for (let j = 0; j < 24; j++)
      if (i !== j) tuples.push({ object: `group:${i}`, relation: 'member', user: `group:${j}#member` });
  const ix = StoreIndex.build(tuples, 1);
  const snap = ix.snapshot();
  const checker = createWalkerChecker({ workers: 0, resolveDepth: 25 });
  const item: CheckItem = { object: 'group:0', relation: 'member', user: 'user:nobody', contextualTuples: [] };
  const late: number[] = [];
  const lateBudgeted: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const [run, into] of [
      [() => checker.checkInline(snap, model, item, Date.now() + DEADLINE_MS), late],
      [() => checker.checkStarting(snap, model, item, DEADLINE_MS), lateBudgeted],
    ] as const) {
      const start = performance.now();
      const o = run();
      const took = performance.now() - start;
      if (!('error' in o) || o.error.code !== 'throttled_timeout_error' || !o.error.message.startsWith('timeout'))
        throw new Error('expected the deadline error');
      into.push(took - DEADLINE_MS);
    }
  }
  // Without a deadline the same walk runs to the step budget: the deadline is what stopped it.
  const start = performance.now();
  const budget = checker.checkInline(snap, model, item);
  const budgetMs = performance.now() - start;
  if (!('error' in budget) || budget.error.message !== 'check exceeded its evaluation budget')
    throw new Error('expected the step budget');
  ix.close();
  return {
    deadline_ms: DEADLINE_MS,
    answer_after_deadline_ms_p50: +median(late).toFixed(2),
    answer_after_deadline_ms_max: +Math.max(...late).toFixed(2),
    // The warm Check's path: the deadline armed at the walker's first clock read.
    budgeted_answer_after_deadline_ms_p50: +median(lateBudgeted).toFixed(2),
    budgeted_answer_after_deadline_ms_max: +Math.max(...lateBudgeted).toFixed(2),
    same_walk_to_step_budget_ms: Math.round(budgetMs),
  };
}

function main(): void {
  if (R_TRUE !== 1) throw new Error('unexpected ABI');
  const out = {
    date: new Date().toISOString(),
    node: process.version,
    load_average_1_5_15: loadavg().map((l) => +l.toFixed(2)),
    overhead: [overhead(direct(20_000)), overhead(nestedGroups())],
    precision: precision(),
  };
  console.log(JSON.stringify(out, null, 2));
}

main();
