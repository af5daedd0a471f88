// The walker host: one mapping from walker statuses to Check outcomes, a deadline owned by each
// host (no process-wide state) or armed at its first clock read (a budget), and a branch deeper
// than the scratch's path stack.

import { describe, expect, it } from 'vitest';
import {
  R_CYCLE,
  R_ERR_BUDGET,
  R_ERR_COND,
  R_ERR_DEPTH,
  R_ERR_INTERNAL,
  R_ERR_NEEDHOST,
  R_ERR_OVERFLOW,
  R_FALSE,
  R_TRUE,
} from '../../src/abi.js';
import { outcomeOf, WalkerHost } from '../../src/engine/evaluation/walker/host.js';
import { fail } from '../../src/errors.js';
import { PATH_CAP } from '../../src/engine/evaluation/walker/request.js';
import { answer, index, model, tk } from './helpers.js';

const codeOf = (o: ReturnType<typeof outcomeOf>): string =>
  typeof o === 'string' ? o : 'allowed' in o ? String(o.allowed) : `${o.error.code}: ${o.error.message}`;

describe('outcomeOf: every walker status', () => {
  const cases: [number, string][] = [
    [R_FALSE, 'false'],
    [R_TRUE, 'true'],
    [R_CYCLE, 'false'],
    [R_ERR_COND, 'validation_error: x is missing'],
    [R_ERR_DEPTH, `authorization_model_resolution_too_complex: ${fail.tooComplex().message}`],
    [R_ERR_BUDGET, 'throttled_timeout_error: check exceeded its evaluation budget'],
    [R_ERR_NEEDHOST, 'host'],
    [R_ERR_OVERFLOW, 'resource_exhausted: check exceeded the walker scratch space'],
    [R_ERR_INTERNAL, 'internal_error: Internal Server Error'],
  ];
  for (const [status, want] of cases)
    it(`${status} → ${want}`, () => expect(codeOf(outcomeOf(status, 'x is missing'))).toBe(want));
});

// A clique of groups: a Check for a user in none of them walks a factorial number of paths.
const cliqueModel = model(
  'model\n  schema 1.1\ntype user\ntype group\n  relations\n    define member: [user, group#member]\n',
);
const clique: string[] = ['group:0#member@user:u'];
for (let i = 0; i < 10; i++)
  for (let j = 0; j < 10; j++) if (i !== j) clique.push(`group:${i}#member@group:${j}#member`);
const cliqueIndex = index(clique);
const item = (q: string) => ({ ...tk(q), contextualTuples: [] });

describe('WalkerHost.withDeadline', () => {
  it("a passed deadline stops that host's walk (R_ERR_BUDGET); another host and the same host afterwards are unaffected", () => {
    const a = new WalkerHost();
    const b = new WalkerHost();
    const snap = cliqueIndex.snapshot();
    const slow = item('group:1#member@user:nobody');
    const fast = item('group:1#member@user:u');
    const run = (h: WalkerHost) => (q: typeof slow) => h.run(snap, cliqueModel, q, 25, 0);
    expect(a.withDeadline(Date.now() - 1, run(a), slow)).toBe(R_ERR_BUDGET);
    expect(b.run(snap, cliqueModel, fast, 25, 0)).toBe(R_TRUE);
    expect(a.run(snap, cliqueModel, fast, 25, 0)).toBe(R_TRUE); // the outer (no) deadline is back
    expect(a.withDeadline(Date.now() + 60_000, run(a), fast)).toBe(R_TRUE);
  });
});

describe('WalkerHost.withBudget', () => {
  const snap = cliqueIndex.snapshot();
  const slow = item('group:1#member@user:nobody');
  const fast = item('group:1#member@user:u');

  it('a long walk arms the deadline at its first clock read and gives up past it (R_ERR_BUDGET)', () => {
    const h = new WalkerHost();
    let armed = Infinity;
    const status = h.withBudget(
      0,
      (q: typeof slow) => {
        const st = h.run(snap, cliqueModel, q, 25, 0);
        armed = h.deadlineNow;
        return st;
      },
      slow,
    );
    expect(status).toBe(R_ERR_BUDGET);
    expect(armed).toBeLessThanOrEqual(Date.now());
    expect(h.deadlineNow).toBe(Infinity); // nothing left armed for the next call
    expect(h.run(snap, cliqueModel, fast, 25, 0)).toBe(R_TRUE);
  });

  it('a short walk answers; inside an outer deadline the budget counts from the call', () => {
    const h = new WalkerHost();
    expect(h.withBudget(60_000, (q: typeof fast) => h.run(snap, cliqueModel, q, 25, 0), fast)).toBe(R_TRUE);
    const t0 = Date.now();
    const inner = h.withDeadline(t0 + 120_000, () => h.withBudget(60_000, () => h.deadlineNow, undefined), undefined);
    expect(inner).toBeGreaterThanOrEqual(t0 + 60_000);
    expect(inner).toBeLessThan(t0 + 120_000);
    expect(h.deadlineNow).toBe(Infinity);
  });
});

describe('a walk longer than the scratch path stack', () => {
  // Each group has R relations chained by computed usersets (no hop), the last one pointing at the
  // next group: one branch holds R entries per group, more than PATH_CAP before the depth limit.
  const R = 220;
  const HOPS = Math.ceil(PATH_CAP / R) + 1;
  let dsl = 'model\n  schema 1.1\ntype user\ntype group\n  relations\n';
  for (let i = 0; i < R - 1; i++) dsl += `    define r${i}: r${i + 1}\n`;
  dsl += `    define r${R - 1}: [user, group#r0]\n`;
  const m = model(dsl);
  const tuples = Array.from({ length: HOPS }, (_, i) => `group:${i}#r${R - 1}@group:${i + 1}#r0`);
  tuples.push(`group:${HOPS}#r${R - 1}@user:end`);
  const ix = index(tuples);

  it(`overflows the walker (${HOPS} hops × ${R} relations > ${PATH_CAP})`, () => {
    expect(new WalkerHost().run(ix.snapshot(), m, item('group:0#r0@user:end'), 25, 0)).toBe(R_ERR_OVERFLOW);
  });
  it('answers 500 resource_exhausted on every path, not a wrong answer', () => {
    expect(answer(ix, m, 'group:0#r0@user:end')).toBe('resource_exhausted');
    expect(answer(ix, m, 'group:0#r0@user:other')).toBe('resource_exhausted');
  });
  it('a branch that fits the path stack still answers', () => {
    expect(answer(ix, m, `group:${HOPS - 2}#r0@user:end`)).toBe('true');
  });
});
