// Whole-model graph rules over a shape-checked model: entrypoints (R14, docs/reference/semantics.md §3.5) and
// computed-userset cycles (R15, §3.4). Both assume R6/R7/R11 passed; missing pieces count as "no entry".
// Example: `define a: b` / `define b: a` on one type → a has no entrypoint, flagged as a loop.

import type { RelationReferenceJson, TypeDefinitionJson, UsersetJson } from '../domain/types.js';

/** Fast lookup of a model's rewrites and type restrictions. */
export class ModelIndex {
  private readonly types = new Map<string, TypeDefinitionJson>();
  constructor(typeDefs: readonly TypeDefinitionJson[]) {
    for (const t of typeDefs) if (!this.types.has(t.type)) this.types.set(t.type, t);
  }

  hasType(type: string): boolean {
    return this.types.has(type);
  }

  rewrite(type: string, relation: string): UsersetJson | undefined {
    const rels = this.types.get(type)?.relations;
    return rels && Object.prototype.hasOwnProperty.call(rels, relation) ? rels[relation] : undefined;
  }

  restrictions(type: string, relation: string): readonly RelationReferenceJson[] {
    return this.types.get(type)?.metadata?.relations?.[relation]?.directly_related_user_types ?? [];
  }
}

const key = (type: string, relation: string): string => `${type}#${relation}`;

/**
 * Every `T#R` that has an entrypoint (R14, §3.5), as the least fixpoint of "some finite
 * derivation reaches a plain type or a wildcard": `this` needs a plain/wildcard restriction or a
 * userset restriction that has one; `X from Y` needs some parent type's `X`; union any child,
 * intersection every child, difference both sides. Equivalent to the reference's path-based search
 * (a shortest derivation never revisits a relation on its own path) but polynomial.
 */
export function relationsWithEntrypoints(m: ModelIndex, typeDefs: readonly TypeDefinitionJson[]): Set<string> {
  const known = new Set<string>();
  const holds = (type: string, relation: string, rw: UsersetJson): boolean => {
    if (rw.this) {
      return m
        .restrictions(type, relation)
        .some((r) => !r.relation || r.wildcard !== undefined || known.has(key(r.type, r.relation)));
    }
    if (rw.computedUserset) return known.has(key(type, rw.computedUserset.relation ?? ''));
    if (rw.tupleToUserset) {
      const computed = rw.tupleToUserset.computedUserset.relation ?? '';
      return m
        .restrictions(type, rw.tupleToUserset.tupleset.relation ?? '')
        .some((r) => known.has(key(r.type, computed)));
    }
    if (rw.union) return rw.union.child.some((c) => holds(type, relation, c));
    if (rw.intersection)
      return rw.intersection.child.length > 0 && rw.intersection.child.every((c) => holds(type, relation, c));
    if (rw.difference)
      return holds(type, relation, rw.difference.base) && holds(type, relation, rw.difference.subtract);
    return false;
  };
  for (let changed = true; changed;) {
    changed = false;
    for (const t of typeDefs) {
      for (const [r, rw] of Object.entries(t.relations ?? {})) {
        if (!known.has(key(t.type, r)) && holds(t.type, r, rw)) {
          known.add(key(t.type, r));
          changed = true;
        }
      }
    }
  }
  return known;
}

/**
 * For a relation without entrypoint: does it reach a cycle of computed usersets on its type?
 * Selects the "potential loop" wording over "no entrypoints defined".
 */
export function reachesComputedCycle(m: ModelIndex, type: string, relation: string): boolean {
  const state = new Map<string, 1 | 2>(); // 1 on the stack, 2 done
  const visit = (r: string): boolean => {
    state.set(r, 1);
    const rw = m.rewrite(type, r);
    for (const next of rw ? computedTargets(rw) : []) {
      const s = state.get(next);
      if (s === 1 || (s === undefined && visit(next))) return true;
    }
    state.set(r, 2);
    return false;
  };
  return visit(relation);
}

/** Relations named by computed usersets anywhere in `rw` (not by `from`, which hops through tuples). */
export function computedTargets(rw: UsersetJson, out: string[] = []): string[] {
  if (rw.computedUserset) out.push(rw.computedUserset.relation ?? '');
  for (const c of rw.union?.child ?? rw.intersection?.child ?? []) computedTargets(c, out);
  if (rw.difference) {
    computedTargets(rw.difference.base, out);
    computedTargets(rw.difference.subtract, out);
  }
  return out;
}

/** True when `type#relation` reaches itself through computed usersets alone (R15). */
export function hasComputedCycle(m: ModelIndex, type: string, relation: string): boolean {
  const stack = [relation];
  const done = new Set<string>();
  while (stack.length > 0) {
    const r = stack.pop() as string;
    const rw = m.rewrite(type, r);
    if (!rw) continue;
    for (const next of computedTargets(rw)) {
      if (next === relation) return true;
      if (!done.has(next)) {
        done.add(next);
        stack.push(next);
      }
    }
  }
  return false;
}
