// Conditions: JSON → CEL conversions of every parameter type (docs/reference/semantics.md §5.9.4), the
// missing-parameter rule, context precedence, runtime errors, and write-time context checks.
import { describe, expect, it } from 'vitest';
import type { ConditionParamTypeRefJson, ConditionTypeName, JsonObject, JsonValue } from '../../src/domain/types.js';
import { lastEvaluationCost } from '../../src/model/cel-cost.js';
import { compileCondition } from '../../src/model/conditions.js';
import { parseGoDuration } from '../../src/model/convert.js';
import { appErrorOf } from './helpers.js';

const T = (type_name: ConditionTypeName, generic?: ConditionTypeName): ConditionParamTypeRefJson =>
  generic ? { type_name, generic_types: [{ type_name: generic }] } : { type_name };

/** A one-parameter condition `x` of the given type with the given expression. */
const cond = (ref: ConditionParamTypeRefJson, expression: string) =>
  compileCondition('c', { name: 'c', expression, parameters: { x: ref } });

/** [type, expression over x, JSON value, expected result or 'error'] */
const conversions: [string, ConditionParamTypeRefJson, string, JsonValue, boolean | 'error'][] = [
  ['bool true', T('TYPE_NAME_BOOL'), 'x', true, true],
  ['bool from string rejected', T('TYPE_NAME_BOOL'), 'x', 'true', 'error'],
  ['string', T('TYPE_NAME_STRING'), 'x == "a"', 'a', true],
  ['string from number rejected', T('TYPE_NAME_STRING'), 'x == "1"', 1, 'error'],
  ['int from integral number', T('TYPE_NAME_INT'), 'x == 42', 42, true],
  ['int from numeric string', T('TYPE_NAME_INT'), 'x == 42', '42', true],
  ['int from big numeric string', T('TYPE_NAME_INT'), 'x == 9007199254740993', '9007199254740993', true],
  ['int from 10.5 rejected', T('TYPE_NAME_INT'), 'x == 10', 10.5, 'error'],
  ['int from an integral decimal string', T('TYPE_NAME_INT'), 'x == 42', '4.2e1', true],
  ['int from a non-numeric string rejected', T('TYPE_NAME_INT'), 'x == 42', 'forty-two', 'error'],
  ['int beyond int64 rejected', T('TYPE_NAME_INT'), 'x > 0', '9223372036854775808', 'error'],
  ['uint from number', T('TYPE_NAME_UINT'), 'x == 7u', 7, true],
  ['uint negative rejected', T('TYPE_NAME_UINT'), 'x == 7u', -7, 'error'],
  ['uint negative string rejected', T('TYPE_NAME_UINT'), 'x == 7u', '-7', 'error'],
  ['double from number', T('TYPE_NAME_DOUBLE'), 'x < 1.5', 1.25, true],
  ['double from numeric string', T('TYPE_NAME_DOUBLE'), 'x == 2.5', '2.5', true],
  ['double out of range rejected', T('TYPE_NAME_DOUBLE'), 'x > 0.0', '1.8e309', 'error'],
  ['double null rejected', T('TYPE_NAME_DOUBLE'), 'x > 0.0', null, 'error'],
  ['duration Go syntax', T('TYPE_NAME_DURATION'), 'x == duration("2h45m")', '2h45m', true],
  ['duration fractional hours', T('TYPE_NAME_DURATION'), 'x == duration("90m")', '1.5h', true],
  ['duration ISO-8601 rejected', T('TYPE_NAME_DURATION'), 'x > duration("1s")', 'PT1H', 'error'],
  ['duration day unit rejected', T('TYPE_NAME_DURATION'), 'x > duration("1s")', '1d', 'error'],
  [
    'timestamp RFC 3339',
    T('TYPE_NAME_TIMESTAMP'),
    'x > timestamp("2023-01-01T00:00:00Z")',
    '2023-10-11T10:00:00Z',
    true,
  ],
  [
    'timestamp with offset and fraction',
    T('TYPE_NAME_TIMESTAMP'),
    'x == timestamp("2023-10-11T08:00:00.5Z")',
    '2023-10-11T10:00:00.5+02:00',
    true,
  ],
  [
    'timestamp with nanoseconds',
    T('TYPE_NAME_TIMESTAMP'),
    'x > timestamp("2023-10-11T10:00:00Z")',
    '2023-10-11T10:00:00.123456789Z',
    true,
  ],
  [
    'timestamp on a day the month lacks rejected',
    T('TYPE_NAME_TIMESTAMP'),
    'x > timestamp("2023-01-01T00:00:00Z")',
    '2023-02-30T00:00:00Z',
    'error',
  ],
  [
    'timestamp without offset rejected',
    T('TYPE_NAME_TIMESTAMP'),
    'x > timestamp("2023-01-01T00:00:00Z")',
    '2023-10-11 10:00:00',
    'error',
  ],
  ['ipaddress in cidr', T('TYPE_NAME_IPADDRESS'), 'x.in_cidr("192.168.0.0/16")', '192.168.1.7', true],
  ['ipaddress outside cidr', T('TYPE_NAME_IPADDRESS'), 'x.in_cidr("10.0.0.0/8")', '192.168.1.7', false],
  ['ipv6 in cidr', T('TYPE_NAME_IPADDRESS'), 'x.in_cidr("2001:db8::/32")', '2001:db8::1', true],
  ['ipv4-mapped ipv6 normalised', T('TYPE_NAME_IPADDRESS'), 'x == ipaddress("10.1.2.3")', '::ffff:10.1.2.3', true],
  ['ipaddress with prefix rejected', T('TYPE_NAME_IPADDRESS'), 'x.in_cidr("10.0.0.0/8")', '10.0.0.1/32', 'error'],
  ['ipaddress leading zero rejected', T('TYPE_NAME_IPADDRESS'), 'x.in_cidr("10.0.0.0/8")', '010.0.0.1', 'error'],
  ['map of ints', T('TYPE_NAME_MAP', 'TYPE_NAME_INT'), 'x["a"] == 1', { a: 1 }, true],
  ['map with a bad value rejected', T('TYPE_NAME_MAP', 'TYPE_NAME_INT'), 'x["a"] == 1', { a: 'z' }, 'error'],
  ['list of strings', T('TYPE_NAME_LIST', 'TYPE_NAME_STRING'), '"b" in x', ['a', 'b'], true],
  [
    'list of ipaddress',
    T('TYPE_NAME_LIST', 'TYPE_NAME_IPADDRESS'),
    'x.exists(i, i.in_cidr("10.0.0.0/8"))',
    ['1.1.1.1', '10.0.0.1'],
    true,
  ],
  ['any keeps a JSON value', T('TYPE_NAME_ANY'), 'x == "v"', 'v', true],
];

