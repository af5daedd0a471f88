// The fifteen traps of docs/reference/semantics.md §0.1, table-driven against the reference evaluator.
// Each row reads as the query and its expected answer (a number is the expected error code).

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { listObjects, MemoryTupleView, overlayView } from '../oracle/reference.js';
import { expand } from '../../src/engine/evaluation/list/expand.js';
import { listUsers } from '../../src/engine/evaluation/list/list-users.js';
import { dslToModel } from '../../src/model/dsl.js';
import type { StoreDriver } from '../conformance/engine.js';
import { createReferenceDriver } from '../conformance/reference-driver.js';
import { compileDsl } from './model.js';
import { attempt, check, ctxOf, objects, tk, users, type Env } from './table.js';

const dsl = (body: string): string => `model\n  schema 1.1\n${body}`;

function rows(env: () => Env, table: [string, boolean | number][]): void {
  for (const [q, want] of table) it(`${q} => ${want}`, () => expect(check(env(), q)).toBe(want));
}

const condModel = compileDsl(
  dsl(`type user
type folder
  relations
    define viewer: [user]
type doc
  relations
    define parent: [folder]
    define viewer: [user with a] or viewer from parent
condition a(p: int, q: int) {
  p > 0
}`),
);

describe('1. a missing condition parameter is an error only when it decides', () => {
  rows(
    () => ({ model: condModel, tuples: ['doc:1#viewer@user:x with a'] }),
    [
      ['doc:1#viewer@user:x', 2000],
      ['doc:1#viewer@user:y', false],
    ],
  );
  rows(() => ({ model: condModel, tuples: ['doc:1#viewer@user:x with a {"p":1}'] }), [['doc:1#viewer@user:x', 2000]]);
  rows(
    () => ({ model: condModel, tuples: ['doc:1#viewer@user:x with a {"p":1,"q":0}'] }),
    [['doc:1#viewer@user:x', true]],
  );
  rows(
    () => ({
      model: condModel,
      tuples: ['doc:1#viewer@user:x with a', 'doc:1#parent@folder:f', 'folder:f#viewer@user:x'],
    }),
    [['doc:1#viewer@user:x', true]],
  );
  rows(
    () => ({ model: condModel, tuples: ['doc:1#viewer@user:x with a', 'doc:1#parent@folder:f'] }),
    [['doc:1#viewer@user:x', 2000]],
  );
});

describe('2. tuple context beats request context', () => {
  rows(
    () => ({ model: condModel, tuples: ['doc:1#viewer@user:x with a {"p":0}'], context: { p: 5, q: 1 } }),
    [['doc:1#viewer@user:x', false]],
  );
  rows(
    () => ({ model: condModel, tuples: ['doc:1#viewer@user:x with a {"p":3}'], context: { p: 0, q: 1 } }),
    [['doc:1#viewer@user:x', true]],
  );
});

describe('3. stale tuples are ignored under the query model', () => {
  const before = compileDsl(
    dsl('type user\ntype employee\ntype doc\n  relations\n    define viewer: [user, employee, user:*]'),
  );
  const after = compileDsl(dsl('type user\ntype employee\ntype doc\n  relations\n    define viewer: [user]'));
  const tuples = ['doc:1#viewer@employee:e', 'doc:1#viewer@user:*', 'doc:1#viewer@user:u'];
  rows(
    () => ({ model: before, tuples }),
    [
      ['doc:1#viewer@employee:e', true],
      ['doc:1#viewer@user:z', true],
    ],
  );
  rows(
    () => ({ model: after, tuples }),
    [
      ['doc:1#viewer@employee:e', false],
      ['doc:1#viewer@user:z', false],
      ['doc:1#viewer@user:u', true],
    ],
  );
  it('ListObjects and ListUsers skip them too', () => {
    expect(objects({ model: after, tuples }, 'doc#viewer@user:z')).toEqual([]);
    expect(users({ model: after, tuples }, 'doc:1#viewer', 'user')).toEqual(['user:u']);
  });
});

const groups = compileDsl(
  dsl(`type user
type group
  relations
    define member: [user, group#member]
type folder
  relations
    define writer: [user]
    define editor: [user]
    define viewer: writer or editor
    define both: writer and editor
type doc
  relations
    define parent: [folder]
    define blocked: [user]
    define viewer: [group#member] but not blocked
    define reader: viewer from parent`),
);

