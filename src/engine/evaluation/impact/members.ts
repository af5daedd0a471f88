// Bottom-up member sets for the impact: what ListUsers answers for `object#relation` and one user
// type U (docs/changing-models.md, "How the impact is computed"), computed as set arithmetic over
// the sets of the nodes below it instead of a fresh expansion and a Check per candidate. Each
// (object, relation) node's sets are computed once and, for a relation whose dependency closure is
// identical in both models, shared by both sides. Nodes other objects reach (through userset
// tuples or tuple-to-userset) stay in a cache bounded by size, least recently used evicted; nodes
// only reached as computed usersets of the same object stay while that object is the root. Sets are sorted arrays of node ids (plain users `U:i`); the
// wildcard `U:*` is a flag beside them.
//
// Per node and U, as the reference evaluators define them (docs/reference/semantics.md §5, §6.3):
//   cand / candW   ListUsers' expansion candidates (union of every operand, a difference's base);
//   chk (+ chkNeg) the ids i with Check(U:i) TRUE (a typed wildcard grants every id, so the set may
//                  be a complement: chkNeg true means "every id except chk");
//   chkW           Check(U:*) TRUE (a wildcard subject only matches literal `U:*` tuples);
//   named          the ids a path grants by name (`ReferenceChecker.listed`): wildcards grant
//                  nothing, an intersection needs every operand fully and one naming, a subtract
//                  is applied fully.
// A relation built only from direct tuples, computed usersets, tuple-to-userset and unions has
// chk = cand (or every id when candW), chkW = candW, named = cand: those are not stored twice.
// ListUsers' answer is cand itself for such a plain-union root, else cand ∩ chk (∩ named where the
// model admits `U:*` somewhere) plus `U:*` when candW and chkW.
//
// Exactness: the arithmetic equals the reference only where nothing path- or context-dependent
// happens. The evaluation gives up (`undefined`: the caller falls back to the per-object
// expansion and Check) on a conditioned tuple, a cycle, an expansion as deep as the resolve
// depth limit allows (two levels of margin), or a userset / tupleset user of an unexpected form.
// A node that gave up because of a condition or a cycle gives up again for every later root
// reaching it, so it is remembered (bounded) and not walked again.
// Example: `group:1#member@user:a`, `group:2#member@group:1#member`, `doc:1#viewer@group:2#member`
//   → members(doc:1#viewer, user) = {user:a}, computed once for group:1 and group:2 and reused by
//   every other doc whose viewer is group:2.

import type { IndexSnapshot } from '../../../index/snapshot.js';
import type { TupleView } from '../../../index/types.js';
import type { CompiledModel, CompiledRelation, Rewrite } from '../../../model/types.js';
import { admitsWildcard } from '../list/list-users.js';
import { hasPossibleEdges } from '../semantics/graph.js';
import { isValidAtReadTime } from '../semantics/validity.js';
import { isPlainUnion } from './plan.js';

/** One node's sets for one user type (see the file comment). */
interface Members {
  readonly cand: Uint32Array;
  readonly candW: boolean;
  readonly chkNeg: boolean;
  readonly chk: Uint32Array;
  readonly chkW: boolean;
  readonly named: Uint32Array;
  /** Expansion hops below the node (computed usersets, userset tuples, tuplesets: one each). */
  readonly height: number;
}

/** ListUsers' answer for one user type: ids of `U:i` (sorted) and whether `U:*` is listed. */
interface MemberAnswer {
  readonly ids: Uint32Array;
  readonly wildcard: boolean;
}

const EMPTY = new Uint32Array(0);
const NO_ANSWER: MemberAnswer = { ids: EMPTY, wildcard: false };
const NOTHING: Members = {
  cand: EMPTY,
  candW: false,
  chkNeg: false,
  chk: EMPTY,
  chkW: false,
  named: EMPTY,
  height: 0,
};

/** Thrown inside the evaluation when it cannot be exact; `sticky`: it never will for that node. */
class GiveUp {
  constructor(readonly sticky: boolean) {}
}
const STICKY = new GiveUp(true);
const TOO_DEEP = new GiveUp(false);

/** Cache cost of one entry beyond its ids: the record, three array headers, the map slot. */
const ENTRY_OVERHEAD = 320;
/** Nodes remembered as giving up (conditions, cycles) before the memory of them starts over. */
const MAX_GIVEN_UP = 1 << 18;

