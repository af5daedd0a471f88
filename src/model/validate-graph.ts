// Whole-model graph rules over a shape-checked model: entrypoints (R14, docs/reference/semantics.md §3.5) and
// computed-userset cycles (R15, §3.4). Both assume R6/R7/R11 passed; missing pieces count as "no entry".
// Example: `define a: b` / `define b: a` on one type → a has no entrypoint, flagged as a loop.

import type { RelationReferenceJson, TypeDefinitionJson, UsersetJson } from '../domain/types.js';
import { components } from './scc.js';

/** Fast lookup of a model's rewrites and type restrictions. */
export class ModelIndex {
  private readonly types = new Map<string, TypeDefinitionJson>();
  constructor(typeDefs: readonly TypeDefinitionJson[]) {
    for (const t of typeDefs) if (!this.types.has(t.type)) this.types.set(t.type, t);
  }

  type(type: string): TypeDefinitionJson | undefined {
    return this.types.get(type);
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
  // A worklist over the relations that read each key: a relation is looked at again only when
  // something it reads became known (sweeping every relation until nothing changed was
  // quadratic on a long chain written in reverse order).
  const readers = new Map<string, Entry[]>();
  const queue: Entry[] = [];
  for (const t of typeDefs) {
    for (const [r, rw] of Object.entries(t.relations ?? {})) {
      const entry = { type: t.type, relation: r, rw };
      queue.push(entry);
      for (const k of readKeys(m, t.type, r, rw)) {
        const list = readers.get(k);
        if (list) list.push(entry);
        else readers.set(k, [entry]);
      }
    }
  }
  while (queue.length > 0) {
    const { type, relation, rw } = queue.pop() as Entry;
    const k = key(type, relation);
    if (known.has(k) || !holds(type, relation, rw)) continue;
    known.add(k);
    for (const reader of readers.get(k) ?? []) if (!known.has(key(reader.type, reader.relation))) queue.push(reader);
  }
  return known;
}

interface Entry {
  readonly type: string;
  readonly relation: string;
  readonly rw: UsersetJson;
}

/** The `T#R` keys whose being known can change `holds` for `type#relation`. */
function readKeys(m: ModelIndex, type: string, relation: string, rw: UsersetJson, out: string[] = []): string[] {
  if (rw.this) {
    for (const r of m.restrictions(type, relation))
      if (r.relation && r.wildcard === undefined) out.push(key(r.type, r.relation));
  }
  if (rw.computedUserset) out.push(key(type, rw.computedUserset.relation ?? ''));
  if (rw.tupleToUserset) {
    const computed = rw.tupleToUserset.computedUserset.relation ?? '';
    for (const r of m.restrictions(type, rw.tupleToUserset.tupleset.relation ?? '')) out.push(key(r.type, computed));
  }
  for (const c of rw.union?.child ?? rw.intersection?.child ?? []) readKeys(m, type, relation, c, out);
  if (rw.difference) {
    readKeys(m, type, relation, rw.difference.base, out);
    readKeys(m, type, relation, rw.difference.subtract, out);
  }
  return out;
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

/**
 * Relations of `type` that reach themselves through computed usersets alone (R15): the members of
 * the type's cyclic components, found once per type (a walk per relation was quadratic).
 */
export function computedCycles(m: ModelIndex, type: string): Set<string> {
  const names = Object.keys(m.type(type)?.relations ?? {});
  const numbers = new Map(names.map((r, i) => [r, i]));
  const next = names.map((r) => {
    const rw = m.rewrite(type, r);
    const out: number[] = [];
    for (const target of rw ? computedTargets(rw) : []) {
      const n = numbers.get(target);
      if (n !== undefined) out.push(n);
    }
    return out;
  });
  const cyclic = new Set<string>();
  for (const comp of components(names.length, (i) => next[i] as number[])) {
    const only = comp[0] as number;
    if (comp.length > 1 || (next[only] as number[]).includes(only))
      for (const i of comp) cyclic.add(names[i] as string);
  }
  return cyclic;
}
