// Guards against exponential evaluation: layered group graphs where every group of one layer is
// a member of both groups of the next layer (2^layers paths, but only 2·layers distinct nodes).
// The times are the `blowup` benchmark (bench/scenarios/blowup.ts); an exponential regression
// would hit the test timeout here.

import { describe, expect, it } from 'vitest';
import { compileDsl } from './model.js';
import { evalCheck } from '../oracle/reference.js';
import { listUsers } from '../../src/engine/evaluation/list/list-users.js';
import { attempt, check, ctxOf, objects, users } from './table.js';

const model = compileDsl(
  'model\n  schema 1.1\ntype user\ntype group\n  relations\n    define member: [user, group#member]\n    define blocked: [user]\n    define allowed: member but not blocked\ntype doc\n  relations\n    define viewer: [group#member]',
);

function diamond(layers: number): string[] {
  const t: string[] = ['group:0a#member@user:u'];
  for (let i = 1; i < layers; i++) {
    for (const a of ['a', 'b']) for (const b of ['a', 'b']) t.push(`group:${i}${a}#member@group:${i - 1}${b}#member`);
  }
  t.push(`doc:1#viewer@group:${layers - 1}a#member`);
  return t;
}

describe('evaluation stays polynomial on diamond-shaped data', () => {
  const env = { model, tuples: diamond(22) };
  it('doc:1#viewer@user:u => true; @user:v => false (all paths fail)', () => {
    expect(check(env, 'doc:1#viewer@user:u')).toBe(true);
    expect(check(env, 'doc:1#viewer@user:v')).toBe(false);
  });
  it('ListObjects and ListUsers', () => {
    expect(objects(env, 'doc#viewer@user:u')).toEqual(['doc:1']);
    expect(users(env, 'doc:1#viewer', 'user')).toEqual(['user:u']);
    expect((users(env, 'doc:1#viewer', 'group#member') as string[]).length).toBe(43);
  });
});

describe('dense cyclic data: path-exact evaluation is bounded by the deadline', () => {
  // Every group is a member of every other group: the number of simple paths is factorial.
  const clique = (n: number): string[] => {
    const t: string[] = [];
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) if (i !== j) t.push(`group:${i}#member@group:${j}#member`);
    return t;
  };
  it('Check fails with deadline_exceeded (4004); ListUsers returns partial results without error', () => {
    const ctx = { ...ctxOf({ model, tuples: clique(12) }), deadline: Date.now() + 150 };
    expect(attempt(() => evalCheck(ctx, 'group:0', 'member', 'user:nobody'))).toBe(4004);
    const listed = listUsers(
      { ...ctx, deadline: Date.now() + 150 },
      { object: 'group:0', relation: 'member', filter: { type: 'user' } },
      1000,
    );
    expect(listed).toEqual([]);
  });
});
