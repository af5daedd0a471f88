// The per-call memo keeps diamond-shaped data polynomial, and memoised results respect the
// depth limit (a result reused deeper in the walk must still fit under the limit, and a result
// whose subtree the limit cut is not reused at all).

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { answer, index, model } from './helpers.js';

const m = model(
  'model\n  schema 1.1\ntype user\ntype group\n  relations\n    define member: [user, group#member]\ntype doc\n  relations\n    define viewer: [user, group#member]\n',
);

function lattice(levels: number, wide: number): string[] {
  const t: string[] = [];
  for (let i = 0; i < wide; i++) t.push(`doc:1#viewer@group:0_${i}#member`);
  for (let l = 0; l < levels - 1; l++)
    for (let i = 0; i < wide; i++)
      for (let j = 0; j < wide; j++) t.push(`group:${l}_${i}#member@group:${l + 1}_${j}#member`);
  t.push(`group:${levels - 1}_${wide - 1}#member@user:deep`);
  return t;
}

describe('memo', () => {
  const ix = index(lattice(24, 4));
  it('doc:1#viewer@user:deep => true (4^23 paths)', () => expect(answer(ix, m, 'doc:1#viewer@user:deep')).toBe('true'));
  // Its time is the `blowup` benchmark (bench/scenarios/blowup.ts); without the memo this walk
  // would hit the test timeout.
  it('doc:1#viewer@user:nobody => false', () => expect(answer(ix, m, 'doc:1#viewer@user:nobody')).toBe('false'));
  // Depth errors are not memoised (they depend on the ancestors), so a lattice whose every path
  // meets the limit is exponential: the step budget stops it (docs/reference/decisions.md D8 complexity budget → 422).
  it('doc:1#viewer@user:deep => throttled_timeout_error with resolveDepth 24 (step budget)', () =>
    expect(answer(ix, m, 'doc:1#viewer@user:deep', { depth: 24 })).toBe('throttled_timeout_error'));

  // group:a is reached first at depth 2 (via group:x) and later at depth 3 (via group:y, y2):
  // the memoised FALSE from depth 2 needed 2 more hops, which no longer fit at depth 3 when the
  // limit is 5 — the second visit must re-walk and meet the limit.
  const ix2 = index([
    'doc:2#viewer@group:x#member',
    'group:x#member@group:a#member',
    'group:a#member@group:b#member',
    'group:b#member@group:c#member',
    'doc:2#viewer@group:y#member',
    'group:y#member@group:y2#member',
    'group:y2#member@group:a#member',
    'group:c#member@user:z',
  ]);
  it('doc:2#viewer@user:z => true', () => expect(answer(ix2, m, 'doc:2#viewer@user:z')).toBe('true'));
  it('doc:2#viewer@user:none => authorization_model_resolution_too_complex with resolveDepth 5', () =>
    expect(answer(ix2, m, 'doc:2#viewer@user:none', { depth: 5 })).toBe('authorization_model_resolution_too_complex'));
  it('doc:2#viewer@user:none => false with resolveDepth 6', () =>
    expect(answer(ix2, m, 'doc:2#viewer@user:none', { depth: 6 })).toBe('false'));

  // group:1#a is first reached at depth 2 (via s1), where the limit of 3 cuts `m` inside its
  // subtract `y = m and q`: y is FALSE (q is FALSE), so a is TRUE with the cut masked. Reached
  // again at depth 1 (via s2), `m` meets the cycle at group:1#a instead, y is FALSE with the
  // cycle flag and the subtract makes a FALSE: the first answer must not be reused there.
  const cut = model(readFileSync(new URL('../fixtures/models/depth-cut-memo.fga', import.meta.url), 'utf8'));
  const ix3 = index([
    'group:1#a@user:u',
    'group:1#m@group:1#a',
    'group:2#p@group:1#a',
    'group:0#w@group:2#p',
    'group:0#s2@group:1#a',
  ]);
  it('group:0#r@user:u => false with resolveDepth 3 (a cut subtree is not reused higher up)', () =>
    expect(answer(ix3, cut, 'group:0#r@user:u', { depth: 3 })).toBe('false'));
  it('group:0#r@user:u => true with resolveDepth 2, false with 25', () => {
    expect(answer(ix3, cut, 'group:0#r@user:u', { depth: 2 })).toBe('true');
    expect(answer(ix3, cut, 'group:0#r@user:u', { depth: 25 })).toBe('false');
  });
});
