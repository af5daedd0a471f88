// Model validation: each row is a model (DSL or JSON) and the code + message fragment it must produce.
import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/errors.js';
import { dslToModel } from '../../src/model/dsl.js';
import { validateDslModel } from '../../src/model/load.js';
import { validateModel } from '../../src/model/validate.js';
import { appErrorOf, dsl } from './helpers.js';

const USER = 'type user\n';

/** DSL models the API must reject: [name, dsl body, code, message fragments]. */
const dslCases: [string, string, ErrorCode, string[]][] = [
  [
    'R5 self reference',
    `${USER}type doc\n  relations\n    define viewer: [user] or viewer\n`,
    'cannot_allow_multiple_references_to_one_relation',
    ["'viewer'", "'doc'", 'references itself'],
  ],
  [
    'R6 unknown computed relation',
    `${USER}type doc\n  relations\n    define viewer: editor\n`,
    'unknown_relation',
    ["relation 'viewer' in type 'doc'", "'doc#editor' relation is undefined"],
  ],
  [
    'R7 unknown tupleset',
    `${USER}type doc\n  relations\n    define viewer: viewer from parent\n`,
    'unknown_relation',
    ["'doc#parent' relation is undefined"],
  ],
  [
    'R8 tupleset not direct',
    `${USER}type folder\n  relations\n    define viewer: [user]\ntype doc\n  relations\n    define owner: [folder]\n    define parent: [folder] or owner\n    define viewer: viewer from parent\n`,
    'invalid_tuple_set',
    ["relation 'viewer' in type 'doc'", "'doc#parent' relation is referenced in at least one tupleset"],
  ],
  [
    'R9 from-target on no parent type',
    `${USER}type folder\n  relations\n    define owner: [user]\ntype doc\n  relations\n    define parent: [folder]\n    define viewer: viewer from parent\n`,
    'unknown_relation',
    ["'viewer' does not appear on any directly related type of 'doc#parent'"],
  ],
  [
    'R11 unknown restriction type',
    `${USER}type doc\n  relations\n    define viewer: [team]\n`,
    'type_not_found',
    ["relation 'viewer' in type 'doc'", "type 'team' not found"],
  ],
  [
    'R11 unknown restriction relation',
    `${USER}type team\n  relations\n    define member: [user]\ntype doc\n  relations\n    define viewer: [team#lead]\n`,
    'relation_not_found',
    ["the relation type 'team#lead' on 'viewer'", "relation 'team#lead' not found"],
  ],
  [
    'R12 userset restriction on a tupleset',
    `${USER}type folder\n  relations\n    define viewer: [user]\ntype doc\n  relations\n    define parent: [folder#viewer]\n    define viewer: viewer from parent\n`,
    'invalid_tuple_set',
    ["relation 'parent' in type 'doc'", 'must be plain types'],
  ],
  [
    'R12 wildcard restriction on a tupleset',
    `${USER}type folder\n  relations\n    define viewer: [user]\ntype doc\n  relations\n    define parent: [folder, folder:*]\n    define viewer: viewer from parent\n`,
    'invalid_tuple_set',
    ["'folder:*' on 'parent'"],
  ],
  [
    'R14 no entrypoint (a: b, b: a)',
    `${USER}type doc\n  relations\n    define a: b\n    define b: a\n`,
    'validation_error',
    ["relation 'a' in type 'doc'", 'potential loop'],
  ],
  [
    'R14 no entrypoint through and',
    `${USER}type doc\n  relations\n    define editor: [user]\n    define viewer: [doc#viewer] and editor\n`,
    'validation_error',
    ["relation 'viewer' in type 'doc'", 'no entrypoints'],
  ],
  [
    'R14 userset restriction alone',
    `type group\n  relations\n    define viewer: [group#viewer]\n`,
    'validation_error',
    ["relation 'viewer' in type 'group'", 'no entrypoints'],
  ],
  [
    'R15 computed cycle with direct entries',
    `${USER}type doc\n  relations\n    define x: [user] or y\n    define y: [user] or z\n    define z: [user] or x\n`,
    'validation_error',
    ["relation 'x' in type 'doc'", 'cannot contain a cycle'],
  ],
  [
    'R3 reserved relation name',
    `${USER}type doc\n  relations\n    define this: [user]\n`,
    'validation_error',
    ["relation 'this' in type 'doc'", 'reserved'],
  ],
  [
    'R13 undefined condition',
    `${USER}type doc\n  relations\n    define viewer: [user with nope]\n`,
    'validation_error',
    ["relation 'viewer' in type 'doc'", 'condition nope is undefined'],
  ],
  [
    'R17 undeclared identifier',
    `${USER}type doc\n  relations\n    define viewer: [user with c]\ncondition c(x: int) {\n  y < 10\n}\n`,
    'validation_error',
    ["condition 'c'", 'Unknown variable: y'],
  ],
  [
    'R17 non-bool result',
    `${USER}type doc\n  relations\n    define viewer: [user with c]\ncondition c(x: int) {\n  x + 1\n}\n`,
    'validation_error',
    ["condition 'c'", "expected a bool condition expression output, but got 'int'"],
  ],
];

