// Read-time validity (docs/reference/semantics.md §4.5) and strings the index has never seen.

import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/domain/types.js';
import { answer, index, model } from './helpers.js';

const HEAD = 'model\n  schema 1.1\n';

describe('stale tuples are ignored after a model change', () => {
  const before = model(
    `${HEAD}type user\ntype employee\ntype folder\n  relations\n    define viewer: [user]\ntype doc\n  relations\n    define parent: [folder]\n    define viewer: [user, user:*, employee] or viewer from parent\n    define editor: [user with c]\ncondition c(x: int) {\n  x > 0\n}\n`,
  );
  const after = model(
    `${HEAD}type user\ntype employee\ntype doc\n  relations\n    define parent: [doc]\n    define viewer: [user] or viewer from parent\n    define editor: [user with d]\ncondition d(x: int) {\n  x > 0\n}\n`,
  );
  const ix = index([
    'doc:1#viewer@employee:e',
    'doc:2#viewer@user:*',
    'doc:3#parent@folder:f',
    'folder:f#viewer@user:u',
    'doc:4#editor@user:c[c {"x":1}]',
  ]);
  const cases: [string, string, string][] = [
    ['doc:1#viewer@employee:e', 'true', 'false'], // prior_type_restrictions_ignored
    ['doc:2#viewer@user:w', 'true', 'false'], // ttu_remove_public_wildcard
    ['doc:3#viewer@user:u', 'true', 'false'], // parent type removed
    ['doc:4#editor@user:c', 'true', 'false'], // prior_conditions_ignored
  ];
  for (const [q, b, a] of cases) {
    it(`${q} => ${b} before, ${a} after`, () => {
      expect(answer(ix, before, q)).toBe(b);
      expect(answer(ix, after, q)).toBe(a);
    });
  }
});

describe('strings never seen by the index', () => {
  const m = model(
    `${HEAD}type user\ntype group\n  relations\n    define member: [user, user:*]\n    define admin: [user]\n    define lead: admin\n`,
  );
  const ix = index(['group:all#member@user:*', 'group:x#admin@user:a']);
  const cases = [
    'group:all#member@user:brand-new => true',
    'group:unknown#member@user:a => false',
    'group:unknown#member@group:unknown#member => true',
    'group:unknown#lead@group:unknown#admin => true',
    'group:x#lead@user:a => true',
    'group:x#nosuchrel@user:a => false',
  ];
  for (const c of cases) {
    const [q = '', want = ''] = c.split(' => ');
    it(c, () => expect(answer(ix, m, q)).toBe(want));
  }
  it('group:z#member@user:n => true with contextual group:z#member@user:*', () =>
    expect(answer(ix, m, 'group:z#member@user:n', { ctx: ['group:z#member@user:*'] })).toBe('true'));
});

describe('tuple-to-userset skips parents whose type lacks the relation', () => {
  const m = model(
    `${HEAD}type user\ntype team\n  relations\n    define member: [user]\ntype org\n  relations\n    define viewer: [user]\ntype doc\n  relations\n    define parent: [team, org]\n    define viewer: viewer from parent\n`,
  );
  const ix = index(['doc:1#parent@team:t', 'doc:1#parent@org:o', 'org:o#viewer@user:v', 'team:t#member@user:v']);
  it('doc:1#viewer@user:v => true', () => expect(answer(ix, m, 'doc:1#viewer@user:v')).toBe('true'));
  it('doc:1#viewer@user:w => false', () => expect(answer(ix, m, 'doc:1#viewer@user:w')).toBe('false'));
});