describe('4. self-defining usersets', () => {
  rows(
    () => ({ model: groups, tuples: [] }),
    [
      ['group:eng#member@group:eng#member', true],
      ['group:eng#member@group:ops#member', false],
    ],
  );
  rows(
    () => ({ model: groups, tuples: ['doc:1#parent@folder:x'] }),
    [
      ['doc:1#reader@folder:x#editor', true],
      ['doc:1#reader@folder:y#editor', false],
    ],
  );
  it('ListObjects and ListUsers include the implicit membership', () => {
    expect(objects({ model: groups, tuples: [] }, 'group#member@group:eng#member')).toEqual(['group:eng']);
    expect(users({ model: groups, tuples: [] }, 'group:eng#member', 'group#member')).toEqual(['group:eng#member']);
    expect(users({ model: groups, tuples: ['doc:1#parent@folder:x'] }, 'doc:1#reader', 'folder#editor')).toEqual([
      'folder:x#editor',
    ]);
  });
});

describe('5. usersets are opaque under but not and and', () => {
  const tuples = [
    'doc:1#viewer@group:eng#member',
    'group:eng#member@user:bob',
    'doc:1#blocked@user:bob',
    'group:eng#member@user:ann',
  ];
  rows(
    () => ({ model: groups, tuples }),
    [
      ['doc:1#viewer@group:eng#member', true],
      ['doc:1#viewer@user:bob', false],
      ['doc:1#viewer@user:ann', true],
      ['folder:x#both@folder:x#editor', false],
      ['folder:x#viewer@folder:x#editor', true],
    ],
  );
  it('ListUsers returns the userset itself', () => {
    expect(users({ model: groups, tuples }, 'doc:1#viewer', 'group#member')).toEqual(['group:eng#member']);
    expect(users({ model: groups, tuples }, 'doc:1#viewer', 'user')).toEqual(['user:ann']);
  });
});

describe('6. cycles are FALSE, and decisive in a subtract', () => {
  const m = compileDsl(
    dsl(`type user
type doc
  relations
    define restricted: [user, doc#viewer]
    define viewer: [user] but not restricted
    define loop: [user, doc#loop]`),
  );
  rows(
    () => ({ model: m, tuples: ['doc:1#viewer@user:jon', 'doc:1#restricted@doc:1#viewer', 'doc:1#loop@doc:1#loop'] }),
    [
      ['doc:1#viewer@user:jon', false],
      ['doc:1#loop@user:jon', false],
    ],
  );
  it('ListUsers: a cycle contributes nothing', () => {
    expect(users({ model: m, tuples: ['doc:1#loop@doc:1#loop'] }, 'doc:1#loop', 'user')).toEqual([]);
  });
});

describe('7. depth counts tuple hops only', () => {
  const chain = compileDsl(
    dsl('type user\ntype g\n  relations\n    define m: [user, g#m]\n    define a: m\n    define b: a\n    define c: b'),
  );
  const hops = (n: number): string[] => [
    ...Array.from({ length: n }, (_, i) => `g:${i}#m@g:${i + 1}#m`),
    `g:${n}#m@user:u`,
  ];
  rows(() => ({ model: chain, tuples: hops(3), depth: 4 }), [['g:0#c@user:u', true]]);
  rows(() => ({ model: chain, tuples: hops(4), depth: 4 }), [['g:0#c@user:u', 2002]]);
  rows(() => ({ model: chain, tuples: [...hops(4), 'g:0#m@user:u'], depth: 4 }), [['g:0#c@user:u', true]]);
  it('ListUsers counts computed relations too', () => {
    expect(users({ model: chain, tuples: hops(1), depth: 3 }, 'g:0#c', 'user')).toBe(2002);
    expect(users({ model: chain, tuples: hops(1), depth: 6 }, 'g:0#c', 'user')).toEqual(['user:u']);
  });
});

