// Read-time validity of a stored or contextual tuple against the query's model (semantics.md
// §4.5): rules 5-7 of §4.2 plus "the relation still exists". Invalid tuples are skipped silently.
//
// Example: after `viewer: [user, employee]` becomes `viewer: [user]`, the stored tuple
// `document:1#viewer@employee:x` is invalid (and ignored) until `employee` is allowed again.

import { parseObject, parseUser } from '../../domain/tuple.js';
import type { TupleEntry } from '../../index/types.js';
import type { CompiledModel, DirectType } from '../../model/types.js';

/** True when `t` fits the model's restrictions for `object#relation` as of this model. */
export function isValidAtReadTime(model: CompiledModel, t: TupleEntry): boolean {
  const obj = parseObject(t.object);
  if (!obj || obj.id === '*') return false;
  const rel = model.types.get(obj.type)?.relations.get(t.relation);
  if (!rel) return false;
  const user = parseUser(t.user);
  if (!user) return false;
  const userType = model.types.get(user.type);
  if (!userType) return false;
  if (user.kind === 'userset' && !userType.relations.has(user.relation)) return false;
  if (rel.isTupleset && user.kind !== 'object') return false;
  const matching = rel.directTypes.filter((d) => formMatches(d, user.kind, user.type, user.kind === 'userset' ? user.relation : undefined));
  if (matching.length === 0) return false;
  const condName = t.condition?.name;
  if (condName === undefined || condName === '') return matching.some((d) => d.condition === undefined);
  if (!model.conditions.has(condName)) return false;
  // The reference compares the restriction's user type only (not its form) for conditions.
  return rel.directTypes.some((d) => d.type === user.type && d.condition === condName);
}

function formMatches(d: DirectType, kind: 'object' | 'userset' | 'wildcard', type: string, relation: string | undefined): boolean {
  if (d.type !== type) return false;
  if (kind === 'wildcard') return d.wildcard;
  if (kind === 'userset') return !d.wildcard && d.relation === relation;
  return !d.wildcard && d.relation === undefined;
}