// ---- sorted id arrays ----

/** Sorted, de-duplicated copy of `a[0..n)` (sorted in place). */
function sortedUnique(a: Uint32Array, n: number): Uint32Array {
  if (n === 0) return EMPTY;
  const s = a.subarray(0, n).sort();
  let k = 1;
  for (let i = 1; i < n; i++) if (s[i] !== s[k - 1]) s[k++] = s[i] ?? 0;
  return s.slice(0, k);
}

function intersect(a: Uint32Array, b: Uint32Array): Uint32Array {
  if (a.length === 0 || b.length === 0) return EMPTY;
  const out = new Uint32Array(Math.min(a.length, b.length));
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] ?? 0;
    const y = b[j] ?? 0;
    if (x === y) {
      out[k++] = x;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return k === out.length ? out : out.slice(0, k);
}

function minus(a: Uint32Array, b: Uint32Array): Uint32Array {
  if (a.length === 0 || b.length === 0) return a;
  const out = new Uint32Array(a.length);
  let j = 0;
  let k = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? 0;
    while (j < b.length && (b[j] ?? 0) < x) j++;
    if (j < b.length && b[j] === x) continue;
    out[k++] = x;
  }
  return k === a.length ? a : out.slice(0, k);
}

function union2(a: Uint32Array, b: Uint32Array): Uint32Array {
  if (a.length === 0) return b;
  if (b.length === 0) return a;
  const out = new Uint32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length || j < b.length) {
    const x = i < a.length ? (a[i] ?? 0) : 0xffffffff;
    const y = j < b.length ? (b[j] ?? 0) : 0xffffffff;
    if (x <= y) {
      out[k++] = x;
      i++;
      if (x === y) j++;
    } else {
      out[k++] = y;
      j++;
    }
  }
  return k === out.length ? out : out.slice(0, k);
}

/** A possibly complemented set: `neg` means every id except `ids`. */
interface Signed {
  neg: boolean;
  ids: Uint32Array;
}

function signedUnion(a: Signed, b: Signed): Signed {
  if (!a.neg && !b.neg) return { neg: false, ids: union2(a.ids, b.ids) };
  if (a.neg && b.neg) return { neg: true, ids: intersect(a.ids, b.ids) };
  return a.neg ? { neg: true, ids: minus(a.ids, b.ids) } : { neg: true, ids: minus(b.ids, a.ids) };
}

function signedIntersect(a: Signed, b: Signed): Signed {
  if (!a.neg && !b.neg) return { neg: false, ids: intersect(a.ids, b.ids) };
  if (a.neg && b.neg) return { neg: true, ids: union2(a.ids, b.ids) };
  return a.neg ? { neg: false, ids: minus(b.ids, a.ids) } : { neg: false, ids: minus(a.ids, b.ids) };
}

/** `ids` restricted to the signed set `s`. */
function within(ids: Uint32Array, s: Signed): Uint32Array {
  return s.neg ? minus(ids, s.ids) : intersect(ids, s.ids);
}

// ---- the evaluation ----

/** One model's side: which cache scope its non-shared nodes use. */
interface SideState {
  readonly model: CompiledModel;
  readonly scope: 0 | 1;
  /** Per relation object: built from direct tuples, computed, tuple-to-userset and unions only. */
  readonly plain: Map<CompiledRelation, boolean>;
  /** Root pruning of ListUsers (`hasPossibleEdges`), per relation index and user type index. */
  readonly edges: Map<number, boolean>;
}

const SHARED = 2;

export class MemberSets {
  private readonly sides: readonly [SideState, SideState];
  /** `type#relation` of either model → dense index (part of the cache key). */
  private readonly relIndex = new Map<string, number>();
  /**
   * Relation object (of either model) → its index, whether both sides share its sets, and how
   * other relations read it: `cross` through userset tuples or tuple-to-userset (other objects
   * reuse its sets: kept in the bounded cache), `local` only as a computed userset of the same
   * object (reused only while that object is the root: kept until the root object changes), or
   * not at all (a root's only: not kept).
   */
  private readonly relOf = new Map<CompiledRelation, { index: number; shared: boolean; read: Reading }>();
  private readonly cache = new Map<number, Members>();
  /** Sets of `local` relations of the current root object (both sides). */
  private readonly local = new Map<number, Members>();
  private rootObject = '';
  private bytes = 0;
  private peak = 0;
  private readonly givenUp = new Set<number>();
  private readonly path = new Set<number>();
  private scratch = new Uint32Array(1024);
  /** Current evaluation: side and user type (index into `types`). */
  private side: SideState;
  private userType = '';
  private userIndex = 0;
  /** Give up at this expansion depth (the resolve depth limit, less a margin of two). */
  private readonly limit: number;