describe('8. contextual tuples behave like stored ones; duplicates are harmless', () => {
  const m = compileDsl(dsl('type user\ntype doc\n  relations\n    define viewer: [user]'));
  rows(
    () => ({ model: m, tuples: [], contextual: ['doc:1#viewer@user:a', 'doc:1#viewer@user:a'] }),
    [
      ['doc:1#viewer@user:a', true],
      ['doc:1#viewer@user:aa', false],
    ],
  );
  it('ListObjects has no duplicates', () => {
    expect(
      objects({ model: m, tuples: ['doc:1#viewer@user:a'], contextual: ['doc:1#viewer@user:a'] }, 'doc#viewer@user:a'),
    ).toEqual(['doc:1']);
  });
  it('a userset subject also meets its own tuple as a userset tuple, where every copy counts', () => {
    const g = compileDsl(
      dsl(
        'type user\ntype group\n  relations\n    define member: [user, group#member with a]\ncondition a(p: int) {\n  p > 0\n}',
      ),
    );
    const env = {
      model: g,
      tuples: ['group:1#member@group:2#member with a {"p":1}'],
      contextual: ['group:1#member@group:2#member with a {"p":0}'],
    };
    expect(check(env, 'group:1#member@group:2#member')).toBe(true);
    expect(check({ ...env, tuples: [] }, 'group:1#member@group:2#member')).toBe(false);
  });
  it('the contextual copy of an exact key is the one evaluated', () => {
    expect(
      check(
        {
          model: condModel,
          tuples: ['doc:1#viewer@user:x with a {"p":0,"q":0}'],
          contextual: ['doc:1#viewer@user:x with a {"p":1,"q":0}'],
        },
        'doc:1#viewer@user:x',
      ),
    ).toBe(true);
  });
});

describe('10. typed wildcards', () => {
  const m = compileDsl(
    dsl(`type user
type user2
type group
  relations
    define member: [user:*, user2]
type doc
  relations
    define restricted: [user]
    define public: [user:*]
    define viewer: [group#member]
    define open: [user:*] but not restricted`),
  );
  const tuples = [
    'group:g#member@user:*',
    'doc:1#viewer@group:g#member',
    'doc:1#open@user:*',
    'doc:1#restricted@user:bad',
    'doc:1#public@user:*',
  ];
  rows(
    () => ({ model: m, tuples }),
    [
      ['doc:1#viewer@user:anyone', true],
      ['doc:1#viewer@user2:x', false],
      ['doc:1#viewer@user:*', true],
      ['doc:1#open@user:bad', false],
      ['doc:1#open@user:ok', true],
      ['doc:1#public@group:g#member', false],
    ],
  );
  it('ListUsers keeps user:* beside an exclusion', () => {
    expect(users({ model: m, tuples }, 'doc:1#open', 'user')).toEqual(['user:*']);
    expect(objects({ model: m, tuples }, 'doc#open@user:*')).toEqual(['doc:1']);
  });
});

describe('11. tuple-to-userset skips parents whose type lacks the relation', () => {
  const m = compileDsl(
    dsl(`type user
type folder
  relations
    define viewer: [user]
type bucket
type doc
  relations
    define parent: [folder, bucket]
    define viewer: viewer from parent`),
  );
  rows(
    () => ({ model: m, tuples: ['doc:1#parent@bucket:b', 'doc:1#parent@folder:f', 'folder:f#viewer@user:u'] }),
    [
      ['doc:1#viewer@user:u', true],
      ['doc:1#viewer@user:v', false],
    ],
  );
});

describe('14. error strictness differs between APIs', () => {
  const tuples = [
    'doc:1#viewer@user:x with a',
    'doc:1#parent@folder:f',
    'folder:f#viewer@user:x',
    'doc:2#parent@folder:f',
  ];
  it('Check masks the error, ListObjects and ListUsers do not', () => {
    expect(check({ model: condModel, tuples }, 'doc:1#viewer@user:x')).toBe(true);
    expect(objects({ model: condModel, tuples }, 'doc#viewer@user:x')).toBe(2000);
    expect(users({ model: condModel, tuples }, 'doc:1#viewer', 'user')).toBe(2000);
  });
  it('ListObjects for an untouched user succeeds', () => {
    expect(
      objects(
        { model: condModel, tuples: [...tuples, 'folder:g#viewer@user:y', 'doc:3#parent@folder:g'] },
        'doc#viewer@user:y',
      ),
    ).toEqual(['doc:3']);
  });
});

