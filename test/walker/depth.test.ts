// The resolution depth the walker reports per inline Check (context word C.DEPTH → checkDepths, the
// `latch_check_resolution_depth` histogram): the deepest hop the evaluation reached.
import { describe, expect, it } from 'vitest';
import { checkDepths } from '../../src/engine/stats.js';
import { answer, index, model } from './helpers.js';

const m = model(`model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type doc
  relations
    define viewer: [user, group#member]
`);

// doc:1 ← group:g0 ← group:g1 ← group:g2 ∋ anne; bob views doc:1 directly.
const ix = index([
  'doc:1#viewer@group:g0#member',
  'group:g0#member@group:g1#member',
  'group:g1#member@group:g2#member',
  'group:g2#member@user:anne',
  'doc:1#viewer@user:bob',
]);

/** [query, answer, resolution depth] */
const cases: [string, string, number][] = [
  ['doc:1#viewer@user:bob', 'true', 0],
  ['doc:1#viewer@user:anne', 'true', 3],
  ['doc:1#viewer@user:zed', 'false', 3],
];

describe('resolution depth', () => {
  it.each(cases)('%s => %s at depth %i', (q, want, depth) => {
    const before = checkDepths.count;
    const bucket = checkDepths.bounds.indexOf(depth);
    const inBucket = checkDepths.counts[bucket] ?? 0;
    expect(answer(ix, m, q)).toBe(want);
    expect(checkDepths.count).toBe(before + 1);
    expect(checkDepths.counts[bucket]).toBe(inBucket + 1);
  });
});