  /**
   * `unchanged(type, relation)`: the relation's dependency closure is identical in both models
   * (the plan's `!evaluated`), so its sets are the same under both and computed once.
   * `budgetBytes` bounds the cache (ids at 4 bytes plus a fixed overhead per entry).
   */
  constructor(
    private readonly snapshot: IndexSnapshot,
    private readonly view: TupleView,
    base: CompiledModel,
    candidate: CompiledModel,
    unchanged: (type: string, relation: string) => boolean,
    private readonly types: readonly string[],
    resolveDepth: number,
    private readonly budgetBytes: number,
  ) {
    const state = (model: CompiledModel, scope: 0 | 1): SideState => ({
      model,
      scope,
      plain: new Map(),
      edges: new Map(),
    });
    this.sides = [state(base, 0), state(candidate, 1)];
    this.side = this.sides[0];
    this.limit = resolveDepth - 2;
    for (const model of [base, candidate])
      for (const [t, def] of model.types)
        for (const [r, rel] of def.relations) {
          const key = `${t}#${r}`;
          let index = this.relIndex.get(key);
          if (index === undefined) {
            index = this.relIndex.size;
            this.relIndex.set(key, index);
          }
          this.relOf.set(rel, { index, shared: unchanged(t, r), read: 'none' });
        }
    for (const model of [base, candidate])
      for (const [rel, read] of readRelations(model)) {
        const info = this.relOf.get(rel);
        if (info && info.read !== 'cross') info.read = read;
      }
  }

  /** Highest cache size seen, in bytes as the budget counts them. */
  get peakBytes(): number {
    return this.peak;
  }

  /**
   * ListUsers' answer for `object#relation` and user type `types[userIndex]` under the base
   * (`side` 0) or the candidate (1), with `plainRoot` the relation's `isPlainUnion` in that model;
   * undefined when the arithmetic cannot be exact here (the caller evaluates it the slow way).
   */
  answer(
    sideIndex: 0 | 1,
    object: string,
    relation: string,
    userIndex: number,
    plainRoot: boolean,
  ): MemberAnswer | undefined {
    const side = this.sides[sideIndex];
    const model = side.model;
    const type = object.slice(0, object.indexOf(':'));
    const userType = this.types[userIndex] ?? '';
    const rel = model.types.get(type)?.relations.get(relation);
    if (!rel || !model.types.has(userType)) return NO_ANSWER;
    const edgeKey = (this.relOf.get(rel)?.index ?? 0) * this.types.length + userIndex;
    let edges = side.edges.get(edgeKey);
    if (edges === undefined) {
      edges = hasPossibleEdges(model, type, relation, userType, undefined);
      side.edges.set(edgeKey, edges);
    }
    if (!edges) return NO_ANSWER;
    if (object !== this.rootObject) {
      this.local.clear();
      this.rootObject = object;
    }
    this.side = side;
    this.userType = userType;
    this.userIndex = userIndex;
    let m: Members;
    try {
      m = this.node(object, relation, 0);
    } catch (e) {
      if (e instanceof GiveUp) return undefined;
      throw e;
    } finally {
      this.path.clear();
    }
    if (m.height >= this.limit) return undefined;
    if (plainRoot) return { ids: m.cand, wildcard: m.candW };
    let ids = within(m.cand, { neg: m.chkNeg, ids: m.chk });
    if (admitsWildcard(model, userType)) ids = intersect(ids, m.named);
    return { ids, wildcard: m.candW && m.chkW };
  }

  /**
   * The users of `a` (user type `types[userIndex]`) that `b` lacks, as strings in string order,
   * `U:*` among them.
   */
  usersNotIn(a: MemberAnswer, b: MemberAnswer, userIndex: number): string[] {
    const out: string[] = [];
    for (const id of minus(a.ids, b.ids)) out.push(this.snapshot.nodeOf(id));
    if (a.wildcard && !b.wildcard) out.push(`${this.types[userIndex] ?? ''}:*`);
    return out.sort();
  }