describe('15. ListUsers returns typed users; Expand returns one level', () => {
  it('typed entries', () => {
    const env = { model: groups, tuples: ['doc:1#viewer@group:eng#member'] };
    expect(users(env, 'doc:1#viewer', 'group#member')).toEqual(['group:eng#member']);
  });
  it('expand', () => {
    const view = new MemoryTupleView(
      ['doc:1#viewer@group:eng#member', 'doc:1#blocked@user:b', 'doc:1#viewer@group:eng#member'].map(tk),
    );
    expect(expand(groups, view, 'doc:1', 'viewer')).toEqual({
      name: 'doc:1#viewer',
      difference: {
        base: { name: 'doc:1#viewer', leaf: { users: { users: ['group:eng#member'] } } },
        subtract: { name: 'doc:1#viewer', leaf: { computed: { userset: 'doc:1#blocked' } } },
      },
    });
    expect(
      expand(
        groups,
        new MemoryTupleView([tk('doc:1#parent@folder:x'), tk('doc:1#parent@folder:x')]),
        'doc:1',
        'reader',
      ),
    ).toEqual({
      name: 'doc:1#reader',
      leaf: { tupleToUserset: { tupleset: 'doc:1#parent', computed: [{ userset: 'folder:x#viewer' }] } },
    });
  });
});

describe('9. error codes differ per API (direct conformance driver)', () => {
  const model = 'model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user]';
  const empty = { contextualTuples: [] };
  const run = async (fn: (s: StoreDriver, id: string) => Promise<unknown>): Promise<unknown> => {
    const store = await createReferenceDriver(dslToModel).createStore('t');
    const id = await store.writeModel(model);
    return fn(store, id).then(
      (v) => v,
      (e: unknown) => (e instanceof AppError ? e.numeric : e),
    );
  };
  it('unknown relation: Check 2000, ListObjects 2022, ListUsers 2022', async () => {
    expect(
      await run((s, id) => s.check(id, { ...empty, key: { user: 'user:a', relation: 'nope', object: 'doc:1' } })),
    ).toBe(2000);
    expect(
      await run((s, id) => s.listObjects(id, { ...empty, key: { user: 'user:a', relation: 'nope', type: 'doc' } })),
    ).toBe(2022);
    expect(
      await run((s, id) =>
        s.listUsers(id, {
          ...empty,
          key: { object: { type: 'doc', id: '1' }, relation: 'nope', filters: [{ type: 'user' }] },
        }),
      ),
    ).toBe(2022);
  });
  it('unknown object type: Check 2000, ListObjects 2021', async () => {
    expect(
      await run((s, id) => s.check(id, { ...empty, key: { user: 'user:a', relation: 'viewer', object: 'nope:1' } })),
    ).toBe(2000);
    expect(
      await run((s, id) => s.listObjects(id, { ...empty, key: { user: 'user:a', relation: 'viewer', type: 'nope' } })),
    ).toBe(2021);
  });
  it('invalid contextual tuple: 2027', async () => {
    const bad = { contextualTuples: [tk('doc:1#viewer@nope:x')] };
    expect(
      await run((s, id) => s.check(id, { ...bad, key: { user: 'user:a', relation: 'viewer', object: 'doc:1' } })),
    ).toBe(2027);
    expect(
      await run((s, id) => s.listObjects(id, { ...bad, key: { user: 'user:a', relation: 'viewer', type: 'doc' } })),
    ).toBe(2027);
  });
});

describe('12-13. the DSL has no precedence; computed-only cycles are invalid models', () => {
  it('mixing operators at one level is a syntax error', () => {
    expect(() =>
      compileDsl(
        dsl('type user\ntype doc\n  relations\n    define a: [user]\n    define b: [user]\n    define c: a or b and a'),
      ),
    ).toThrow();
  });
  it('x: [user] or y / y: [user] or x is rejected', () => {
    expect(() =>
      compileDsl(dsl('type user\ntype doc\n  relations\n    define x: [user] or y\n    define y: [user] or x')),
    ).toThrow();
  });
});

