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
import { components } from '../../../model/scc.js';

/** Numeric key of a subject kind: type name id and form (0 object, 1 wildcard, 2 + relation id). */
export const kindKey = (type: number, form: number): number => type * 8192 + form;

interface Reach {
  /** Kind key → dense kind index (bit position). */
  readonly kinds: ReadonlyMap<number, number>;
  /** Words per bitset. */
  readonly words: number;
  /** `slot * stride + rel` → bitset (absent: relation undefined on the type). */
  readonly sets: ReadonlyMap<number, Uint32Array>;
}

/** One defined `type#relation` of the model: its node number and the node numbers it walks into. */
interface Node {
  readonly type: string;
  readonly relation: string;
  readonly next: number[];
  /** Plain and wildcard restrictions (`U`, `U:*`): terminal labels, by type name. */
  readonly terminals: string[];
}

const leaves = (rw: Rewrite, out: Rewrite[] = []): Rewrite[] => {
  if (rw.kind === 'union' || rw.kind === 'intersection') for (const c of rw.children) leaves(c, out);
  else if (rw.kind === 'difference') leaves(rw.subtract, leaves(rw.base, out));
  else out.push(rw);
  return out;
};

/**
 * The model's type graph as the reference's path check walks it: every leaf of the rewrite (both
 * operands of `but not` and `and` included), computed usersets, tuple-to-userset parents that
 * define the relation, userset restrictions (visited as `U#S`), and plain (`U`) / wildcard (`U:*`)
 * restrictions as terminal labels.
 */
function typeGraph(model: CompiledModel): Node[] {
  const nodes: Node[] = [];
  const numbers = new Map<string, number>();
  for (const t of model.types.values())
    for (const r of t.relations.keys()) {
      numbers.set(`${t.name}#${r}`, nodes.length);
      nodes.push({ type: t.name, relation: r, next: [], terminals: [] });
    }
  const edge = (from: Node, type: string, relation: string): void => {
    const n = numbers.get(`${type}#${relation}`);
    if (n !== undefined) from.next.push(n);
  };
  for (const node of nodes) {
    const t = model.types.get(node.type);
    const rel = t?.relations.get(node.relation);
    if (!t || !rel) continue;
    for (const leaf of leaves(rel.rewrite)) {
      if (leaf.kind === 'computed') edge(node, node.type, leaf.relation);
      else if (leaf.kind === 'ttu') {
        for (const d of t.relations.get(leaf.tupleset)?.directTypes ?? []) edge(node, d.type, leaf.computed);
      } else if (leaf.kind === 'this') {
        for (const d of rel.directTypes) {
          if (d.relation !== undefined && !d.wildcard) edge(node, d.type, d.relation);
          else node.terminals.push(d.type);
        }
      }
    }
  }
  return nodes;
}

/**
 * The reach set of every relation in one pass: relations on one cycle share their closure, and
 * the components come sinks first, so each one's set is its own labels or'ed with the sets of the
 * components it walks into (linear in the graph times the bitset width; one closure walk per
 * relation was quadratic and stalled the loop for seconds on a 2,000-relation model).
 */
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
  const setBit = (bits: Uint32Array, key: number): void => {
    const i = kinds.get(key);
    if (i !== undefined) bits[i >>> 5] = ((bits[i >>> 5] ?? 0) | (1 << (i & 31))) >>> 0;
  };
  const nodes = typeGraph(model);
  const setOf: (Uint32Array | undefined)[] = new Array(nodes.length);
  for (const comp of components(nodes.length, (i) => (nodes[i] as Node).next)) {
    const bits = new Uint32Array(words);
    for (const i of comp) {
      const node = nodes[i] as Node;
      setBit(bits, kindKey(dict.name(node.type), FORM_USERSET + dict.name(node.relation)));
      // An object or a wildcard subject of type U reaches through either `U` or `U:*`.
      for (const u of node.terminals) {
        setBit(bits, kindKey(dict.name(u), FORM_OBJECT));
        setBit(bits, kindKey(dict.name(u), FORM_WILDCARD));
      }
      for (const j of node.next) {
        const inner = setOf[j];
        if (inner) for (let w = 0; w < words; w++) bits[w] = ((bits[w] as number) | (inner[w] as number)) >>> 0;
      }
    }
    for (const i of comp) setOf[i] = bits;
  }
  const slots = new Map(types.map((t, slot) => [t.name, slot]));
  const sets = new Map<number, Uint32Array>();
  nodes.forEach((node, i) => {
    sets.set((slots.get(node.type) as number) * stride + dict.name(node.relation), setOf[i] as Uint32Array);
  });
  return { kinds, words, sets };
}
