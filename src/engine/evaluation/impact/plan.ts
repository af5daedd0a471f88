// Which relations an impact evaluates: every (type, relation) of either model, with its status,
// whether its answers can differ at all, and whether they depend on the request context.
//
// A relation's answers (ListUsers for any object and user type) are a function of the stored
// tuples and of its dependency closure: the relation itself, every relation its rewrite computes
// on the same object, every tupleset it follows and the relation it names on each parent type its
// tupleset allows, every userset restriction's relation, and the conditions its restrictions name.
// Validity, the type-graph pruning and the evaluation read nothing else of the model. When every
// member of the closure (absent ones included) has the same definition in both models, the
// answers are equal under any tuples and context, so the relation is not evaluated.
// Example: editing `document#owner` leaves `folder#viewer` (which never reads it) unevaluated.

import { conditionSignature, relationSignature } from '../../../model/diff.js';
import type { CompiledModel, CompiledRelation, Rewrite } from '../../../model/types.js';
import type { RelationSummary } from '../../contract.js';

/** The dependency closure of `type#relation` in `model`: keys `type#relation`, and condition names. */
interface Closure {
  readonly relations: Set<string>;
  readonly conditions: Set<string>;
}

function relationOf(model: CompiledModel, type: string, relation: string): CompiledRelation | undefined {
  return model.types.get(type)?.relations.get(relation);
}

function closureOf(model: CompiledModel, type: string, relation: string): Closure {
  const out: Closure = { relations: new Set(), conditions: new Set() };
  const pending: [string, string][] = [[type, relation]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [t, r] = next;
    const key = `${t}#${r}`;
    if (out.relations.has(key)) continue;
    out.relations.add(key);
    const rel = relationOf(model, t, r);
    if (!rel) continue;
    for (const d of rel.directTypes) {
      if (d.relation) pending.push([d.type, d.relation]);
      if (d.condition) out.conditions.add(d.condition);
    }
    const visit = (rw: Rewrite): void => {
      if (rw.kind === 'computed') pending.push([t, rw.relation]);
      else if (rw.kind === 'ttu') {
        pending.push([t, rw.tupleset]);
        for (const d of relationOf(model, t, rw.tupleset)?.directTypes ?? []) pending.push([d.type, rw.computed]);
      } else if (rw.kind === 'union' || rw.kind === 'intersection') rw.children.forEach(visit);
      else if (rw.kind === 'difference') {
        visit(rw.base);
        visit(rw.subtract);
      }
    };
    visit(rel.rewrite);
  }
  return out;
}

/**
 * True when every relation of the closure is built from direct tuples, computed usersets,
 * tuple-to-userset and unions only, and no restriction names a condition: then every candidate
 * ListUsers' expansion finds is related by a path of valid tuples it walked within the depth
 * limit (an expansion that meets the limit fails), so Check accepts each one and the expansion's
 * candidates are ListUsers' answer (the differential test holds the two equal).
 */
export function isPlainUnion(model: CompiledModel, type: string, relation: string): boolean {
  const c = closureOf(model, type, relation);
  if (c.conditions.size > 0) return false;
  const plain = (rw: Rewrite): boolean =>
    rw.kind === 'union' ? rw.children.every(plain) : rw.kind !== 'intersection' && rw.kind !== 'difference';
  for (const key of c.relations) {
    const hash = key.indexOf('#');
    const rel = relationOf(model, key.slice(0, hash), key.slice(hash + 1));
    if (rel && !plain(rel.rewrite)) return false;
  }
  return true;
}

/** Every member of the closure has the same definition in both models. */
function sameClosure(c: Closure, base: CompiledModel, candidate: CompiledModel): boolean {
  for (const key of c.relations) {
    const hash = key.indexOf('#');
    const t = key.slice(0, hash);
    const r = key.slice(hash + 1);
    if (relationSignature(relationOf(base, t, r)) !== relationSignature(relationOf(candidate, t, r))) return false;
  }
  for (const name of c.conditions)
    if (conditionSignature(base, name) !== conditionSignature(candidate, name)) return false;
  return true;
}

/** One relation to report, in model order (the base's types, then the candidate's new ones). */
export interface PlannedRelation {
  readonly summary: RelationSummary;
  /** Models (by side) in which the relation reads conditioned tuples. */
  readonly contextIn: readonly ('base' | 'candidate')[];
}

export function planRelations(base: CompiledModel, candidate: CompiledModel): PlannedRelation[] {
  const keys: [string, string][] = [];
  const seen = new Set<string>();
  for (const m of [base, candidate])
    for (const [t, def] of m.types)
      for (const r of def.relations.keys()) {
        const key = `${t}#${r}`;
        if (!seen.has(key)) {
          seen.add(key);
          keys.push([t, r]);
        }
      }
  return keys.map(([type, relation]) => {
    const a = relationOf(base, type, relation);
    const b = relationOf(candidate, type, relation);
    const ca = closureOf(base, type, relation);
    const cb = closureOf(candidate, type, relation);
    const contextIn: ('base' | 'candidate')[] = [];
    if (a && ca.conditions.size > 0) contextIn.push('base');
    if (b && cb.conditions.size > 0) contextIn.push('candidate');
    const status = !a
      ? 'added'
      : !b
        ? 'removed'
        : relationSignature(a) === relationSignature(b)
          ? 'unchanged'
          : 'changed';
    const evaluated = !(sameClosure(ca, base, candidate) && sameClosure(cb, base, candidate));
    return {
      contextIn,
      summary: {
        object_type: type,
        relation,
        status,
        evaluated,
        context_dependent: contextIn.length > 0,
        objects: 0,
        gained: 0,
        lost: 0,
        undetermined: 0,
      },
    };
  });
}
