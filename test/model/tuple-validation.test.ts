// Tuple validation (docs/reference/semantics.md §4.2–§4.5): every cause of §4.3, the write-only rules, read-time
// validity of stale tuples, and the per-API codes of a query's own tuple key (appendix A.3).
import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/errors.js';
import type { JsonObject, TupleKey } from '../../src/domain/types.js';
import { compileModel } from '../../src/model/compile.js';
import { dslToModel } from '../../src/model/dsl.js';
import {
  validateCheckTupleKey,
  validateQueryKey,
  validateUserFilter,
  type QueryApi,
} from '../../src/model/query-validation.js';
import { parseObject } from '../../src/domain/tuple.js';
import { AppError } from '../../src/errors.js';
import {
  BulkTupleValidator,
  findTupleProblem,
  isValidAtRead,
  validateTuple,
} from '../../src/model/tuple-validation.js';
import { validateModel } from '../../src/model/validate.js';
import { appErrorOf, dsl } from './helpers.js';

const model = compileModel({
  id: '01JTESTMODEL0000000000000A',
  ...validateModel(
    dslToModel(
      dsl(`type user
type employee
type group
  relations
    define member: [user, user:*, group#member]
type folder
  relations
    define viewer: [user]
type doc
  relations
    define parent: [folder]
    define owner: [user]
    define viewer: [user, user with in_net, group#member, user:* with in_net] or owner
    define editor: [user with in_net]
    define note: [user with big]
    define can_view: viewer from parent
condition in_net(ip: ipaddress) {
  ip.in_cidr("10.0.0.0/8")
}
condition big(s: string) {
  s != ""
}
`),
    ),
  ),
});

const key = (text: string, condition?: string, context?: JsonObject): TupleKey => {
  const [left = '', user = ''] = text.split('@');
  const hash = left.indexOf('#');
  return {
    object: left.slice(0, hash),
    relation: left.slice(hash + 1),
    user,
    condition: condition ? { name: condition, context } : undefined,
  };
};

/** [tuple, condition, context, expected cause (undefined = valid), is a condition problem] */
const causes: [string, string | undefined, JsonObject | undefined, string | undefined, boolean][] = [
  ['doc:1#owner@user:anne', undefined, undefined, undefined, false],
  ['doc:1#owner@anne', undefined, undefined, "the 'user' field must be an object", false],
  ['doc:1#owner@user:anne:x', undefined, undefined, "the 'user' field is malformed", false],
  ['doc:1#owner@team:1', undefined, undefined, "type 'team' not found", false],
  ['doc:1#viewer@group:eng#owner', undefined, undefined, "relation 'group#owner' not found", false],
  [
    'doc:1#viewer@group:*#member',
    undefined,
    undefined,
    "the 'user' field cannot reference a typed wildcard in a userset value",
    false,
  ],
  ['doc:1#vi ewer@user:anne', undefined, undefined, "the 'relation' field is malformed", false],
  ['doc#owner@user:anne', undefined, undefined, "invalid 'object' field format", false],
  ['doc:*#owner@user:anne', undefined, undefined, 'cannot reference a typed wildcard', false],
  ['dossier:1#owner@user:anne', undefined, undefined, "type 'dossier' not found", false],
  ['doc:1#nope@user:anne', undefined, undefined, "relation 'doc#nope' not found", false],
  [
    'doc:1#parent@folder:*',
    undefined,
    undefined,
    "unexpected wildcard relationship with tupleset relation 'doc#parent'",
    false,
  ],
  [
    'doc:1#parent@folder:x#viewer',
    undefined,
    undefined,
    "unexpected user 'folder:x#viewer' with tupleset relation 'doc#parent'",
    false,
  ],
  [
    'doc:1#owner@user:*',
    undefined,
    undefined,
    "the typed wildcard 'user:*' is not an allowed type restriction for 'doc#owner'",
    false,
  ],
  [
    'doc:1#owner@employee:1',
    undefined,
    undefined,
    "type 'employee' is not an allowed type restriction for 'doc#owner'",
    false,
  ],
  [
    'doc:1#owner@group:eng#member',
    undefined,
    undefined,
    "'group#member' is not an allowed type restriction for 'doc#owner'",
    false,
  ],
  ['doc:1#editor@user:anne', undefined, undefined, 'condition is missing', true],
  ['doc:1#viewer@user:*', undefined, undefined, 'condition is missing', true],
  ['doc:1#owner@user:anne', 'nope', undefined, 'undefined condition', true],
  ['doc:1#owner@user:anne', 'in_net', undefined, 'invalid condition for type restriction', true],
  ['doc:1#editor@user:anne', 'in_net', { bad: 1 }, 'found invalid context parameter: bad', true],
  ['doc:1#editor@user:anne', 'in_net', { ip: 'not-an-ip' }, "failed to convert context parameter 'ip'", true],
  ['doc:1#editor@user:anne', 'in_net', { ip: '10.0.0.1' }, undefined, false],
  ['doc:1#viewer@user:*', 'in_net', undefined, undefined, false],
];

