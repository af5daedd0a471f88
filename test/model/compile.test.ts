// The model compiler on the worked example of docs/reference/semantics.md §2.4: rewrites, restrictions, tuplesets.
import { describe, expect, it } from 'vitest';
import { compileModel } from '../../src/model/compile.js';
import { dslToModel } from '../../src/model/dsl.js';
import type { CompiledModel } from '../../src/model/types.js';
import { validateModel } from '../../src/model/validate.js';
import { dsl } from './helpers.js';

const TEXT = dsl(`type user
type group
  relations
    define member: [user, user:*, group#member]
type folder
  relations
    define owner: [user]
    define parent: [folder]
    define viewer: [user, group#member with office_net] or owner or viewer from parent
type document
  relations
    define parent: [folder]
    define blocked: [user]
    define editor: [user] and owner from parent
    define viewer: (editor or viewer from parent) but not blocked
condition office_net(ip: ipaddress, cidr: string) {
  ip.in_cidr(cidr)
}
`);

const compile = (): CompiledModel =>
  compileModel({ id: '01JTESTMODEL0000000000000B', ...validateModel(dslToModel(TEXT)) });
const rel = (m: CompiledModel, t: string, r: string) => m.types.get(t)?.relations.get(r);

describe('compileModel', () => {
  const m = compile();

  it.each([
    ['group', 'member', { kind: 'this' }],
    [
      'folder',
      'viewer',
      {
        kind: 'union',
        children: [
          { kind: 'this' },
          { kind: 'computed', relation: 'owner' },
          { kind: 'ttu', tupleset: 'parent', computed: 'viewer' },
        ],
      },
    ],
    [
      'document',
      'editor',
      { kind: 'intersection', children: [{ kind: 'this' }, { kind: 'ttu', tupleset: 'parent', computed: 'owner' }] },
    ],
    [
      'document',
      'viewer',
      {
        kind: 'difference',
        base: {
          kind: 'union',
          children: [
            { kind: 'computed', relation: 'editor' },
            { kind: 'ttu', tupleset: 'parent', computed: 'viewer' },
          ],
        },
        subtract: { kind: 'computed', relation: 'blocked' },
      },
    ],
  ])('%s#%s rewrite', (t, r, rewrite) => expect(rel(m, t, r)?.rewrite).toEqual(rewrite));

  it('direct types keep wildcard, userset and condition', () => {
    expect(rel(m, 'group', 'member')?.directTypes).toEqual([
      { type: 'user', relation: undefined, wildcard: false, condition: undefined },
      { type: 'user', relation: undefined, wildcard: true, condition: undefined },
      { type: 'group', relation: 'member', wildcard: false, condition: undefined },
    ]);
    expect(rel(m, 'folder', 'viewer')?.directTypes[1]).toEqual({
      type: 'group',
      relation: 'member',
      wildcard: false,
      condition: 'office_net',
    });
    expect(rel(m, 'document', 'viewer')?.directTypes).toEqual([]);
  });

  it.each([
    ['folder', 'parent', true],
    ['document', 'parent', true],
    ['folder', 'viewer', false],
    ['document', 'blocked', false],
  ] as const)('%s#%s isTupleset = %s', (t, r, expected) => expect(rel(m, t, r)?.isTupleset).toBe(expected));

  it('keeps type order, schema, id, json and compiles conditions', () => {
    expect([...m.types.keys()]).toEqual(['user', 'group', 'folder', 'document']);
    expect(m.schemaVersion).toBe('1.1');
    expect(m.json.id).toBe('01JTESTMODEL0000000000000B');
    expect(m.conditions.get('office_net')?.evaluate({ cidr: '10.0.0.0/8' }, { ip: '10.9.9.9' }, 't')).toEqual({
      ok: true,
      value: true,
    });
  });

  it('is deterministic', () => {
    const strip = (c: CompiledModel): unknown =>
      JSON.stringify([...c.types.values()].map((t) => [t.name, [...t.relations.values()]]));
    expect(strip(compile())).toBe(strip(m));
  });
});