const docType = (relations: object, metadata: object | null = null): object => ({ type: 'doc', relations, metadata });
const model = (...types: object[]): object => ({
  schema_version: '1.1',
  type_definitions: [{ type: 'user' }, ...types],
});
const direct = { this: {} };
const userMeta = (r: string): object => ({ relations: { [r]: { directly_related_user_types: [{ type: 'user' }] } } });

/** JSON bodies: [name, body, code, message fragments]. */
const jsonCases: [string, unknown, ErrorCode, string[]][] = [
  [
    'no type definitions',
    { schema_version: '1.1', type_definitions: [] },
    'type_definitions_too_few_items',
    ['TypeDefinitions: value must contain at least 1 item(s)'],
  ],
  [
    'schema version not in list',
    { schema_version: '2.0', type_definitions: [{ type: 'user' }] },
    'validation_error',
    ['value must be in list [1.0 1.1 1.2]'],
  ],
  [
    'schema 1.0 unsupported',
    { schema_version: '1.0', type_definitions: [{ type: 'user' }] },
    'validation_error',
    ['1.0 is not supported'],
  ],
  [
    'R2 duplicate types',
    model({ type: 'user' }),
    'cannot_allow_duplicate_types_in_one_request',
    ["type 'user' is defined more than once"],
  ],
  [
    'R4 empty rewrite',
    model(docType({ viewer: {} })),
    'empty_relation_definition',
    ["relation 'viewer' in type 'doc'", 'the rewrite is empty'],
  ],
  ['bad type name', model({ type: 'a:b' }), 'type_invalid_pattern', ["type 'a:b'", 'does not match regex pattern']],
  [
    'bad relation key',
    model(docType({ 'can:view': direct }, userMeta('can:view'))),
    'relations_invalid_pattern',
    ['Relations[can:view]', "type 'doc', relation 'can:view'"],
  ],
  [
    'long relation key',
    model(docType({ ['r'.repeat(51)]: direct })),
    'relations_too_long',
    ['at most 50 bytes', "type 'doc'"],
  ],
  ['long type name', model({ type: 't'.repeat(255) }), 'type_invalid_length', ['at most 254 bytes']],
  [
    'difference without base',
    model(docType({ viewer: { difference: { subtract: direct } } }, userMeta('viewer'))),
    'difference_base_missing_value',
    ['Difference.Base', "type 'doc', relation 'viewer'"],
  ],
  [
    'difference without subtract',
    model(docType({ viewer: { difference: { base: direct } } }, userMeta('viewer'))),
    'subtract_base_missing_value',
    ['Difference.Subtract'],
  ],
  [
    'R10 assignable without types',
    model(docType({ viewer: direct })),
    'validation_error',
    ["relation 'viewer' in type 'doc'", 'must contain at least one relation type'],
  ],
  [
    'R10 non-assignable with types',
    model(
      docType(
        { owner: direct, viewer: { computedUserset: { relation: 'owner' } } },
        {
          relations: {
            owner: { directly_related_user_types: [{ type: 'user' }] },
            viewer: { directly_related_user_types: [{ type: 'user' }] },
          },
        },
      ),
    ),
    'validation_error',
    ["relation 'viewer' in type 'doc'", 'should not contain a relation type'],
  ],
  [
    'R16 union with one child',
    model(docType({ viewer: { union: { child: [direct] } } }, userMeta('viewer'))),
    'validation_error',
    ["relation 'viewer' in type 'doc'", 'less than 2 children'],
  ],
  [
    '101 types',
    { schema_version: '1.1', type_definitions: Array.from({ length: 101 }, (_, i) => ({ type: `t${i}` })) },
    'exceeded_entity_limit',
    ['exceeds the allowed limit of 100'],
  ],
  [
    'model over 256 KiB',
    {
      schema_version: '1.1',
      type_definitions: Array.from({ length: 100 }, (_, i) => ({
        type: `t${i}`,
        relations: Object.fromEntries(Array.from({ length: 60 }, (_, j) => [`r${j}_${'x'.repeat(44)}`, direct])),
      })),
    },
    'exceeded_entity_limit',
    ['model exceeds size limit'],
  ],
  [
    'condition key differs from name',
    {
      ...(model() as object),
      conditions: { a: { name: 'b', expression: 'x < 1', parameters: { x: { type_name: 'TYPE_NAME_INT' } } } },
    },
    'validation_error',
    ["condition key 'a' does not match condition name 'b'"],
  ],
  [
    'unknown parameter type',
    {
      ...(model() as object),
      conditions: { c: { name: 'c', expression: 'true', parameters: { x: { type_name: 'TYPE_NAME_UNSPECIFIED' } } } },
    },
    'validation_error',
    ["condition 'c'", "parameter 'x'"],
  ],
];

