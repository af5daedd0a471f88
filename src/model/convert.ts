// Condition parameter types: decoding `ConditionParamTypeRef` JSON, the CEL type each maps to, and
// the conversion of a JSON context value to its CEL runtime value (docs/reference/semantics.md §5.9.4).
// Example: `{type_name: TYPE_NAME_LIST, generic_types: [{type_name: TYPE_NAME_IPADDRESS}]}` → list<ipaddress>.

import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import type { ConditionParamTypeRefJson, JsonValue } from '../domain/types.js';
import { parseIPAddress } from './ipaddr.js';
import type { ParamType } from './types.js';

type ScalarKind = 'any' | 'bool' | 'string' | 'int' | 'uint' | 'double' | 'duration' | 'timestamp' | 'ipaddress';

const SCALARS: Record<string, ScalarKind> = {
  TYPE_NAME_ANY: 'any',
  TYPE_NAME_BOOL: 'bool',
  TYPE_NAME_STRING: 'string',
  TYPE_NAME_INT: 'int',
  TYPE_NAME_UINT: 'uint',
  TYPE_NAME_DOUBLE: 'double',
  TYPE_NAME_DURATION: 'duration',
  TYPE_NAME_TIMESTAMP: 'timestamp',
  TYPE_NAME_IPADDRESS: 'ipaddress',
};

/** Decode a parameter type; a string is the reason it is invalid. */
export function decodeParamType(ref: ConditionParamTypeRefJson | undefined): ParamType | string {
  const name = ref?.type_name;
  const generics = ref?.generic_types ?? [];
  const scalar = name === undefined ? undefined : SCALARS[name];
  if (scalar) return generics.length === 0 ? { kind: scalar } : `type '${name}' takes no generic types`;
  if (name === 'TYPE_NAME_MAP' || name === 'TYPE_NAME_LIST') {
    if (generics.length !== 1) return `type '${name}' requires exactly one generic type`;
    const of = decodeParamType(generics[0]);
    return typeof of === 'string' ? of : { kind: name === 'TYPE_NAME_MAP' ? 'map' : 'list', of };
  }
  return `unknown parameter type '${String(name)}'`;
}

/** The CEL type declaration of a parameter type (the `ipaddress` custom type is registered by conditions.ts). */
export function celTypeOf(t: ParamType): string {
  switch (t.kind) {
    case 'any':
      return 'dyn';
    case 'duration':
      return 'google.protobuf.Duration';
    case 'timestamp':
      return 'google.protobuf.Timestamp';
    case 'map':
      return `map<string, ${celTypeOf(t.of)}>`;
    case 'list':
      return `list<${celTypeOf(t.of)}>`;
    default:
      return t.kind;
  }
}

type Converted = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string };

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

const ok = (value: unknown): Converted => ({ ok: true, value });
const bad = (reason: string): Converted => ({ ok: false, reason });

/** The Go type name the reference prints for a decoded JSON value. */
function goType(v: JsonValue): string {
  if (v === null) return '<nil>';
  if (Array.isArray(v)) return '[]interface {}';
  if (typeof v === 'object') return 'map[string]interface {}';
  return typeof v === 'number' ? 'float64' : typeof v === 'boolean' ? 'bool' : 'string';
}

const FLOAT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * int/uint: a JSON number or a decimal numeric string whose value is integral (`"42"`, `"4.2e1"`);
 * integer strings are read exactly (beyond 2^53), and the result must fit the 64-bit range.
 */
function toBigInt(v: JsonValue, min: bigint, max: bigint, what: 'int' | 'uint'): Converted {
  const goName = what === 'int' ? 'int64' : 'uint64';
  let n: bigint;
  if (typeof v === 'string' && /^[+-]?\d+$/.test(v)) n = BigInt(v);
  else {
    const f = typeof v === 'number' ? v : typeof v === 'string' && FLOAT.test(v) ? Number(v) : undefined;
    if (f === undefined) {
      return bad(
        typeof v === 'string'
          ? `expected a ${goName} value, but found invalid string value '${v}'`
          : `expected type value '${goName}', but found '${goType(v)}'`,
      );
    }
    if (!Number.isInteger(f))
      return bad(`expected ${what === 'int' ? 'an int' : 'a uint'} value, but found numeric value '${String(f)}'`);
    n = BigInt(f);
  }
  if (what === 'uint' && n < 0n) return bad(`expected a uint value, but found int64 value '${n}'`);
  return n < min || n > max ? bad(`value '${n}' is out of range for ${what}`) : ok(n);
}

function toDouble(v: JsonValue): Converted {
  const n = typeof v === 'number' ? v : typeof v === 'string' && FLOAT.test(v) ? Number(v) : undefined;
  if (n === undefined) {
    return bad(
      typeof v === 'string'
        ? `expected a float64 value, but found invalid string value '${v}'`
        : `expected type value 'float64', but found '${goType(v)}'`,
    );
  }
  return Number.isFinite(n) ? ok(n) : bad(`value '${String(v)}' is out of range for double`);
}

