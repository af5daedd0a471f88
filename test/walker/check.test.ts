// Table-driven Check semantics (docs/reference/semantics.md §5) through the wasm walker: every rewrite form,
// wildcards, usersets as subjects, the self rule, cycles, depth, conditions, contextual tuples.

import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/domain/types.js';
import { answer, index, model } from './helpers.js';

interface Group {
  name: string;
  dsl: string;
  tuples: string[];
  /** `doc:1#viewer@user:anne => true` (or an error code); optional per-case context JSON after `|`. */
  cases: string[];
  ctxTuples?: boolean;
}

const HEAD = 'model\n  schema 1.1\n';

const groups: Group[] = [
  {
    name: 'direct with type restrictions',
    dsl: `${HEAD}type user\ntype employee\ntype doc\n  relations\n    define viewer: [user]\n`,
    tuples: ['doc:1#viewer@user:anne', 'doc:1#viewer@employee:bob'],
    cases: [
      'doc:1#viewer@user:anne => true',
      'doc:1#viewer@user:bob => false',
      'doc:1#viewer@employee:bob => false',
      'doc:2#viewer@user:anne => false',
    ],
  },
  {
    name: 'typed wildcards',
    dsl: `${HEAD}type user\ntype user2\ntype group\n  relations\n    define member: [user, user:*]\ntype doc\n  relations\n    define viewer: [user, user:*, group#member]\n`,
    tuples: ['doc:1#viewer@user:*', 'group:g#member@user:*', 'doc:2#viewer@group:g#member'],
    cases: [
      'doc:1#viewer@user:anne => true',
      'doc:1#viewer@user:never-seen => true',
      'doc:1#viewer@user:* => true',
      'doc:1#viewer@user2:anne => false',
      'doc:1#viewer@group:g#member => false',
      'doc:2#viewer@user:x => true',
      'doc:2#viewer@user2:x => false',
      'doc:2#viewer@user:* => true',
      'doc:3#viewer@user:* => false',
    ],
  },
  {
    name: 'usersets and nested groups',
    dsl: `${HEAD}type user\ntype group\n  relations\n    define member: [user, group#member]\ntype doc\n  relations\n    define viewer: [user, group#member]\n`,
    tuples: [
      'doc:1#viewer@group:a#member',
      'group:a#member@group:b#member',
      'group:b#member@user:anne',
      'group:c#member@user:carl',
    ],
    cases: [
      'doc:1#viewer@user:anne => true',
      'doc:1#viewer@user:carl => false',
      'doc:1#viewer@group:b#member => true',
      'doc:1#viewer@group:a#member => true',
      'doc:1#viewer@group:c#member => false',
      'group:a#member@user:anne => true',
    ],
  },
  {
    name: 'computed userset and union',
    dsl: `${HEAD}type user\ntype doc\n  relations\n    define owner: [user]\n    define editor: [user] or owner\n    define viewer: [user] or editor\n`,
    tuples: ['doc:1#owner@user:olga', 'doc:1#editor@user:ed'],
    cases: [
      'doc:1#viewer@user:olga => true',
      'doc:1#viewer@user:ed => true',
      'doc:1#editor@user:olga => true',
      'doc:1#owner@user:ed => false',
    ],
  },
  {
    name: 'tuple to userset',
    dsl: `${HEAD}type user\ntype folder\n  relations\n    define parent: [folder]\n    define viewer: [user] or viewer from parent\ntype doc\n  relations\n    define parent: [folder, doc]\n    define viewer: [user] or viewer from parent\n`,
    tuples: [
      'folder:root#viewer@user:anne',
      'folder:a#parent@folder:root',
      'doc:1#parent@folder:a',
      'doc:2#parent@doc:1',
    ],
    cases: [
      'doc:1#viewer@user:anne => true',
      'doc:2#viewer@user:anne => true',
      'doc:1#viewer@user:bob => false',
      'folder:a#viewer@user:anne => true',
    ],
  },
  {
    name: 'intersection',
    dsl: `${HEAD}type user\ntype doc\n  relations\n    define writer: [user]\n    define editor: [user]\n    define viewer: writer and editor\n`,
    tuples: ['doc:1#writer@user:a', 'doc:1#editor@user:a', 'doc:1#writer@user:b'],
    cases: ['doc:1#viewer@user:a => true', 'doc:1#viewer@user:b => false', 'doc:1#viewer@doc:1#editor => false'],
  },
  {
    name: 'exclusion',
    dsl: `${HEAD}type user\ntype doc\n  relations\n    define blocked: [user]\n    define viewer: [user, user:*] but not blocked\n`,
    tuples: ['doc:1#viewer@user:*', 'doc:1#blocked@user:bob'],
    cases: ['doc:1#viewer@user:anne => true', 'doc:1#viewer@user:bob => false'],
  },
  {
    name: 'usersets are opaque under but not (5.6.2)',
    dsl: `${HEAD}type user\ntype group\n  relations\n    define member: [user]\ntype document\n  relations\n    define blocked: [user]\n    define viewer: [group#member] but not blocked\n`,
    tuples: [
      'document:1#viewer@group:eng#member',
      'group:eng#member@user:bob',
      'document:1#blocked@user:bob',
      'group:eng#member@user:amy',
    ],
    cases: [
      'document:1#viewer@group:eng#member => true',
      'document:1#viewer@user:bob => false',
      'document:1#viewer@user:amy => true',
    ],
  },
  {
    name: 'self-defining usersets',
    dsl: `${HEAD}type user\ntype group\n  relations\n    define member: [user]\ntype folder\n  relations\n    define writer: [user]\n    define editor: [user]\n    define viewer: writer or editor\n    define both: writer and editor\ntype document\n  relations\n    define parent: [folder]\n    define viewer: viewer from parent\n`,
    tuples: ['document:1#parent@folder:X'],
    cases: [
      'group:eng#member@group:eng#member => true',
      'group:new#member@group:new#member => true',
      'group:eng#member@group:other#member => false',
      'document:1#viewer@folder:X#editor => true',
      'document:1#viewer@folder:Y#editor => false',
      'folder:X#both@folder:X#editor => false',
    ],
  },
  {
    name: 'cycles (5.10)',
    dsl: `${HEAD}type user\ntype document\n  relations\n    define viewer: [user, document#viewer]\n    define restricted: [user, document#guarded]\n    define guarded: [user] but not restricted\n    define a: [user, document#b]\n    define b: [user, document#a]\n    define both: a and b\n    define either: a or b\n    define ab: a but not b\n`,
    tuples: [
      'document:1#viewer@document:2#viewer',
      'document:2#viewer@document:1#viewer',
      'document:3#guarded@user:jon',
      'document:3#restricted@document:3#guarded',
      'document:4#a@document:4#b',
      'document:4#b@document:4#a',
      'document:5#a@user:x',
      'document:5#b@document:5#a',
      'document:6#a@document:7#b',
      'document:7#b@document:6#a',
      'document:7#b@user:y',
    ],
    cases: [
      'document:1#viewer@user:jon => false', // immediate_cycle_return_false
      'document:3#guarded@user:jon => false', // true_butnot_cycle_return_false
      'document:4#either@user:z => false', // cycle_or_cycle_return_false
      'document:4#both@user:z => false', // cycle_and_cycle_return_false
      'document:5#both@user:x => true',
      'document:5#ab@user:x => false', // a true, b true through a
      'document:6#a@user:y => true', // three-prong style: a loop that still has an acyclic path
      'document:4#ab@user:z => false', // cycle_butnot_false / false_butnot_cycle
    ],
  },
  {
    name: 'conditions (5.5)',
    dsl: `${HEAD}type user\ntype folder\n  relations\n    define viewer: [user]\ntype doc\n  relations\n    define parent: [folder]\n    define viewer: [user with a] or viewer from parent\ncondition a(p: int) {\n  p > 0\n}\n`,
    tuples: [
      'doc:1#viewer@user:x[a]',
      'doc:2#viewer@user:x[a]',
      'doc:2#parent@folder:f',
      'folder:f#viewer@user:x',
      'doc:3#viewer@user:x[a]',
      'doc:3#parent@folder:g',
      'doc:4#viewer@user:x[a {"p":0}]',
    ],
    cases: [
      'doc:1#viewer@user:x => validation_error',
      'doc:1#viewer@user:x => true | {"p":1}',
      'doc:1#viewer@user:x => false | {"p":0}',
      'doc:2#viewer@user:x => true',
      'doc:3#viewer@user:x => validation_error',
      'doc:4#viewer@user:x => false | {"p":5}',
    ],
  },
];