  /** The users of `a` as strings (for a comparison with the other side's slow answer). */
  userSet(a: MemberAnswer, userIndex: number): Set<string> {
    const out = new Set<string>();
    for (const id of a.ids) out.add(this.snapshot.nodeOf(id));
    if (a.wildcard) out.add(`${this.types[userIndex] ?? ''}:*`);
    return out;
  }

  private keyOf(node: number, rel: number, scope: number): number {
    return ((node * this.relIndex.size + rel) * 3 + scope) * this.types.length + this.userIndex;
  }

  private node(object: string, relation: string, depth: number): Members {
    if (depth >= this.limit) throw TOO_DEEP;
    const model = this.side.model;
    const rel = model.types.get(object.slice(0, object.indexOf(':')))?.relations.get(relation);
    if (!rel) return NOTHING;
    const info = this.relOf.get(rel);
    const id = this.snapshot.nodeId(object);
    // Every relation of either model is indexed, and objects reached through tuples are interned.
    if (info === undefined || id === undefined) throw STICKY;
    const key = this.keyOf(id, info.index, info.shared ? SHARED : this.side.scope);
    const hit = info.read === 'local' ? this.local.get(key) : this.cache.get(key);
    if (hit !== undefined && info.read === 'local') {
      if (depth + hit.height >= this.limit) throw TOO_DEEP;
      return hit;
    }
    if (hit !== undefined) {
      // Reused where its deepest node stays under the limit, as the expansion's own memo does.
      if (depth + hit.height >= this.limit) throw TOO_DEEP;
      // Least recently used goes first: move the entry to the end of the map's order.
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    if (this.givenUp.has(key) || this.path.has(key)) throw STICKY;
    this.path.add(key);
    let m: Members;
    try {
      m = this.plainRelation(rel, object.slice(0, object.indexOf(':')))
        ? this.plainNode(object, relation, rel.rewrite, depth)
        : this.rewrite(object, relation, rel.rewrite, depth);
    } catch (e) {
      if (e === STICKY) {
        if (this.givenUp.size >= MAX_GIVEN_UP) this.givenUp.clear();
        this.givenUp.add(key);
      }
      throw e;
    } finally {
      this.path.delete(key);
    }
    if (info.read === 'cross') this.remember(key, m);
    else if (info.read === 'local') this.local.set(key, m);
    return m;
  }

  private remember(key: number, m: Members): void {
    const cost =
      ENTRY_OVERHEAD +
      4 * (m.cand.length + (m.chk === m.cand ? 0 : m.chk.length) + (m.named === m.cand ? 0 : m.named.length));
    if (cost > this.budgetBytes / 4) return;
    this.cache.set(key, m);
    this.bytes += cost;
    if (this.bytes > this.peak) this.peak = this.bytes;
    if (this.bytes <= this.budgetBytes) return;
    // Evict down to three quarters at once: the walk from the oldest entry then runs rarely.
    for (const [k, old] of this.cache) {
      if (this.bytes <= (this.budgetBytes * 3) / 4) break;
      this.cache.delete(k);
      this.bytes -=
        ENTRY_OVERHEAD +
        4 *
          (old.cand.length +
            (old.chk === old.cand ? 0 : old.chk.length) +
            (old.named === old.cand ? 0 : old.named.length));
    }
  }

  /**
   * Whether the relation and everything it reads are unions of plain leaves (`isPlainUnion`: a
   * relation whose closure names a condition is taken the general way, which is exact too).
   */
  private plainRelation(rel: CompiledRelation, type: string): boolean {
    let plain = this.side.plain.get(rel);
    if (plain === undefined) {
      plain = isPlainUnion(this.side.model, type, rel.name);
      this.side.plain.set(rel, plain);
    }
    return plain;
  }

  /** Whether a plain user string is of the current user type (`U:...`). */
  private ofUserType(user: string): boolean {
    const u = this.userType;
    return user.length > u.length && user.charCodeAt(u.length) === 58 && user.startsWith(u);
  }

  /** Grows the scratch buffer to hold `n` ids, keeping its content. */
  private reserve(n: number): void {
    if (n <= this.scratch.length) return;
    const grown = new Uint32Array(Math.max(this.scratch.length * 2, n));
    grown.set(this.scratch);
    this.scratch = grown;
  }

  /** Appends `a` to the scratch buffer at `n`; returns the new length. */
  private push(a: Uint32Array, n: number): number {
    this.reserve(n + a.length);
    this.scratch.set(a, n);
    return n + a.length;
  }

  /**
   * A plain-union node: its candidates are every `U:i` / `U:*` reached through valid tuples;
   * Check and naming agree with them (see the file comment).
   */
  private plainNode(object: string, relation: string, rw: Rewrite, depth: number): Members {
    const ids: number[] = [];
    const children: Members[] = [];
    const wild = this.collect(object, relation, rw, depth, ids, children);
    let height = 0;
    let candW = wild;
    for (const c of children) {
      candW ||= c.candW;
      if (c.height + 1 > height) height = c.height + 1;
    }
    let cand: Uint32Array;
    if (children.length <= 4) {
      // Few operands: merge them (already sorted) instead of sorting their concatenation.
      cand = ids.length === 0 ? EMPTY : sortedUnique(Uint32Array.from(ids), ids.length);
      for (const c of children) cand = union2(cand, c.cand);
    } else {
      let n = 0;
      for (const c of children) n = this.push(c.cand, n);
      this.reserve(n + ids.length);
      for (const i of ids) this.scratch[n++] = i;
      cand = sortedUnique(this.scratch, n);
    }
    return { cand, candW, chkNeg: candW, chk: candW ? EMPTY : cand, chkW: candW, named: cand, height };
  }

  /** Walks a plain rewrite: direct ids into `ids`, nodes one hop below into `children`; true on `U:*`. */
  private collect(
    object: string,
    relation: string,
    rw: Rewrite,
    depth: number,
    ids: number[],
    children: Members[],
  ): boolean {
    switch (rw.kind) {
      case 'this':
        return this.direct(object, relation, depth, ids, children);
      case 'computed':
        children.push(this.node(object, rw.relation, depth + 1));
        return false;
      case 'ttu':
        this.parents(object, rw.tupleset, rw.computed, depth, children);
        return false;
      case 'union': {
        let wild = false;
        for (const c of rw.children) wild = this.collect(object, relation, c, depth, ids, children) || wild;
        return wild;
      }
      default:
        throw STICKY; // not plain: never called so
    }
  }

  /** Direct tuples: plain ids of U into `ids`, userset nodes into `children`; true on `U:*`. */
  private direct(object: string, relation: string, depth: number, ids: number[], children: Members[]): boolean {
    const model = this.side.model;
    let wild = false;
    for (const t of this.view.users(object, relation)) {
      if (!isValidAtReadTime(model, t)) continue;
      if (t.condition?.name) throw STICKY;
      const user = t.user;
      const hash = user.lastIndexOf('#');
      if (hash !== -1) {
        const target = user.slice(0, hash);
        if (target.endsWith(':*')) throw STICKY;
        children.push(this.node(target, user.slice(hash + 1), depth + 1));
      } else if (this.ofUserType(user)) {
        if (user.endsWith(':*')) wild = true;
        else {
          const id = this.snapshot.nodeId(user);
          if (id === undefined) throw STICKY;
          ids.push(id);
        }
      }
    }
    return wild;
  }

  /** Tuple-to-userset: the parents' `computed` nodes into `children`. */
  private parents(object: string, tupleset: string, computed: string, depth: number, children: Members[]): void {
    const model = this.side.model;
    for (const t of this.view.users(object, tupleset)) {
      if (!isValidAtReadTime(model, t)) continue;
      if (t.condition?.name) throw STICKY;
      if (t.user.includes('#') || t.user.endsWith(':*')) throw STICKY;
      // The expansion enters the parent's node (depth counted) even where its type lacks `computed`.
      children.push(this.node(t.user, computed, depth + 1));
    }
  }

  /** Union of nodes, each one hop below (the sets of a plain collection, in general form). */
  private unionOf(ids: number[], wild: boolean, children: readonly Members[]): Members {
    const direct = ids.length === 0 ? EMPTY : sortedUnique(Uint32Array.from(ids), ids.length);
    let cand = direct;
    let candW = wild;
    let chk: Signed = wild ? { neg: true, ids: EMPTY } : { neg: false, ids: direct };
    let chkW = wild;
    let named = direct;
    let height = 0;
    for (const c of children) {
      cand = union2(cand, c.cand);
      candW ||= c.candW;
      chk = signedUnion(chk, { neg: c.chkNeg, ids: c.chk });
      chkW ||= c.chkW;
      named = union2(named, c.named);
      if (c.height + 1 > height) height = c.height + 1;
    }
    return { cand, candW, chkNeg: chk.neg, chk: chk.ids, chkW, named, height };
  }

  /** A general rewrite (intersection and exclusion somewhere in it). */
  private rewrite(object: string, relation: string, rw: Rewrite, depth: number): Members {
    switch (rw.kind) {
      case 'this': {
        const ids: number[] = [];
        const children: Members[] = [];
        const wild = this.direct(object, relation, depth, ids, children);
        return this.unionOf(ids, wild, children);
      }
      case 'computed':
        return this.unionOf([], false, [this.node(object, rw.relation, depth + 1)]);
      case 'ttu': {
        const children: Members[] = [];
        this.parents(object, rw.tupleset, rw.computed, depth, children);
        return this.unionOf([], false, children);
      }
      case 'union': {
        const parts = rw.children.map((c) => this.rewrite(object, relation, c, depth));
        let acc = parts[0] ?? NOTHING;
        for (const p of parts.slice(1))
          acc = {
            cand: union2(acc.cand, p.cand),
            candW: acc.candW || p.candW,
            ...signedFields(signedUnion(signedOf(acc), signedOf(p))),
            chkW: acc.chkW || p.chkW,
            named: union2(acc.named, p.named),
            height: Math.max(acc.height, p.height),
          };
        return acc;
      }
      case 'intersection': {
        const parts = rw.children.map((c) => this.rewrite(object, relation, c, depth));
        let acc = parts[0] ?? NOTHING;
        let named = acc.named;
        for (const p of parts.slice(1)) {
          named = union2(named, p.named);
          acc = {
            cand: union2(acc.cand, p.cand),
            candW: acc.candW || p.candW,
            ...signedFields(signedIntersect(signedOf(acc), signedOf(p))),
            chkW: acc.chkW && p.chkW,
            named: EMPTY,
            height: Math.max(acc.height, p.height),
          };
        }
        return { ...acc, named: within(named, signedOf(acc)) };
      }
      case 'difference': {
        const sub = this.rewrite(object, relation, rw.subtract, depth);
        const base = this.rewrite(object, relation, rw.base, depth);
        const notSub: Signed = { neg: !sub.chkNeg, ids: sub.chk };
        return {
          cand: base.cand,
          candW: base.candW,
          ...signedFields(signedIntersect(signedOf(base), notSub)),
          chkW: base.chkW && !sub.chkW,
          named: within(base.named, notSub),
          height: Math.max(base.height, sub.height),
        };
      }
    }
  }
}

type Reading = 'none' | 'local' | 'cross';

/**
 * How the relations of `model` are read by others: `local` as a computed userset (same object),
 * `cross` as the parent types' relation of a tuple-to-userset or a userset restriction's relation.
 */
function readRelations(model: CompiledModel): Map<CompiledRelation, Reading> {
  const out = new Map<CompiledRelation, Reading>();
  const add = (type: string, relation: string, read: Reading): void => {
    const r = model.types.get(type)?.relations.get(relation);
    if (r && out.get(r) !== 'cross') out.set(r, read);
  };
  for (const [t, def] of model.types)
    for (const rel of def.relations.values()) {
      for (const d of rel.directTypes) if (d.relation !== undefined) add(d.type, d.relation, 'cross');
      const visit = (rw: Rewrite): void => {
        if (rw.kind === 'computed') add(t, rw.relation, 'local');
        else if (rw.kind === 'ttu')
          for (const d of def.relations.get(rw.tupleset)?.directTypes ?? []) add(d.type, rw.computed, 'cross');
        else if (rw.kind === 'union' || rw.kind === 'intersection') rw.children.forEach(visit);
        else if (rw.kind === 'difference') {
          visit(rw.base);
          visit(rw.subtract);
        }
      };
      visit(rel.rewrite);
    }
  return out;
}

function signedOf(m: Members): Signed {
  return { neg: m.chkNeg, ids: m.chk };
}

function signedFields(s: Signed): { chkNeg: boolean; chk: Uint32Array } {
  return { chkNeg: s.neg, chk: s.ids };
}
