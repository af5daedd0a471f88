// Whole-model graph rules over a shape-checked model: entrypoints (R14, semantics.md §3.5) and
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

type Visited = ReadonlyMap<string, ReadonlySet<string>>;

function visit(v: Visited, type: string, relation: string): Visited {
  const next = new Map(v);
  next.set(type, new Set([...(v.get(type) ?? []), relation]));
  return next;
}

const seen = (v: Visited, type: string, relation: string): boolean => v.get(type)?.has(relation) ?? false;

/** [has an entrypoint, the failure involved a loop] for relation `type#relation` evaluated at `rw`. */
export function hasEntrypoints(m: ModelIndex, type: string, relation: string, rw: UsersetJson, visited: Visited = new Map()): [boolean, boolean] {
  const v = visit(visited, type, relation);
  if (rw.this) return [thisHasEntry(m, type, relation, v), false];
  if (rw.computedUserset) {
    const target = rw.computedUserset.relation ?? '';
    const next = m.rewrite(type, target);
    if (!next) return [false, false];
    if (seen(v, type, target)) return [false, true];
    return hasEntrypoints(m, type, target, next, v);
  }
  if (rw.tupleToUserset) {
    const computed = rw.tupleToUserset.computedUserset.relation ?? '';
    for (const ref of m.restrictions(type, rw.tupleToUserset.tupleset.relation ?? '')) {
      const next = m.rewrite(ref.type, computed);
      if (!next || seen(v, ref.type, computed)) continue;
      if (hasEntrypoints(m, ref.type, computed, next, v)[0]) return [true, false];
    }
    return [false, false];
  }
  if (rw.union) {
    let loop = false;
    for (const child of rw.union.child) {
      const [ok, childLoop] = hasEntrypoints(m, type, relation, child, visited);
      if (ok) return [true, false];
      loop ||= childLoop;
    }
    return [false, loop];
  }
  if (rw.intersection) {
    for (const child of rw.intersection.child) {
      const [ok, childLoop] = hasEntrypoints(m, type, relation, child, visited);
      if (!ok) return [false, childLoop];
    }
    return [true, false];
  }
  if (rw.difference) {
    for (const part of [rw.difference.base, rw.difference.subtract]) {
      const [ok, loop] = hasEntrypoints(m, type, relation, part, visited);
      if (!ok) return [false, loop];
    }
    return [true, false];
  }
  return [false, false];
}

function thisHasEntry(m: ModelIndex, type: string, relation: string, v: Visited): boolean {
  for (const ref of m.restrictions(type, relation)) {
    if (!ref.relation || ref.wildcard) return true;
    const next = m.rewrite(ref.type, ref.relation);
    if (!next || seen(v, ref.type, ref.relation)) continue;
    if (hasEntrypoints(m, ref.type, ref.relation, next, v)[0]) return true;
  }
  return false;
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