describe('limits: max results and the deadline', () => {
  const tuples = [
    'doc:1#viewer@user:x with a',
    'doc:2#viewer@user:x with a {"p":1,"q":1}',
    'doc:3#viewer@user:x with a {"p":1,"q":1}',
  ];
  it('ListObjects fails on an evaluation error unless max results were collected', () => {
    const ctx = ctxOf({ model: condModel, tuples });
    expect(attempt(() => listObjects(ctx, { type: 'doc', relation: 'viewer', user: 'user:x' }, 1000))).toBe(2000);
    expect(listObjects(ctx, { type: 'doc', relation: 'viewer', user: 'user:x' }, 2).sort()).toEqual(['doc:2', 'doc:3']);
  });
  it('the deadline ends ListObjects and ListUsers with partial results, no error', () => {
    const ctx = {
      ...ctxOf({ model: groups, tuples: ['doc:1#viewer@group:g#member', 'group:g#member@user:u'] }),
      deadline: Date.now() - 1,
    };
    expect(listObjects(ctx, { type: 'doc', relation: 'viewer', user: 'user:u' }, 1000)).toEqual([]);
    expect(listUsers(ctx, { object: 'doc:1', relation: 'viewer', filter: { type: 'user' } }, 1000)).toEqual([]);
  });
  it('StreamedListObjects sees every object as it is confirmed', () => {
    const seen: string[] = [];
    const ctx = ctxOf({ model: condModel, tuples: tuples.slice(1) });
    const all = listObjects(ctx, { type: 'doc', relation: 'viewer', user: 'user:x' }, Infinity, (o) => seen.push(o));
    expect(seen).toEqual(all);
    expect(all.sort()).toEqual(['doc:2', 'doc:3']);
  });
});

describe('§5.2 step 4: no type-graph path from the subject means FALSE before any tuple is read', () => {
  const m = compileDsl(
    dsl(`type user
type bot
type group
  relations
    define member: [bot]
type doc
  relations
    define viewer: [group#member with a]
condition a(p: int) {
  p > 0
}`),
  );
  rows(
    () => ({ model: m, tuples: ['doc:1#viewer@group:g#member with a', 'group:g#member@bot:b'] }),
    [
      ['doc:1#viewer@user:x', false],
      ['doc:1#viewer@bot:b', 2000],
      ['doc:1#viewer@group:g#member', 2000],
    ],
  );
});

describe('memoised results respect the depth limit where they are reused', () => {
  const m = compileDsl(
    dsl(
      'type user\ntype folder\n  relations\n    define viewer: [user]\ntype doc\n  relations\n    define parent: [folder]\n    define viewer: viewer from parent\n    define via: [doc#viewer]\n    define both: viewer and via',
    ),
  );
  // doc:1#viewer is TRUE at depth 0 (its self hit is one hop below); reached again at depth 1
  // through `via`, that hop reaches the limit of 2, so the memo must not answer there.
  const tuples = ['doc:1#parent@folder:f', 'doc:1#via@doc:1#viewer'];
  rows(() => ({ model: m, tuples, depth: 2 }), [['doc:1#both@folder:f#viewer', 2002]]);
  rows(() => ({ model: m, tuples, depth: 3 }), [['doc:1#both@folder:f#viewer', true]]);
});

describe('a result whose subtree the depth limit cut is not reused higher up', () => {
  // group:1#a is first reached at depth 2 (via s1), where the limit of 3 cuts `m` under the
  // subtract `y = m and q`, a cut the FALSE of `q` masks; at depth 1 (via s2) `m` meets the
  // cycle at group:1#a instead, and y's cycle flag makes a FALSE.
  const m = compileDsl(readFileSync(new URL('../fixtures/models/depth-cut-memo.fga', import.meta.url), 'utf8'));
  const tuples = [
    'group:1#a@user:u',
    'group:1#m@group:1#a',
    'group:2#p@group:1#a',
    'group:0#w@group:2#p',
    'group:0#s2@group:1#a',
  ];
  rows(() => ({ model: m, tuples, depth: 2 }), [['group:0#r@user:u', true]]);
  rows(() => ({ model: m, tuples, depth: 3 }), [['group:0#r@user:u', false]]);
  rows(() => ({ model: m, tuples, depth: 25 }), [['group:0#r@user:u', false]]);
});