function run(g: Group, ctx: boolean): void {
  const m = model(g.dsl);
  const ix = index(ctx ? [] : g.tuples);
  for (const c of g.cases) {
    const [q = '', rest = ''] = c.split(' => ');
    const [want = '', context] = rest.split(' | ');
    it(`${q} => ${want}${context ? ` ${context}` : ''}${ctx ? ' (contextual)' : ''}`, () => {
      const opts = { ctx: ctx ? g.tuples : [], ...(context ? { context: JSON.parse(context) as JsonObject } : {}) };
      expect(answer(ix, m, q, opts)).toBe(want);
    });
  }
}

for (const g of groups) {
  describe(g.name, () => run(g, false));
  describe(`${g.name} as contextual tuples`, () => run(g, true));
}

describe('depth limit (counts tuple hops only)', () => {
  const m = model(
    `${HEAD}type user\ntype doc\n  relations\n    define rel: [user, doc#rel]\n    define alias: rel\n    define safe: [user] or rel\n`,
  );
  const chain = (hops: number): string[] => [
    ...Array.from({ length: hops }, (_, i) => `doc:${i}#rel@doc:${i + 1}#rel`),
    `doc:${hops}#rel@user:x`,
  ];
  it('doc:0#rel@user:x => true (24 hops)', () => expect(answer(index(chain(24)), m, 'doc:0#rel@user:x')).toBe('true'));
  it('doc:0#rel@user:x => authorization_model_resolution_too_complex (25 hops)', () =>
    expect(answer(index(chain(25)), m, 'doc:0#rel@user:x')).toBe('authorization_model_resolution_too_complex'));
  it('doc:0#rel@user:x => authorization_model_resolution_too_complex (26 hops)', () =>
    expect(answer(index(chain(26)), m, 'doc:0#rel@user:x')).toBe('authorization_model_resolution_too_complex'));
  it('doc:0#alias@user:x => true (computed usersets do not count)', () =>
    expect(answer(index(chain(24)), m, 'doc:0#alias@user:x')).toBe('true'));
  it('doc:0#safe@user:x => true (a TRUE sibling masks the depth error)', () =>
    expect(answer(index([...chain(30), 'doc:0#safe@user:x']), m, 'doc:0#safe@user:x')).toBe('true'));
  it('doc:0#rel@user:x => true with resolveDepth 30', () =>
    expect(answer(index(chain(26)), m, 'doc:0#rel@user:x', { depth: 30 })).toBe('true'));
});
