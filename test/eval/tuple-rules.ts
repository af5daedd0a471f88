// Tuple validation for tests and the in-process conformance driver (semantics.md §4.2), used
// until src/model/tuple-validation.ts exists. Returns the first failing rule, classified as a
// plain tuple problem or a condition problem (the per-API codes of Appendix A.3 differ).

import { parseObject, parseUser } from '../../src/domain/tuple.js';
import type { TupleKey } from '../../src/domain/types.js';
import type { CompiledModel } from '../../src/model/types.js';

export interface TupleProblem {
  readonly kind: 'tuple' | 'condition';
  readonly reason: string;
}

const bad = (reason: string): TupleProblem => ({ kind: 'tuple', reason });

/** Rules 1-7 of §4.2 (strict validation, without the write-only rules). */
export function tupleProblem(m: CompiledModel, t: TupleKey): TupleProblem | undefined {
  const user = parseUser(t.user);
  if (!user) return bad('the user field is malformed');
  const utype = m.types.get(user.type);
  if (!utype) return bad(`type '${user.type}' not found`);
  if (user.kind === 'userset' && !utype.relations.has(user.relation)) return bad(`relation '${user.type}#${user.relation}' not found`);
  const obj = parseObject(t.object);
  if (!obj || obj.id === '*') return bad('invalid object');
  const otype = m.types.get(obj.type);
  if (!otype) return bad(`type '${obj.type}' not found`);
  const rel = otype.relations.get(t.relation);
  if (!rel) return bad(`relation '${obj.type}#${t.relation}' not found`);
  if (rel.isTupleset && user.kind !== 'object') return bad('unexpected wildcard or userset with tupleset relation');
  const forms = rel.directTypes.filter(
    (d) => d.type === user.type && (user.kind === 'wildcard' ? d.wildcard : !d.wildcard && d.relation === (user.kind === 'userset' ? user.relation : undefined)),
  );
  if (forms.length === 0) return bad(`type '${t.user}' is not an allowed type restriction for '${obj.type}#${t.relation}'`);
  const c = t.condition;
  if (!c?.name) return forms.some((d) => d.condition === undefined) ? undefined : { kind: 'condition', reason: 'condition is missing' };
  const cond = m.conditions.get(c.name);
  if (!cond) return { kind: 'condition', reason: `undefined condition ${c.name}` };
  if (!rel.directTypes.some((d) => d.type === user.type && d.condition === c.name)) return { kind: 'condition', reason: 'invalid condition for type restriction' };
  const ctxProblem = c.context ? cond.checkContext(c.context) : undefined;
  return ctxProblem ? { kind: 'condition', reason: ctxProblem } : undefined;
}
