// Which subject kinds can be members of each `type#relation` as far as the model's type graph
// says (semantics §5.2 step 4, the reference's path check): the walker answers FALSE at once for
// a (node, relation) whose closure never mentions the subject's kind. Like the reference, this
// also skips the errors that branch could have raised (a condition, the depth limit); the
// oracle in test/oracle applies the same rule and the differential test compares them.
//
// Subject kinds: `U` (object), `U:*` (wildcard), `U#S` (userset). Example: with
// `doc#viewer: [user, group#member]` and `group#member: [user]`, doc#viewer is reachable by
// `user`, `user:*` (either label admits both), `group#member` and `doc#viewer`.

import type { CompiledModel, Rewrite } from '../../../model/types.js';
import { FORM_OBJECT, FORM_USERSET, FORM_WILDCARD } from '../../../abi.js';
import type { StoreDictionary } from '../../../index/dictionary.js';

/** Numeric key of a subject kind: type name id and form (0 object, 1 wildcard, 2 + relation id). */
export const kindKey = (type: number, form: number): number => type * 8192 + form;

export interface Reach {
  /** Kind key → dense kind index (bit position). */
  readonly kinds: ReadonlyMap<number, number>;
  /** Words per bitset. */
  readonly words: number;
  /** `slot * stride + rel` → bitset (absent: relation undefined on the type). */
  readonly sets: ReadonlyMap<number, Uint32Array>;
}

/**
 * Labels reachable from `type#rel` in the model's type graph, as the reference's path check
 * walks it: every leaf of the rewrite (both operands of `but not` and `and` included), computed
 * usersets, tuple-to-userset parents that define the relation, userset restrictions (visited as
 * `U#S`), and plain (`U`) / wildcard (`U:*`) restrictions as terminal labels.
 */
function closure(model: CompiledModel, start: string): Set<string> {
  const labels = new Set<string>();
  const walk = (label: string): void => {
    if (labels.has(label)) return;
    labels.add(label);
    const [t = '', r = ''] = label.split('#');
    const rel = model.types.get(t)?.relations.get(r);
    if (!rel) return;
    const leaves = (rw: Rewrite): Rewrite[] =>
      rw.kind === 'union' || rw.kind === 'intersection'
        ? rw.children.flatMap(leaves)
        : rw.kind === 'difference'
          ? [...leaves(rw.base), ...leaves(rw.subtract)]
          : [rw];
    for (const leaf of leaves(rel.rewrite)) {
      if (leaf.kind === 'computed') walk(`${t}#${leaf.relation}`);
      else if (leaf.kind === 'ttu') {
        for (const d of model.types.get(t)?.relations.get(leaf.tupleset)?.directTypes ?? []) {
          if (model.types.get(d.type)?.relations.has(leaf.computed)) walk(`${d.type}#${leaf.computed}`);
        }
      } else if (leaf.kind === 'this') {
        for (const d of rel.directTypes) {
          if (d.wildcard) labels.add(`${d.type}:*`);
          else if (d.relation !== undefined) walk(`${d.type}#${d.relation}`);
          else labels.add(d.type);
        }
      }
    }
  };
  walk(start);
  return labels;
}

export function computeReach(model: CompiledModel, dict: StoreDictionary, stride: number): Reach {
  const types = [...model.types.values()];
  // Every subject kind the model can name: U and U:* for each type, U#S for each relation.
  const kinds = new Map<number, number>();
  for (const t of types) {
    const u = dict.name(t.name);
    kinds.set(kindKey(u, FORM_OBJECT), kinds.size);
    kinds.set(kindKey(u, FORM_WILDCARD), kinds.size);
    for (const rn of t.relations.keys()) kinds.set(kindKey(u, FORM_USERSET + dict.name(rn)), kinds.size);
  }
  const words = Math.max(1, Math.ceil(kinds.size / 32));
  const sets = new Map<number, Uint32Array>();
  const setBit = (bits: Uint32Array, key: number): void => {
    const i = kinds.get(key);
    if (i !== undefined) bits[i >>> 5] = ((bits[i >>> 5] ?? 0) | (1 << (i & 31))) >>> 0;
  };
  types.forEach((t, slot) => {
    for (const rn of t.relations.keys()) {
      const bits = new Uint32Array(words);
      for (const label of closure(model, `${t.name}#${rn}`)) {
        const hash = label.indexOf('#');
        if (hash !== -1) {
          setBit(bits, kindKey(dict.name(label.slice(0, hash)), FORM_USERSET + dict.name(label.slice(hash + 1))));
        } else {
          // An object or a wildcard subject of type U reaches through either `U` or `U:*`.
          const u = dict.name(label.endsWith(':*') ? label.slice(0, -2) : label);
          setBit(bits, kindKey(u, FORM_OBJECT));
          setBit(bits, kindKey(u, FORM_WILDCARD));
        }
      }
      sets.set(slot * stride + dict.name(rn), bits);
    }
  });
  return { kinds, words, sets };
}
