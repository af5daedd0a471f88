// Which subject kinds can possibly be members of each `type#relation` (semantics §5.2 step 4):
// a static over-approximation from the model's type restrictions, computed once per program.
// The walker returns FALSE at once for a (node, relation) the query's subject kind cannot reach,
// and skips userset/parent edges leading only there. It never changes an answer (the set is a
// superset of every path the walker could take); it only saves reads. Pruning must not hide an
// ERROR either (a condition that cannot be evaluated, or the depth limit, met in the skipped
// branch), so it applies only to relations whose whole closure reads no conditioned tuple and
// is acyclic, and only while `depth + height` stays under the limit (`height` = most tuple hops
// the closure can take).
//
// Subject kinds: `U` (object of type U), `U:*` (wildcard), `U#S` (userset). Example: with
// `doc#viewer: [user, group#member]` and `group#member: [user]`, doc#viewer is reachable by
// `user`, `group#member` and `doc#viewer` (the self-defining rule), not by `user:*`.

import type { CompiledModel, Rewrite } from '../../model/types.js';
import { FORM_OBJECT, FORM_USERSET, FORM_WILDCARD } from '../../abi.js';
import type { Dictionary } from '../../index/dictionary.js';

/** Numeric key of a subject kind: type name id and form (0 object, 1 wildcard, 2 + relation id). */
export const kindKey = (type: number, form: number): number => type * 8192 + form;

export interface Reach {
  /** Kind key → dense kind index (bit position). */
  readonly kinds: ReadonlyMap<number, number>;
  /** Words per bitset. */
  readonly words: number;
  /** `slot * stride + rel` → bitset (absent: relation undefined on the type). */
  readonly sets: ReadonlyMap<number, Uint32Array>;
  /** `slot * stride + rel` → tuple-hop height of an error-free closure; absent: never prune. */
  readonly heights: ReadonlyMap<number, number>;
}

/** Height of `type#rel`'s closure when it cannot produce an ERROR, else undefined. */
function errorFreeHeights(model: CompiledModel): Map<string, number | undefined> {
  const memo = new Map<string, number | undefined>();
  const onStack = new Set<string>();
  const visit = (tn: string, rn: string): number | undefined => {
    const key = `${tn}#${rn}`;
    if (memo.has(key)) return memo.get(key);
    if (onStack.has(key)) return undefined; // a cycle: the depth limit is reachable
    const r = model.types.get(tn)?.relations.get(rn);
    if (!r) return 0;
    onStack.add(key);
    let h: number | undefined = 0;
    const succ = (t: string, rel: string, hop: number): void => {
      if (h === undefined) return;
      const x = visit(t, rel);
      h = x === undefined ? undefined : Math.max(h, x + hop);
    };
    const walk = (rw: Rewrite): void => {
      if (h === undefined) return;
      switch (rw.kind) {
        case 'this':
          for (const d of r.directTypes) {
            if (d.condition !== undefined) h = undefined;
            else if (d.relation !== undefined) succ(d.type, d.relation, 1);
          }
          return;
        case 'computed':
          succ(tn, rw.relation, 0);
          return;
        case 'ttu':
          for (const d of model.types.get(tn)?.relations.get(rw.tupleset)?.directTypes ?? []) {
            if (d.condition !== undefined) h = undefined;
            else if (model.types.get(d.type)?.relations.has(rw.computed)) succ(d.type, rw.computed, 1);
          }
          return;
        case 'union':
        case 'intersection':
          rw.children.forEach(walk);
          return;
        case 'difference':
          walk(rw.base);
          walk(rw.subtract);
          return;
      }
    };
    walk(r.rewrite);
    onStack.delete(key);
    memo.set(key, h);
    return h;
  };
  for (const [tn, t] of model.types) for (const rn of t.relations.keys()) visit(tn, rn);
  return memo;
}

export function computeReach(model: CompiledModel, dict: Dictionary, stride: number): Reach {
  const types = [...model.types.values()];
  const reach = new Map<string, Set<number>>();
  for (const t of types) for (const rn of t.relations.keys()) reach.set(`${t.name}#${rn}`, new Set([kindKey(dict.name(t.name), FORM_USERSET + dict.name(rn))]));
  const add = (into: Set<number>, from: Iterable<number> | undefined): void => {
    if (from) for (const k of from) into.add(k);
  };
  const contrib = (tn: string, rw: Rewrite, into: Set<number>): void => {
    const t = model.types.get(tn);
    switch (rw.kind) {
      case 'this':
        return;
      case 'computed':
        add(into, reach.get(`${tn}#${rw.relation}`));
        return;
      case 'ttu':
        for (const d of t?.relations.get(rw.tupleset)?.directTypes ?? []) add(into, reach.get(`${d.type}#${rw.computed}`));
        return;
      case 'union':
      case 'intersection':
        for (const c of rw.children) contrib(tn, c, into);
        return;
      case 'difference':
        contrib(tn, rw.base, into);
        return;
    }
  };
  const hasThis = (rw: Rewrite): boolean =>
    rw.kind === 'this' || ((rw.kind === 'union' || rw.kind === 'intersection') && rw.children.some(hasThis)) || (rw.kind === 'difference' && hasThis(rw.base));
  for (let changed = true; changed; ) {
    changed = false;
    for (const t of types) {
      for (const [rn, r] of t.relations) {
        const set = reach.get(`${t.name}#${rn}`) ?? new Set<number>();
        const before = set.size;
        if (hasThis(r.rewrite)) {
          for (const d of r.directTypes) {
            const u = dict.name(d.type);
            if (d.wildcard) set.add(kindKey(u, FORM_OBJECT)).add(kindKey(u, FORM_WILDCARD));
            else if (d.relation !== undefined) {
              set.add(kindKey(u, FORM_USERSET + dict.name(d.relation)));
              add(set, reach.get(`${d.type}#${d.relation}`));
            } else set.add(kindKey(u, FORM_OBJECT));
          }
        }
        contrib(t.name, r.rewrite, set);
        if (set.size !== before) changed = true;
      }
    }
  }
  const kinds = new Map<number, number>();
  for (const s of reach.values()) for (const k of s) if (!kinds.has(k)) kinds.set(k, kinds.size);
  const words = Math.max(1, Math.ceil(kinds.size / 32));
  const sets = new Map<number, Uint32Array>();
  const heights = new Map<number, number>();
  const safe = errorFreeHeights(model);
  types.forEach((t, slot) => {
    for (const rn of t.relations.keys()) {
      const bits = new Uint32Array(words);
      for (const k of reach.get(`${t.name}#${rn}`) ?? []) {
        const i = kinds.get(k) ?? 0;
        bits[i >>> 5] = ((bits[i >>> 5] ?? 0) | (1 << (i & 31))) >>> 0;
      }
      sets.set(slot * stride + dict.name(rn), bits);
      const h = safe.get(`${t.name}#${rn}`);
      if (h !== undefined) heights.set(slot * stride + dict.name(rn), h);
    }
  });
  return { kinds, words, sets, heights };
}
