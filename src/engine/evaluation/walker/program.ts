// Compiles a CompiledModel into the walker's rewrite program in shared memory, against one
// store's name dictionary (name ids are per store). Pure apart from interning the model's names.
//
// Layout (u32 words in one Region): header P.*, typeMap[stride] (name id → type slot),
// rewrite[types × stride] and direct[types × stride] (absolute pointers, 0 = undefined),
// reach[types × stride × words] (subject-kind bitsets, reach.ts), then rewrite nodes and
// restriction lists. Example: `document#viewer: [user, group#member] or
// editor` becomes UNION(THIS(restr [(user,0,0), (group,2+member,0)]), COMPUTED(editor)).

import type { CompiledModel, DirectType, Rewrite } from '../../../model/types.js';
import {
  FORM_OBJECT,
  FORM_USERSET,
  FORM_WILDCARD,
  NONE,
  OP_COMPUTED,
  OP_DIFFERENCE,
  OP_INTERSECTION,
  OP_THIS,
  OP_TTU,
  OP_UNION,
  P,
} from '../../../abi.js';
import type { StoreDictionary } from '../../../index/dictionary.js';
import { holdUntilCollected, Region, u32 } from '../../../index/memory.js';
import { computeReach } from './reach.js';

export interface Program {
  /** Shared-memory address of the program header. */
  readonly ptr: number;
  readonly stride: number;
  /** Subject kind key (reach.ts `kindKey`) → the kind index the walker prunes with. */
  readonly kinds: ReadonlyMap<number, number>;
}

/** Words of a program before layout: nodes are emitted into a flat array, pointers patched later. */
class Emitter {
  readonly words: number[] = [];
  /** Indexes into `words` that hold word offsets to be turned into absolute pointers. */
  readonly relocs: number[] = [];
  emit(...ws: number[]): number {
    const at = this.words.length;
    this.words.push(...ws);
    return at;
  }
}

function restrictions(e: Emitter, dict: StoreDictionary, types: readonly DirectType[]): number {
  const at = e.emit(types.length);
  for (const t of types) {
    const form = t.wildcard
      ? FORM_WILDCARD
      : t.relation !== undefined
        ? FORM_USERSET + dict.name(t.relation)
        : FORM_OBJECT;
    e.emit(dict.name(t.type), form, t.condition !== undefined ? dict.name(t.condition) + 1 : 0);
  }
  return at;
}

function rewrite(e: Emitter, dict: StoreDictionary, rw: Rewrite, direct: number): number {
  switch (rw.kind) {
    case 'this': {
      const at = e.emit(OP_THIS, direct < 0 ? 0 : direct);
      if (direct >= 0) e.relocs.push(at + 1); // no restrictions: pointer 0, the walker reads nothing
      return at;
    }
    case 'computed':
      return e.emit(OP_COMPUTED, dict.name(rw.relation));
    case 'ttu':
      return e.emit(OP_TTU, dict.name(rw.tupleset), dict.name(rw.computed));
    case 'union':
    case 'intersection': {
      const kids = rw.children.map((c) => rewrite(e, dict, c, direct));
      const at = e.emit(rw.kind === 'union' ? OP_UNION : OP_INTERSECTION, kids.length, ...kids);
      for (let i = 0; i < kids.length; i++) e.relocs.push(at + 2 + i);
      return at;
    }
    case 'difference': {
      const b = rewrite(e, dict, rw.base, direct);
      const s = rewrite(e, dict, rw.subtract, direct);
      const at = e.emit(OP_DIFFERENCE, b, s);
      e.relocs.push(at + 1, at + 2);
      return at;
    }
  }
}

const cache = new WeakMap<CompiledModel, WeakMap<StoreDictionary, Program>>();

/** The program of `model` for `dict`'s store, compiled once and freed with the model. */
export function programFor(model: CompiledModel, dict: StoreDictionary): Program {
  let byDict = cache.get(model);
  if (!byDict) cache.set(model, (byDict = new WeakMap()));
  const hit = byDict.get(dict);
  if (hit) return hit;
  const p = compileProgram(model, dict);
  byDict.set(dict, p);
  return p;
}

function compileProgram(model: CompiledModel, dict: StoreDictionary): Program {
  // intern every name first so the stride covers them all
  for (const [tn, t] of model.types) {
    dict.name(tn);
    for (const [rn, r] of t.relations) {
      dict.name(rn);
      for (const d of r.directTypes) {
        dict.name(d.type);
        if (d.relation !== undefined) dict.name(d.relation);
        if (d.condition !== undefined) dict.name(d.condition);
      }
    }
  }
  const stride = dict.nameList.length;
  const types = [...model.types.values()];
  const typeMapAt = P.WORDS;
  const rewriteAt = typeMapAt + stride;
  const directAt = rewriteAt + types.length * stride;
  const reach = computeReach(model, dict, stride);
  const reachAt = directAt + types.length * stride;
  const bodyAt = reachAt + types.length * stride * reach.words;
  const e = new Emitter();
  const table = new Map<number, number>(); // absolute table word → body word offset
  types.forEach((t, slot) => {
    for (const [rn, r] of t.relations) {
      const rel = dict.name(rn);
      const direct = r.directTypes.length > 0 ? restrictions(e, dict, r.directTypes) : -1;
      if (direct >= 0) table.set(directAt + slot * stride + rel, direct);
      table.set(rewriteAt + slot * stride + rel, rewrite(e, dict, r.rewrite, direct));
    }
  });
  const region = new Region((bodyAt + e.words.length) * 4);
  const base = region.ptr >>> 2;
  const m = u32();
  m[base + P.STRIDE] = stride;
  m[base + P.TYPES] = types.length;
  m[base + P.REWRITE] = (base + rewriteAt) * 4;
  m[base + P.DIRECT] = (base + directAt) * 4;
  m[base + P.TYPEMAP] = (base + typeMapAt) * 4;
  m[base + P.REACH] = (base + reachAt) * 4;
  m[base + P.REACH_WORDS] = reach.words;
  for (const [i, bits] of reach.sets) m.set(bits, base + reachAt + i * reach.words);
  m[base + P.HEIGHT] = 0; // unused (the path check is unconditional, as in the reference)
  m.fill(NONE, base + typeMapAt, base + typeMapAt + stride);
  types.forEach((t, slot) => (m[base + typeMapAt + dict.name(t.name)] = slot));
  const abs = (w: number): number => (base + bodyAt + w) * 4;
  for (const [at, w] of table) m[base + at] = abs(w);
  const words = e.words.slice();
  for (const r of e.relocs) words[r] = abs(words[r] ?? 0);
  m.set(words, base + bodyAt);
  const program: Program = { ptr: region.ptr, stride, kinds: reach.kinds };
  holdUntilCollected(program, [region]);
  region.drop();
  return program;
}