describe('conditions on contextual tuples', () => {
  const m = model(
    `${HEAD}type user\ntype doc\n  relations\n    define viewer: [user with c, user]\ncondition c(p: int) {\n  p > 0\n}\n`,
  );
  const ix = index([]);
  it('doc:1#viewer@user:x => true (contextual, stored context p=2)', () =>
    expect(answer(ix, m, 'doc:1#viewer@user:x', { ctx: ['doc:1#viewer@user:x[c {"p":2}]'] })).toBe('true'));
  it('doc:1#viewer@user:x => false (contextual, request context p=0)', () =>
    expect(answer(ix, m, 'doc:1#viewer@user:x', { ctx: ['doc:1#viewer@user:x[c]'], context: { p: 0 } })).toBe('false'));
  it('doc:1#viewer@user:x => validation_error (contextual, missing p)', () =>
    expect(answer(ix, m, 'doc:1#viewer@user:x', { ctx: ['doc:1#viewer@user:x[c]'] })).toBe('validation_error'));
  it('doc:1#viewer@user:x => true (unconditioned duplicate masks the error)', () =>
    expect(answer(ix, m, 'doc:1#viewer@user:x', { ctx: ['doc:1#viewer@user:x[c]', 'doc:1#viewer@user:x'] })).toBe(
      'true',
    ));
});

describe('a contextual copy of a stored key wins the exact lookup (§5.8)', () => {
  const m = model(
    `${HEAD}type user\ntype doc\n  relations\n    define viewer: [user with c]\ncondition c(p: int) {\n  p > 0\n}\n`,
  );
  const ix = index(['doc:1#viewer@user:x[c {"p":1}]']);
  it('doc:1#viewer@user:x => true (stored p=1)', () => expect(answer(ix, m, 'doc:1#viewer@user:x')).toBe('true'));
  it('doc:1#viewer@user:x => false (contextual p=0 hides stored p=1)', () =>
    expect(answer(ix, m, 'doc:1#viewer@user:x', { ctx: ['doc:1#viewer@user:x[c {"p":0}]'] })).toBe('false'));
});

describe('a condition is matched against restrictions of the same user type (§4.2 rule 7)', () => {
  // `user:anne with c` is valid: its form comes from `user`, its condition from `user:* with c`.
  const m = model(
    `${HEAD}type user\ntype team\n  relations\n    define member: [user]\ntype doc\n  relations\n    define viewer: [user, user:* with c, team#member]\n    define editor: [team#member, user with c]\ncondition c(x: int) {\n  x > 0\n}\n`,
  );
  const ix = index([
    'doc:1#viewer@user:anne[c]',
    'doc:2#viewer@team:t#member[c]',
    'team:t#member@user:bob',
    'doc:3#editor@team:t#member[c]',
  ]);
  const cases: [string, JsonObject, string][] = [
    ['doc:1#viewer@user:anne', { x: 1 }, 'true'],
    ['doc:1#viewer@user:anne', { x: 0 }, 'false'],
    ['doc:1#viewer@user:anne', {}, 'validation_error'], // the condition is evaluated: a missing parameter
    ['doc:2#viewer@user:bob', { x: 1 }, 'false'], // no `team` restriction names c
    ['doc:3#editor@user:bob', { x: 1 }, 'false'], // c is named for `user`, not for `team`
  ];
  for (const [q, context, want] of cases)
    it(`${q} with ${JSON.stringify(context)} => ${want}`, () => expect(answer(ix, m, q, { context })).toBe(want));
});

describe('§5.2 step 4: no type-graph path from the subject, no evaluation (and no error) there', () => {
  const m = model(
    `${HEAD}type user\ntype bot\ntype doc\n  relations\n    define editor: [bot with c]\n    define viewer: [user] or editor\n    define blocked: [bot with c]\n    define reader: [user] but not blocked\ncondition c(x: int) {\n  x > 0\n}\n`,
  );
  const ix = index([
    'doc:1#editor@bot:b[c]',
    'doc:1#viewer@user:anne',
    'doc:1#blocked@bot:b[c]',
    'doc:1#reader@user:anne',
  ]);
  const cases: [string, string][] = [
    ['doc:1#viewer@user:zoe', 'false'], // doc#editor cannot hold a user: its condition error never surfaces
    ['doc:1#viewer@bot:b', 'validation_error'], // a bot can reach doc#editor: the missing parameter is an error
    ['doc:1#reader@user:anne', 'true'], // the subtract cannot hold a user: pruned to FALSE, not an error
  ];
  for (const [q, want] of cases) it(`${q} => ${want}`, () => expect(answer(ix, m, q)).toBe(want));
});