describe('validateModel rejects', () => {
  it.each(dslCases)('%s', (_name, body, code, fragments) => {
    const err = appErrorOf(() => validateModel(dslToModel(dsl(body))));
    expect(err.code).toBe(code);
    expect(err.status).toBe(400);
    for (const f of fragments) expect(err.message).toContain(f);
  });
  it.each(jsonCases)('%s', (_name, body, code, fragments) => {
    const err = appErrorOf(() => validateModel(body));
    expect(err.code).toBe(code);
    for (const f of fragments) expect(err.message).toContain(f);
  });
});

describe('validateModel accepts and normalises', () => {
  it('snake_case rewrite keys, omitted relations/metadata, unknown fields', () => {
    const out = validateModel({
      schema_version: '1.1',
      extra: true,
      type_definitions: [
        { type: 'user' },
        {
          type: 'doc',
          relations: {
            owner: { this: {} },
            viewer: {
              union: {
                child: [
                  { computed_userset: { relation: 'owner' } },
                  { tuple_to_userset: { tupleset: { relation: 'parent' }, computed_userset: { relation: 'viewer' } } },
                ],
              },
            },
            parent: { this: {} },
          },
          metadata: {
            relations: {
              owner: { directly_related_user_types: [{ type: 'user' }] },
              parent: { directly_related_user_types: [{ type: 'doc' }] },
            },
          },
        },
      ],
    });
    expect(out.type_definitions[0]).toEqual({ type: 'user', relations: {} });
    expect(out.type_definitions[1]?.relations?.viewer).toEqual({
      union: {
        child: [
          { computedUserset: { relation: 'owner' } },
          { tupleToUserset: { tupleset: { relation: 'parent' }, computedUserset: { relation: 'viewer' } } },
        ],
      },
    });
    expect(out).not.toHaveProperty('extra');
  });

  it.each([
    [
      'recursion through a userset restriction',
      'type user\ntype group\n  relations\n    define member: [user, group#member]\n',
    ],
    [
      'recursion through from',
      'type user\ntype folder\n  relations\n    define parent: [folder]\n    define viewer: [user] or viewer from parent\n',
    ],
    [
      'same operand twice (tooling-only rule)',
      'type user\ntype doc\n  relations\n    define editor: [user]\n    define viewer: editor and editor\n',
    ],
    [
      'entry via a sibling',
      'type user\ntype doc\n  relations\n    define editor: [user]\n    define viewer: [doc#viewer] or editor\n',
    ],
    [
      'conditions with every parameter type',
      'type user\ntype doc\n  relations\n    define viewer: [user with c]\ncondition c(a: bool, b: string, i: int, u: uint, d: double, du: duration, t: timestamp, ip: ipaddress, m: map<int>, l: list<string>) {\n  a && b != "" && i > 0 && u > 0u && d > 0.0 && du > duration("1s") && t > timestamp("2020-01-01T00:00:00Z") && ip.in_cidr("10.0.0.0/8") && m["k"] == 1 && "x" in l\n}\n',
    ],
  ])('%s', (_name, body) => {
    expect(() => validateModel(dslToModel(dsl(body)))).not.toThrow();
  });
});

describe('errors of models written as DSL', () => {
  it('a malformed DSL is a 400 validation_error with 1-based line and column, type and relation', () => {
    const err = appErrorOf(() => dslToModel(dsl('type user\ntype doc\n  relations\n    define viewer: [user] or\n')));
    expect(err.code).toBe('validation_error');
    expect(err.status).toBe(400);
    expect(err.message).toMatch(/^syntax error at line 6, column 29 \(type 'doc', relation 'viewer'\): /);
  });

  it('a semantic error of a DSL model carries the DSL position of the offending type', () => {
    const err = appErrorOf(() =>
      validateDslModel(dsl('type user\ntype doc\n  relations\n    define viewer: [team]\n')),
    );
    expect(err.code).toBe('type_not_found');
    expect(err.message).toContain("relation 'viewer' in type 'doc'");
    expect(err.message).toContain('(line 6, column 21)');
  });

  it('a semantic error without a flagged token carries the DSL position of the relation', () => {
    const err = appErrorOf(() =>
      validateDslModel(dsl('type user\ntype doc\n  relations\n    define a: b\n    define b: a\n')),
    );
    expect(err.message).toBe(
      "the definition of relation 'a' in type 'doc' is invalid: invalid relation: potential loop (line 6, column 12)",
    );
  });
});

// Its time is the `blowup` benchmark (bench/scenarios/blowup.ts); an exponential regression
// would hit the test timeout here.
describe('validation cost', () => {
  it('a dense graph of relations without entrypoints is rejected (no path explosion)', () => {
    const rels = Array.from(
      { length: 60 },
      (_, i) => `    define r${i}: [doc#r${(i + 1) % 60}] or r${(i + 1) % 60} or r${(i + 2) % 60}`,
    ).join('\n');
    const err = appErrorOf(() => validateModel(dslToModel(dsl(`type user\ntype doc\n  relations\n${rels}\n`))));
    expect(err.message).toContain("relation 'r0' in type 'doc' is invalid: invalid relation: potential loop");
  });
});
