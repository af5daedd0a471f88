// Guards against exponential evaluation: layered group graphs where every group of one layer is
// a member of both groups of the next layer (2^layers paths, but only 2·layers distinct nodes).

import { describe, expect, it } from 'vitest';
import { compileDsl } from './model.js';
import { check, objects, users } from './table.js';

const model = compileDsl('model\n  schema 1.1\ntype user\ntype group\n  relations\n    define member: [user, group#member]\n    define blocked: [user]\n    define allowed: member but not blocked\ntype doc\n  relations\n    define viewer: [group#member]');

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
    const start = Date.now();
    expect(check(env, 'doc:1#viewer@user:u')).toBe(true);
    expect(check(env, 'doc:1#viewer@user:v')).toBe(false);
    expect(Date.now() - start).toBeLessThan(2000);
  });
  it('ListObjects and ListUsers', () => {
    const start = Date.now();
    expect(objects(env, 'doc#viewer@user:u')).toEqual(['doc:1']);
    expect(users(env, 'doc:1#viewer', 'user')).toEqual(['user:u']);
    expect((users(env, 'doc:1#viewer', 'group#member') as string[]).length).toBe(43);
    expect(Date.now() - start).toBeLessThan(2000);
  });
});