describe('parameter conversions (§5.9.4)', () => {
  it.each(conversions)('%s', (_name, ref, expression, value, expected) => {
    const out = cond(ref, expression).evaluate(undefined, { x: value }, 'doc:1#viewer@user:anne');
    if (expected === 'error') {
      expect(out.ok).toBe(false);
      if (!out.ok)
        expect(out.message).toMatch(
          /^parameter type error on condition 'c': failed to convert context parameter 'x': /,
        );
    } else expect(out).toEqual({ ok: true, value: expected });
  });

  it.each([
    ['300ms', 300_000_000n],
    ['1.5h', 5_400_000_000_000n],
    ['-2m3s', -123_000_000_000n],
    ['1h0.5s', 3_600_500_000_000n],
    ['0', 0n],
    ['2µs', 2_000n], // U+00B5, the micro sign
    ['3\u03bcs', 3_000n], // U+03BC, Greek mu: Go accepts both
  ] as const)('Go duration %s', (text, nanos) => expect(parseGoDuration(text)).toBe(nanos));
  it.each(['', '1', 'h', '1d', '+', '.s', '1h2'])('Go duration %j is invalid', (text) =>
    expect(parseGoDuration(text)).toBeUndefined(),
  );
});

describe('evaluation', () => {
  const two = compileCondition('limits', {
    name: 'limits',
    expression: 'x < 100 || y < 50',
    parameters: { x: T('TYPE_NAME_INT'), y: T('TYPE_NAME_INT') },
  });

  it('every declared parameter must be present, even when CEL could short-circuit', () => {
    expect(two.evaluate(undefined, { x: 1 }, 'doc:1#viewer@user:anne')).toEqual({
      ok: false,
      message:
        "failed to evaluate relationship condition: 'limits' - tuple 'doc:1#viewer@user:anne' is missing context parameters '[y]'",
    });
    expect(two.evaluate(undefined, {}, 't')).toMatchObject({ ok: false, message: expect.stringContaining("'[x y]'") });
  });

  it.each([
    ['tuple context beats request context', { x: 500, y: 500 }, { x: 1, y: 1 }, false],
    ['request context fills what the tuple lacks', { x: 500 }, { x: 1, y: 1 }, true],
    ['keys that are not parameters are ignored', { x: 1, y: 1, other: 'z' }, { unrelated: [1] }, true],
  ] as [string, JsonObject, JsonObject, boolean][])('%s', (_name, tupleCtx, requestCtx, expected) => {
    expect(two.evaluate(tupleCtx, requestCtx, 't')).toEqual({ ok: true, value: expected });
  });

  it('a CEL runtime error is {ok:false}, never a throw', () => {
    const c = compileCondition('net', {
      name: 'net',
      expression: 'ip.in_cidr(cidr)',
      parameters: { ip: T('TYPE_NAME_IPADDRESS'), cidr: T('TYPE_NAME_STRING') },
    });
    expect(c.evaluate({ cidr: 'not-a-cidr' }, { ip: '10.0.0.1' }, 't')).toMatchObject({
      ok: false,
      message: expect.stringContaining(
        "failed to evaluate relationship condition 'net': failed to evaluate condition expression: invalid CIDR",
      ),
    });
    const m = cond(T('TYPE_NAME_MAP', 'TYPE_NAME_INT'), 'x["missing"] == 1');
    expect(m.evaluate(undefined, { x: { a: 1 } }, 't').ok).toBe(false);
  });

  it('a condition without parameters fails when context is given', () => {
    const c = compileCondition('none', { name: 'none', expression: 'true', parameters: {} });
    expect(c.evaluate(undefined, undefined, 't')).toEqual({ ok: true, value: true });
    expect(c.evaluate({ a: 1 }, undefined, 't')).toEqual({
      ok: false,
      message: "parameter type error on condition 'none': no parameters defined for the condition",
    });
  });
});