describe('validateTuple: checks 1–7 (§4.2/§4.3)', () => {
  it.each(causes)('%s with %s %j', (text, condition, context, cause, conditionProblem) => {
    const t = key(text, condition, context);
    const problem = findTupleProblem(model, t, 'contextual');
    if (cause === undefined) return expect(problem).toBeUndefined();
    expect(problem?.message).toMatch(/^Invalid tuple '.*'\. Reason: /);
    expect(problem?.message).toContain(cause);
    expect(problem?.message).toContain(`'${text}${condition && conditionProblem ? ` (condition ${condition})` : ''}'`);
    expect(problem?.conditionProblem).toBe(conditionProblem);
  });

  it('write mode rejects the self-defining tuple, contextual mode does not', () => {
    const t = key('group:eng#member@group:eng#member');
    expect(validateTuple(model, t, 'write')).toBe(
      "Invalid tuple 'group:eng#member@group:eng#member'. Reason: cannot write a tuple that is implicit",
    );
    expect(validateTuple(model, t, 'contextual')).toBeUndefined();
  });

  it('write mode limits stored condition context to 32 KiB', () => {
    const t = key('doc:1#note@user:anne', 'big', { s: 'x'.repeat(40_000) });
    expect(findTupleProblem(model, t, 'write')).toEqual({
      conditionProblem: false,
      message:
        "Invalid tuple 'doc:1#note@user:anne'. Reason: condition context size limit exceeded: 40008 bytes exceeds 32768 bytes",
    });
    expect(findTupleProblem(model, t, 'contextual')).toBeUndefined();
  });
});

describe('isValidAtRead: stale tuples are skipped (§4.5)', () => {
  it.each([
    ['doc:1#viewer@user:anne', undefined, true],
    ['doc:1#viewer@user:anne', 'in_net', true],
    ['doc:1#viewer@group:eng#member', undefined, true],
    ['doc:1#viewer@user:*', 'in_net', true],
    ['doc:1#parent@folder:f', undefined, true],
    ['doc:1#gone@user:anne', undefined, false],
    ['dossier:1#viewer@user:anne', undefined, false],
    ['doc:1#owner@employee:e', undefined, false],
    ['doc:1#owner@user:*', undefined, false],
    ['doc:1#viewer@user:*', undefined, false],
    ['doc:1#viewer@user:anne', 'old_name', false],
    ['doc:1#owner@user:anne', 'in_net', false],
    ['doc:1#editor@user:anne', undefined, false],
    ['doc:1#parent@folder:f#viewer', undefined, false],
    ['doc:1#viewer@group:eng#admin', undefined, false],
    ['doc:1#viewer@groups:eng#member', undefined, false],
  ] as [string, string | undefined, boolean][])('%s (condition %s) → %s', (text, condition, expected) => {
    const t = key(text);
    expect(isValidAtRead(model, t.object, t.relation, t.user, condition)).toBe(expected);
  });
});

describe('query tuple key codes per API (appendix A.3)', () => {
  it.each([
    ['check', 'folder2:1', 'viewer', 'user:anne', 'validation_error'],
    ['check', 'doc:1', 'nope', 'user:anne', 'validation_error'],
    ['check', 'doc:1', 'viewer', 'a:b:c', 'validation_error'],
    ['check', 'doc:1', 'viewer', 'team:1', 'validation_error'],
    ['expand', 'folder2:1', 'viewer', undefined, 'validation_error'],
    ['listObjects', 'folder2', 'viewer', 'user:anne', 'type_not_found'],
    ['listObjects', 'doc', 'nope', 'user:anne', 'relation_not_found'],
    ['listObjects', 'doc', 'viewer', 'team:1', 'validation_error'],
    ['listUsers', 'folder2:1', 'viewer', undefined, 'type_not_found'],
    ['listUsers', 'doc:1', 'nope', undefined, 'relation_not_found'],
  ] as [QueryApi, string, string, string | undefined, ErrorCode][])(
    '%s %s#%s@%s → %s',
    (api, object, relation, user, code) => {
      expect(appErrorOf(() => validateQueryKey(model, { object, relation, user }, api)).code).toBe(code);
    },
  );

  it('accepts a valid key and checks ListUsers filters', () => {
    expect(() =>
      validateQueryKey(model, { object: 'doc:1', relation: 'viewer', user: 'group:eng#member' }, 'check'),
    ).not.toThrow();
    expect(appErrorOf(() => validateUserFilter(model, { type: 'team' })).code).toBe('type_not_found');
    expect(appErrorOf(() => validateUserFilter(model, { type: 'group', relation: 'owner' })).code).toBe(
      'relation_not_found',
    );
    expect(() => validateUserFilter(model, { type: 'group', relation: 'member' })).not.toThrow();
  });
});

