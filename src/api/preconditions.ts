// The `preconditions` of a guarded Write (docs/changing-models.md, "Guarded writes"): parsed at the
// edge into the engine's WritePrecondition list. Shapes, each one key plus `expect` for a check:
//   {"check": {"tuple_key": {...}, "contextual_tuples": {"tuple_keys": [...]}, "context": {...}}, "expect": true}
//   {"tuple_exists": {"object": "doc:1", "relation": "owner", "user": "user:anne"}}
//   {"tuple_absent": {"object": "doc:1", "relation": "owner", "user": "user:bob"}}
// Anything else, or more than MAX_PRECONDITIONS, is 400 validation_error.

import type { WritePrecondition } from '../engine/contract.js';
import { AppError } from '../errors.js';
import { checkKey, contextualTuples } from './tuple-key-parsers.js';
import { isObj, REASON, structValue, typeError, violation, type Obj } from './validate.js';

/** At most this many preconditions per Write (each is evaluated while the store's writes wait). */
const MAX_PRECONDITIONS = 10;

const SHAPES = ['check', 'tuple_exists', 'tuple_absent'] as const;

/** `body.preconditions`: absent or null → undefined (an ordinary Write). */
export function preconditions(body: Obj): readonly WritePrecondition[] | undefined {
  const v = body['preconditions'];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v)) throw typeError('preconditions', 'list', v);
  if (v.length > MAX_PRECONDITIONS) throw violation('WriteRequest', 'Preconditions', REASON.atMost(MAX_PRECONDITIONS));
  return v.map((item: unknown, i) => precondition(item, i));
}

function precondition(v: unknown, i: number): WritePrecondition {
  if (!isObj(v)) throw typeError(`preconditions[${i}]`, 'message', v);
  const shapes = SHAPES.filter((s) => v[s] !== undefined && v[s] !== null);
  const extra = Object.keys(v).filter((k) => k !== 'expect' && !(SHAPES as readonly string[]).includes(k));
  const shape = shapes[0];
  if (shapes.length !== 1 || shape === undefined || extra.length > 0)
    throw invalid(
      i,
      `exactly one of check, tuple_exists, tuple_absent${extra.length ? ` (unknown: ${extra.join(', ')})` : ''}`,
    );
  const inner = v[shape];
  if (!isObj(inner)) throw typeError(`preconditions[${i}].${shape}`, 'message', inner);
  if (shape !== 'check') {
    if (v['expect'] !== undefined) throw invalid(i, `expect belongs to a check precondition only`);
    return { kind: shape, tuple: checkKey({ tuple_key: inner }, 'WritePreconditionTuple') };
  }
  const expect = v['expect'];
  if (typeof expect !== 'boolean') throw invalid(i, 'a check precondition needs expect: true or false');
  return {
    kind: 'check',
    tupleKey: checkKey(inner, 'WritePreconditionCheck'),
    contextualTuples: contextualTuples(inner),
    context: structValue(inner['context'], 'context'),
    expect,
  };
}

function invalid(i: number, what: string): AppError {
  return new AppError('validation_error', `invalid WriteRequest.Preconditions[${i}]: ${what}`);
}