describe('§6.3: a cycle reached by the subtract empties the difference in ListUsers', () => {
  const m = compileDsl(
    dsl(`type user
type bot
type group
  relations
    define member: [user, group#member]
type doc
  relations
    define restricted: [user, group#member]
    define viewer: [user, bot] but not restricted`),
  );
  const tuples = [
    'doc:1#viewer@bot:b',
    'doc:1#viewer@user:u',
    'doc:1#restricted@group:g#member',
    'group:g#member@group:h#member',
    'group:h#member@group:g#member',
  ];
  it('Check still answers per user; ListUsers returns nothing', () => {
    expect(check({ model: m, tuples }, 'doc:1#viewer@bot:b')).toBe(true);
    expect(check({ model: m, tuples }, 'doc:1#viewer@user:u')).toBe(false);
    expect(users({ model: m, tuples }, 'doc:1#viewer', 'bot')).toEqual([]);
    expect(users({ model: m, tuples: tuples.slice(0, 2) }, 'doc:1#viewer', 'bot')).toEqual(['bot:b']);
  });
});

describe('ListUsers: a subtree cut by the depth limit is not reused higher up', () => {
  // Differential seed 978100827. group:2#r1 is first expanded at depth 3 under group:1#r1's
  // subtract, where the limit of 4 cuts it (an error that the subtract's cycle at group:1#r1
  // swallows); reached again at depth 1 straight from group:3#r0 it is empty and error-free.
  const m = compileDsl(
    dsl('type user\ntype group\n  relations\n    define r0: [user, group#r1]\n    define r1: r0 but not r0'),
  );
  const tuples = [
    'group:3#r0@user:u',
    'group:1#r0@group:2#r1',
    'group:3#r0@group:1#r1',
    'group:1#r0@group:1#r1',
    'group:3#r0@group:2#r1',
  ];
  it('agrees with the reference expansion at every depth limit', () => {
    expect(users({ model: m, tuples, depth: 3 }, 'group:3#r0', 'user')).toBe(2002);
    expect(users({ model: m, tuples, depth: 4 }, 'group:3#r0', 'user')).toEqual(['user:u']);
    expect(users({ model: m, tuples, depth: 25 }, 'group:3#r0', 'user')).toEqual(['user:u']);
    expect(check({ model: m, tuples, depth: 4 }, 'group:3#r0@user:u')).toBe(true);
  });
});

describe('ListUsers: an error no subtract can swallow fails the request at once', () => {
  // Every path through the 30 levels of 4 groups meets the limit: 4^24 paths. The first cut
  // fails the request; walking on (the cut subtrees are not reused) would end at the deadline
  // (10 s here) with an empty answer instead of 2002.
  const m = compileDsl(
    dsl(
      'type user\ntype group\n  relations\n    define member: [user, group#member]\ntype doc\n  relations\n    define viewer: [user, group#member]',
    ),
  );
  const tuples = ['doc:1#viewer@user:a'];
  for (let i = 0; i < 4; i++) tuples.push(`doc:1#viewer@group:0_${i}#member`);
  for (let l = 0; l < 29; l++)
    for (let i = 0; i < 4; i++)
      for (let j = 0; j < 4; j++) tuples.push(`group:${l}_${i}#member@group:${l + 1}_${j}#member`);
  it('ListUsers over a deep lattice => 2002', () => {
    expect(users({ model: m, tuples }, 'doc:1#viewer', 'user')).toBe(2002);
  });
});

describe('Expand: valid tuples only, contextual tuples included, conditions ignored', () => {
  const m = compileDsl(
    dsl(
      'type user\ntype bot\ntype doc\n  relations\n    define viewer: [user, user:*, bot with a] and editor\n    define editor: [user]\ncondition a(p: int) {\n  p > 0\n}',
    ),
  );
  it('stale and contextual tuples', () => {
    const base = new MemoryTupleView(
      ['doc:1#viewer@user:b', 'doc:1#viewer@bot:x', 'doc:1#viewer@bot:y with a', 'doc:1#viewer@user:*'].map(tk),
    );
    const view = overlayView(base, [tk('doc:1#viewer@user:a')]);
    expect(expand(m, view, 'doc:1', 'viewer')).toEqual({
      name: 'doc:1#viewer',
      intersection: {
        nodes: [
          { name: 'doc:1#viewer', leaf: { users: { users: ['bot:y', 'user:*', 'user:a', 'user:b'] } } },
          { name: 'doc:1#viewer', leaf: { computed: { userset: 'doc:1#editor' } } },
        ],
      },
    });
  });
});