describe('write-time context checks (§4.2 rule 7)', () => {
  const c = cond(T('TYPE_NAME_INT'), 'x < 10');
  it.each([
    [{ x: 1 }, undefined],
    [{ x: '12' }, undefined],
    [{ y: 1 }, 'found invalid context parameter: y'],
    [{ x: 1.5 }, "parameter type error on condition 'c': failed to convert context parameter 'x'"],
    [{ y: 1, x: 'bad' }, "failed to convert context parameter 'x'"],
  ] as [JsonObject, string | undefined][])('%j → %s', (ctx, fragment) => {
    const got = c.checkContext(ctx);
    if (fragment === undefined) expect(got).toBeUndefined();
    else expect(got).toContain(fragment);
  });
});

describe('compile errors (R17)', () => {
  it.each([
    ['undeclared identifier', 'x < z', 'Unknown variable: z'],
    ['non-bool output', 'x', "but got 'int'"],
    ['syntax error', 'x <', "failed to compile expression on condition 'c': "],
  ])('%s', (_name, expression, fragment) => {
    const err = appErrorOf(() => cond(T('TYPE_NAME_INT'), expression));
    expect(err.code).toBe('validation_error');
    expect(err.message).toContain(fragment);
  });
});

describe('nullable types compare with null, as in CEL-Go', () => {
  it.each([
    [T('TYPE_NAME_DURATION'), 'x != null && x > duration("0s")', '1s'],
    [T('TYPE_NAME_TIMESTAMP'), 'x != null', '2020-01-01T00:00:00Z'],
    [T('TYPE_NAME_IPADDRESS'), 'x != null && x != ipaddress("192.0.0.1")', '10.0.0.1'],
  ] as [ConditionParamTypeRefJson, string, JsonValue][])('%j: %s', (ref, expression, value) => {
    expect(cond(ref, expression).evaluate(undefined, { x: value }, 't')).toEqual({ ok: true, value: true });
  });
});

describe('evaluation cost limit (100 units)', () => {
  const list = (n: number): number[] => Array.from({ length: n }, (_, i) => i);
  const exists = cond(T('TYPE_NAME_LIST', 'TYPE_NAME_INT'), 'x.exists(v, v == 1000)');

  // [elements, expected]: 1 (x) + 1 (exists) + n × 2 (v, ==): 49 elements cost exactly 100, 50 cost 102.
  const cases: [number, boolean | 'error'][] = [
    [1, false],
    [49, false],
    [50, 'error'],
    [10_000, 'error'],
  ];
  it.each(cases)('x.exists(v, v == 1000) over %i elements => %s', (n, want) => {
    const out = exists.evaluate({ x: list(n) }, undefined, 'doc:1#viewer@user:anne');
    if (want === 'error') {
      expect(out).toEqual({ ok: false, message: expect.stringContaining('cost limit exceeded') as unknown });
    } else {
      expect(out).toEqual({ ok: true, value: want });
      expect(lastEvaluationCost()).toBe(2 + 2 * n);
    }
  });

  it('the meter starts afresh for every evaluation', () => {
    for (let i = 0; i < 5; i++)
      expect(exists.evaluate({ x: list(40) }, undefined, 't')).toEqual({ ok: true, value: false });
  });

  it('short-circuiting spends only what is evaluated', () => {
    const c = cond(T('TYPE_NAME_LIST', 'TYPE_NAME_INT'), 'size(x) == 0 || x.all(v, v >= 0)');
    expect(c.evaluate({ x: [] }, undefined, 't')).toEqual({ ok: true, value: true });
    expect(c.evaluate({ x: list(200) }, undefined, 't')).toMatchObject({ ok: false });
  });
});