const UNIT_NANOS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n,
  μs: 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** Go `time.ParseDuration` syntax → total nanoseconds, or undefined. */
export function parseGoDuration(s: string): bigint | undefined {
  const m = /^([+-]?)(.*)$/s.exec(s);
  const body = m?.[2] ?? '';
  if (body === '0') return 0n;
  if (body === '') return undefined;
  // U+00B5 and U+03BC (micro sign, Greek mu), the second escaped: one character past Latin-1
  // anywhere in the HTTP threads' one-file bundle makes V8 keep all of its source (≈ 380k
  // characters) at two bytes per character, in every thread.
  const part = /(\d*)(?:\.(\d*))?(ns|us|µs|\u03bcs|ms|s|m|h)/y;
  let total = 0n;
  let at = 0;
  while (at < body.length) {
    part.lastIndex = at;
    const p = part.exec(body);
    if (!p || (p[1] === '' && (p[2] ?? '') === '')) return undefined;
    const unit = UNIT_NANOS[p[3] ?? ''] ?? 0n;
    const frac = p[2] ?? '';
    total += BigInt(p[1] || '0') * unit + (frac ? (BigInt(frac) * unit) / 10n ** BigInt(frac.length) : 0n);
    at = part.lastIndex;
  }
  if (total > INT64_MAX) return undefined;
  return m?.[1] === '-' ? -total : total;
}

function toDuration(v: JsonValue): Converted {
  const nanos = typeof v === 'string' ? parseGoDuration(v) : undefined;
  if (typeof v !== 'string') return bad(`expected a duration string, but found: ${goType(v)} '${String(v)}'`);
  if (nanos === undefined) return bad(`expected a valid duration string, but found: '${v}'`);
  return ok(new Duration(nanos / 1_000_000_000n, Number(nanos % 1_000_000_000n)));
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function toTimestamp(v: JsonValue): Converted {
  const m = typeof v === 'string' ? RFC3339.exec(v) : null;
  const [y, mo, d, h, mi, s] = [m?.[1], m?.[2], m?.[3], m?.[4], m?.[5], m?.[6]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const date = m ? new Date(v as string) : undefined;
  // Date.parse rolls 2023-02-30 over to March; Go's time.Parse rejects it, so check the day too.
  const daysInMonth = new Date(Date.UTC(y, mo, 0)).getUTCDate();
  const valid =
    date &&
    !Number.isNaN(date.getTime()) &&
    mo >= 1 &&
    mo <= 12 &&
    d >= 1 &&
    d <= daysInMonth &&
    h < 24 &&
    mi < 60 &&
    s < 60;
  return valid ? ok(date) : bad(`expected RFC 3339 formatted timestamp string, but found '${String(v)}'`);
}

/** Convert one JSON value to the CEL runtime value of `t`. `null` is never valid. */
export function convertValue(t: ParamType, v: JsonValue): Converted {
  if (t.kind === 'any') return ok(v);
  if (v === null) return bad(`expected a ${t.kind} value, but found null`);
  switch (t.kind) {
    case 'bool':
      return typeof v === 'boolean' ? ok(v) : bad(`expected type value 'bool', but found '${goType(v)}'`);
    case 'string':
      return typeof v === 'string' ? ok(v) : bad(`expected type value 'string', but found '${goType(v)}'`);
    case 'int':
      return toBigInt(v, INT64_MIN, INT64_MAX, 'int');
    case 'uint': {
      const r = toBigInt(v, 0n, UINT64_MAX, 'uint');
      return r.ok ? ok(new UnsignedInt(r.value as bigint)) : r;
    }
    case 'double':
      return toDouble(v);
    case 'duration':
      return toDuration(v);
    case 'timestamp':
      return toTimestamp(v);
    case 'ipaddress': {
      const ip = typeof v === 'string' ? parseIPAddress(v) : undefined;
      if (typeof v !== 'string') return bad(`expected an ipaddress string, but found: ${goType(v)} '${String(v)}'`);
      return ip ? ok(ip) : bad(`expected a well-formed IP address, but found: '${v}'`);
    }
    case 'list':
      return convertList(t.of, v);
    case 'map':
      return convertMap(t.of, v);
  }
}

function convertList(of: ParamType, v: JsonValue): Converted {
  if (!Array.isArray(v)) return bad(`expected a list, but found '${goType(v)}'`);
  const out: unknown[] = [];
  for (const item of v) {
    const c = convertValue(of, item);
    if (!c.ok) return c;
    out.push(c.value);
  }
  return ok(out);
}

function convertMap(of: ParamType, v: JsonValue): Converted {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return bad(`expected a map, but found '${goType(v)}'`);
  const out = new Map<string, unknown>();
  for (const [k, item] of Object.entries(v)) {
    const c = convertValue(of, item);
    if (!c.ok) return c;
    out.set(k, c.value);
  }
  return ok(out);
}