describe('validateCheckTupleKey: the one-scan proof of a valid key keeps every error', () => {
  /** The rule before the scan: a wildcard object, then validateQueryKey's order (user, object, relation). */
  const byParsers = (k: { object: string; relation: string; user: string }): void => {
    if (parseObject(k.object)?.id === '*')
      throw new AppError(
        'validation_error',
        `invalid 'object' field: the 'object' field is malformed or references a typed wildcard`,
      );
    validateQueryKey(model, k, 'check');
  };
  const outcome = (fn: () => unknown): string => {
    try {
      fn();
      return 'valid';
    } catch (err) {
      return err instanceof AppError ? `${err.code}: ${err.message}` : String(err);
    }
  };

  it('gives the same answer, code and message on every combination of objects, relations and users', () => {
    const objects = ['doc:1', 'doc:*', 'doc:a*', 'folder:1', 'team:1', 'doc', 'doc:1#x', ':1', 'doc:', 'doc:a b'];
    const relations = ['viewer', 'member', 'nope', 'parent'];
    const users = [
      'user:anne',
      'user:*',
      'user:a*b',
      'group:eng#member',
      'group:eng#nope',
      'group:e*g#member',
      'group:*#member',
      'group:eng#member#x',
      'group:eng#a:b',
      'group:eng#',
      'team:1',
      'anne',
      'user:anne:x',
      'user:',
      ':anne',
      'user:an ne',
      'user:\u00a0',
      'employee:1',
    ];
    let compared = 0;
    for (const object of objects)
      for (const relation of relations)
        for (const user of users) {
          const k = { object, relation, user };
          expect(
            outcome(() => validateCheckTupleKey(model, k)),
            `${object}#${relation}@${user}`,
          ).toBe(outcome(() => byParsers(k)));
          compared++;
        }
    expect(compared).toBe(objects.length * relations.length * users.length);
  });

  it("a type seen in one model's key is looked up again in another model", () => {
    const other = compileModel({
      id: '01JTESTMODEL0000000000000B',
      ...validateModel(dslToModel(dsl('type user\ntype doc\n  relations\n    define viewer: [user]\n'))),
    });
    const k = { object: 'folder:1', relation: 'viewer', user: 'group:eng#member' };
    expect(outcome(() => validateCheckTupleKey(model, k))).toBe('valid');
    expect(outcome(() => validateCheckTupleKey(other, k))).toBe("validation_error: type 'group' not found");
    expect(outcome(() => validateCheckTupleKey(other, { ...k, user: 'user:anne' }))).toBe(
      "validation_error: type 'folder' not found",
    );
    expect(outcome(() => validateCheckTupleKey(model, k))).toBe('valid');
  });

  it('doc:1#viewer@group:eng#member → its parts for the walker', () => {
    expect(validateCheckTupleKey(model, { object: 'doc:1', relation: 'viewer', user: 'group:eng#member' })).toEqual({
      objectType: 'doc',
      userBase: 'group:eng',
      userType: 'group',
      userRelation: 'member',
      userWildcard: false,
    });
  });
});

describe('BulkTupleValidator (an import chunk)', () => {
  it('gives findTupleProblem’s answer for every tuple, shapes seen before or not', () => {
    const types = ['doc', 'group', 'folder', 'user', 'nope', 'do c', ''];
    const relations = ['viewer', 'member', 'parent', 'owner', 'editor', 'can_view', 'nope', 'vi:ewer', 'a\u0000b'];
    const ids = ['1', '2', '*', 'a*b', '', ' x', 'x\u0000', 'é', 'a#b', 'a:b'];
    const userRelations = ['', '#member', '#viewer', '#nope', '#', '#a:b', '#member#x'];
    let seed = 7;
    const pick = <T>(xs: readonly T[]): T => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return xs[seed % xs.length] as T;
    };
    const validator = new BulkTupleValidator(model);
    let valid = 0;
    let invalid = 0;
    const mismatches: string[] = [];
    for (let i = 0; i < 30_000; i++) {
      // Mostly well-formed tuples of a few shapes, so shapes repeat and are answered from the cache.
      const plain = i % 3 !== 0;
      // group#member takes group#member: `group:1#member@group:1#member` is its own userset.
      const grouped = plain && i % 5 === 0;
      const object = grouped ? `group:${i % 3}` : plain ? `doc:${i % 7}` : `${pick(types)}:${pick(ids)}`;
      const relation = grouped ? 'member' : plain ? pick(['viewer', 'owner', 'parent']) : pick(relations);
      const user = grouped
        ? pick(['group:0#member', 'group:1#member', 'group:2#member', 'user:u'])
        : plain
          ? pick(['user:u', 'user:*', 'group:g#member', 'folder:f', `doc:${i % 7}#viewer`])
          : `${pick(types)}:${pick(ids)}${pick(userRelations)}`;
      const t: TupleKey =
        i % 11 === 0 ? { object, relation, user, condition: { name: 'in_net' } } : { object, relation, user };
      const want = findTupleProblem(model, t, 'write');
      const got = validator.problem(t);
      if (got?.message !== want?.message || got?.conditionProblem !== want?.conditionProblem)
        mismatches.push(`${object}#${relation}@${user}: ${got?.message} / ${want?.message}`);
      if (want === undefined) valid++;
      else invalid++;
    }
    expect(mismatches).toEqual([]);
    // Both kinds occur in numbers.
    expect(valid).toBeGreaterThan(4_000);
    expect(invalid).toBeGreaterThan(4_000);
  });
});
