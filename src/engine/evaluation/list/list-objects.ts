// ListObjects / StreamedListObjects over the compact index, in u32 ids (docs/reference/semantics.md §6.1-6.2).
// The same reverse walk as reference/list-objects.ts (over any TupleView), but lazy: a
// generator that confirms each candidate the moment the walk discovers it and yields it when
// Check is TRUE, so a caller that wants 1,000 objects stops the walk after the 1,000th instead of
// first collecting every reachable object. Candidates come from the reverse posting lists (base
// CSR minus overlay deletes, overlay adds, contextual tuples) without building tuple strings;
// confirmation is delegated to a `Confirmer` (the wasm walker, or the reference checker).
//
// Contract (identical to listObjects): every hop counts towards the depth limit (2002, thrown at
// once); a condition error on a walked tuple or in a confirming Check is remembered and thrown
// when the walk ends (a caller that stops at maxResults never sees it); the deadline ends the walk
// without error; each object is yielded at most once.
// Example: `doc:1#viewer@group:eng#member`, `group:eng#member@user:anne`, `viewer: [group#member]`:
//   [...listObjectsOnIndex(input, {type:'doc', relation:'viewer', user:'user:anne'})] = ['doc:1'].

import { COND_SHIFT, FORM_OBJECT, FORM_USERSET, FORM_WILDCARD, UNSEEN_NODE } from '../../../abi.js';
import { parseUser } from '../../../domain/tuple.js';
import type { JsonObject, TupleKey } from '../../../domain/types.js';
import { AppError, fail } from '../../../errors.js';
import type { IndexSnapshot } from '../../../index/store-index.js';
import { u32 } from '../../../index/memory.js';
import type { TupleEntry } from '../../../index/types.js';
import { isValidAtRead } from '../../../model/tuple-validation.js';
import type { CompiledModel } from '../../../model/types.js';
import { RequestState, type TupleOutcome } from '../semantics/context.js';
import { positiveLeaves, relevantRelations, unionOnly } from '../semantics/graph.js';
import { overlayView } from '../semantics/view.js';

export { UNSEEN_NODE };

/** Node ids of one request: the snapshot's, plus temporary ids past them for request-only strings. */
export interface NodeIds {
  /** Id of `T:id` / `T:*`, or UNSEEN_NODE when neither the snapshot nor the request mentions it. */
  id(s: string): number;
  str(id: number): string;
}

/** TRUE, FALSE, a remembered error (condition), or 'stop' (deadline / evaluation budget). */
export type Confirmation = boolean | AppError | 'stop';

/** Check of one candidate for the request's user; throws 2002 when the depth limit decides. */
export interface Confirmer {
  confirm(obj: number, rel: number): Confirmation;
}

/** What every ListObjects walk over the index needs: one snapshot, the model, the request's inputs. */
export interface ListWalkBase {
  readonly snapshot: IndexSnapshot;
  readonly model: CompiledModel;
  readonly contextual: readonly TupleKey[];
  readonly context?: JsonObject | undefined;
  readonly resolveDepth: number;
  /** `Date.now()` timestamp in ms. */
  readonly deadline: number;
  /** The request's instant (ms; default: when the walk starts): stored tuples whose expiry is at or before it grant nothing. */
  readonly now?: number | undefined;
  /** Confirm every candidate even where the walk alone is exact (benchmarks and tests). */
  readonly confirmAll?: boolean | undefined;
  /** Set to true when the deadline or an evaluation budget cut the walk short (a complete listing fails then). */
  readonly outcome?: { stopped: boolean } | undefined;
}

export interface IndexedListInput extends ListWalkBase {
  readonly ids: NodeIds;
  readonly confirmer: Confirmer;
}

export interface ListQuery {
  readonly type: string;
  readonly relation: string;
  readonly user: string;
}

interface Ref {
  readonly type: number;
  readonly rel: number;
}
interface TtuRef extends Ref {
  readonly tupleset: number;
}

/** Reverse edges of a model in name ids of one dictionary (graph.ts `reverseGraph`, keyed by numbers). */
interface IdGraph {
  /** kind key (type * 8192 + form) → relations whose `this` accepts that subject form. */
  readonly direct: ReadonlyMap<number, readonly Ref[]>;
  /** `T#S` (type * 4096 + S) → relations `T#r` computing S. */
  readonly computed: ReadonlyMap<number, readonly Ref[]>;
  /** `P#X` → relations `T#r` with `X from Y`, Y accepting plain P. */
  readonly ttu: ReadonlyMap<number, readonly TtuRef[]>;
}

const rk = (type: number, rel: number): number => type * 4096 + rel;
const kk = (type: number, form: number): number => type * 8192 + form;

function add<V>(map: Map<number, V[]>, key: number, v: V): void {
  const list = map.get(key);
  if (list) list.push(v);
  else map.set(key, [v]);
}

const graphs = new WeakMap<CompiledModel, WeakMap<object, IdGraph>>();

function idGraph(model: CompiledModel, snapshot: IndexSnapshot): IdGraph {
  const dict = snapshot.dict;
  let byDict = graphs.get(model);
  if (!byDict) graphs.set(model, (byDict = new WeakMap()));
  const hit = byDict.get(dict);
  if (hit) return hit;
  const name = (s: string): number => dict.name(s);
  const direct = new Map<number, Ref[]>();
  const computed = new Map<number, Ref[]>();
  const ttu = new Map<number, TtuRef[]>();
  for (const [type, def] of model.types) {
    for (const [relation, rel] of def.relations) {
      const ref = { type: name(type), rel: name(relation) };
      for (const leaf of positiveLeaves(rel.rewrite)) {
        if (leaf.kind === 'this') {
          const forms = new Set(
            rel.directTypes.map((d) =>
              kk(
                name(d.type),
                d.wildcard ? FORM_WILDCARD : d.relation !== undefined ? FORM_USERSET + name(d.relation) : FORM_OBJECT,
              ),
            ),
          );
          for (const f of forms) add(direct, f, ref);
        } else if (leaf.kind === 'computed') {
          add(computed, rk(ref.type, name(leaf.relation)), ref);
        } else if (leaf.kind === 'ttu') {
          const parents = new Set(
            (def.relations.get(leaf.tupleset)?.directTypes ?? [])
              .filter((d) => !d.wildcard && !d.relation)
              .map((d) => d.type),
          );
          for (const p of parents)
            add(ttu, rk(name(p), name(leaf.computed)), { ...ref, tupleset: name(leaf.tupleset) });
        }
      }
    }
  }
  const g = { direct, computed, ttu };
  byDict.set(dict, g);
  return g;
}

/** A contextual tuple with its ids (only those whose names the dictionary knows). */
interface CtxRec {
  readonly obj: number;
  readonly rel: number;
  readonly sr: number;
  readonly tuple: TupleKey;
}

const NO_CTX: readonly CtxRec[] = [];

/** Visited (node, relation) pairs: a Set while small, a bitset per relation once large. */
class Seen {
  private readonly small = new Map<number, Set<number>>();
  private readonly bits = new Map<number, Uint32Array>();
  constructor(private readonly nodes: number) {}

  /** Marks (obj, rel); false when it was already marked. */
  mark(obj: number, rel: number): boolean {
    const b = this.bits.get(rel);
    if (b !== undefined && obj < this.nodes) {
      const w = obj >>> 5;
      const m = 1 << (obj & 31);
      if ((b[w] ?? 0) & m) return false;
      b[w] = (b[w] ?? 0) | m;
      return true;
    }
    let s = this.small.get(rel);
    if (!s) this.small.set(rel, (s = new Set()));
    if (s.has(obj)) return false;
    s.add(obj);
    if (s.size > 4096 && b === undefined) {
      // Upgrade: ids below `nodes` move to a bitset (temporary ids stay in the set).
      const bits = new Uint32Array((this.nodes >>> 5) + 1);
      for (const o of s) {
        if (o < this.nodes) {
          bits[o >>> 5] = (bits[o >>> 5] ?? 0) | (1 << (o & 31));
          s.delete(o);
        }
      }
      this.bits.set(rel, bits);
    }
    return true;
  }
}

class Walk {
  private readonly snap: IndexSnapshot;
  private readonly graph: IdGraph;
  private readonly relevant = new Set<number>();
  private readonly state: RequestState;
  private readonly seen: Seen;
  private readonly qObj: number[] = [];
  private readonly qRel: number[] = [];
  private readonly qDepth: number[] = [];
  private readonly ctxBySubject = new Map<number, CtxRec[]>();
  private readonly condOutcome = new Map<number, TupleOutcome>();
  private readonly targetType: number;
  private readonly targetRel: number;
  private visits = 0;
  private readonly relevantKeys: ReadonlySet<string>;
  /** False when the walk alone decides (see `unionOnly`): targets are yielded without a Check. */
  private readonly confirm: boolean;
  stopped = false;
  error: AppError | undefined;
  /** The request's instant: bindings expired at it are invalid. */
  private readonly now: number;

  constructor(
    private readonly inp: IndexedListInput,
    private readonly q: ListQuery,
  ) {
    this.snap = inp.snapshot;
    this.graph = idGraph(inp.model, inp.snapshot);
    const names = this.snap.dict.names;
    this.relevantKeys = relevantRelations(inp.model, q.type, q.relation);
    for (const key of this.relevantKeys) {
      const hash = key.indexOf('#');
      const t = names.get(key.slice(0, hash));
      const r = names.get(key.slice(hash + 1));
      if (t !== undefined && r !== undefined) this.relevant.add(rk(t, r));
    }
    this.confirm = inp.confirmAll === true || inp.contextual.length > 0 || !unionOnly(inp.model, this.relevantKeys);
    this.targetType = names.get(q.type) ?? -1;
    this.targetRel = names.get(q.relation) ?? -1;
    this.now = inp.now ?? Date.now();
    this.state = new RequestState({
      model: inp.model,
      view: overlayView(inp.snapshot.at(this.now), inp.contextual),
      context: inp.context,
      resolveDepth: inp.resolveDepth,
      deadline: inp.deadline,
    });
    this.seen = new Seen(this.snap.nodeCount);
    for (const t of inp.contextual) {
      const hash = t.user.lastIndexOf('#');
      const rel = names.get(t.relation);
      const sr = hash === -1 ? 0 : (names.get(t.user.slice(hash + 1)) ?? -1) + 1;
      const obj = inp.ids.id(t.object);
      const subj = inp.ids.id(hash === -1 ? t.user : t.user.slice(0, hash));
      if (rel === undefined || sr < 0 || obj === UNSEEN_NODE || subj === UNSEEN_NODE) continue;
      add(this.ctxBySubject, subj, { obj, rel, sr, tuple: t });
    }
  }

  /** Type name id of a node (temporary ids: from the string). */
  private typeOf(id: number): number {
    if (id < this.snap.nodeCount) return this.snap.nodeType(id);
    const s = this.inp.ids.str(id);
    return this.snap.dict.names.get(s.slice(0, s.indexOf(':'))) ?? -1;
  }

  *run(): Generator<string, void> {
    const parsed = parseUser(this.q.user);
    if (!parsed) throw fail.validation(`invalid user '${this.q.user}'`);
    const names = this.snap.dict.names;
    const type = names.get(parsed.type);
    if (type === undefined) return;
    if (parsed.kind === 'userset') {
      const node = this.inp.ids.id(`${parsed.type}:${parsed.id}`);
      const rel = names.get(parsed.relation);
      if (node !== UNSEEN_NODE && rel !== undefined && this.visit(node, rel, 0)) yield this.inp.ids.str(node);
    } else {
      if (parsed.kind === 'object')
        yield* this.follow(this.graph.direct.get(kk(type, FORM_OBJECT)), this.inp.ids.id(this.q.user), 0, 0);
      yield* this.follow(this.graph.direct.get(kk(type, FORM_WILDCARD)), this.inp.ids.id(`${parsed.type}:*`), 0, 0);
    }
    for (let i = 0; i < this.qObj.length && !this.stopped; i++) {
      const obj = this.qObj[i] ?? 0;
      const rel = this.qRel[i] ?? 0;
      const depth = this.qDepth[i] ?? 0;
      const t = this.typeOf(obj);
      // Most expanded nodes (the targets themselves) have no outgoing edge: test before creating
      // a generator per node (a million of them are a visible GC cost).
      const refs = this.graph.direct.get(kk(t, FORM_USERSET + rel));
      if (refs !== undefined) yield* this.follow(refs, obj, rel + 1, depth);
      const computed = this.graph.computed.get(rk(t, rel));
      if (computed !== undefined) {
        for (const r of computed) {
          if (this.stopped) return;
          if (this.relevant.has(rk(r.type, r.rel)) && this.visit(obj, r.rel, depth + 1)) yield this.inp.ids.str(obj);
        }
      }
      const ttu = this.graph.ttu.get(rk(t, rel));
      if (ttu !== undefined) {
        for (const e of ttu) {
          if (this.relevant.has(rk(e.type, e.rel))) yield* this.scan(e.type, e.tupleset, obj, 0, e.rel, depth + 1);
        }
      }
    }
    if (this.error && !this.stopped) throw this.error;
  }

  private *follow(refs: readonly Ref[] | undefined, subj: number, sr: number, depth: number): Generator<string, void> {
    if (refs === undefined || subj === UNSEEN_NODE) return;
    for (const r of refs) {
      if (this.relevant.has(rk(r.type, r.rel))) yield* this.scan(r.type, r.rel, subj, sr, r.rel, depth + 1);
    }
  }

  /**
   * Tuples `<objType>:*#rel@subj[#sr]` (contextual, base minus deletes, overlay adds): each usable
   * one visits (object, `into`) at `depth`; yields the confirmed objects.
   */
  private *scan(
    objType: number,
    rel: number,
    subj: number,
    sr: number,
    into: number,
    depth: number,
  ): Generator<string, void> {
    const ids = this.inp.ids;
    for (const c of this.ctxBySubject.get(subj) ?? NO_CTX) {
      if (this.stopped) return;
      if (c.rel !== rel || c.sr !== sr || this.typeOf(c.obj) !== objType) continue;
      if (!this.state.isValid(c.tuple) || !this.met(this.state.condition(c.tuple))) continue;
      if (this.visit(c.obj, into, depth)) yield ids.str(c.obj);
    }
    const snap = this.snap;
    if (subj >= snap.nodeCount) return;
    const valid = new Validity(this, rel, subj, sr);
    const base = snap.base;
    if (subj < base.layout.nodes) {
      const want = (rel | (sr << COND_SHIFT)) >>> 0;
      const rn = base.w('revNode');
      const re = base.w('revEnt');
      const dels = snap.overlay.delCount > 0;
      for (let i = u32()[rn + subj] ?? 0, hi = u32()[rn + subj + 1] ?? 0; i < hi; i++) {
        if (this.stopped) return;
        const m = u32();
        if (m[re + 2 * i + 1] !== want) continue;
        const obj = m[re + 2 * i] ?? 0;
        if (snap.nodeType(obj) !== objType) continue;
        if (dels && snap.isDeleted(obj, rel, sr, subj)) continue;
        const cond = snap.baseCondition(obj, rel, sr, subj);
        if (!valid.ok(obj, cond) || !this.storedMet(obj, rel, subj, sr, cond)) continue;
        if (this.visit(obj, into, depth)) yield ids.str(obj);
      }
    }
    for (const p of snap.addedBySubject(subj, sr)) {
      if (this.stopped) return;
      const m = u32();
      const obj = m[p] as number;
      if (m[p + 1] !== rel || snap.nodeType(obj) !== objType) continue;
      const cond = (m[p + 3] as number) >>> COND_SHIFT;
      if (!valid.ok(obj, cond) || !this.storedMet(obj, rel, subj, sr, cond)) continue;
      if (this.visit(obj, into, depth)) yield ids.str(obj);
    }
  }

  /** Read-time validity of a stored tuple (§4.5) and its expiry, from strings (called once per scan and binding). */
  validStored(obj: number, rel: number, subj: number, sr: number, cond: number): boolean {
    const s = this.snap;
    const expiresAt = s.expiryOf(cond);
    if (expiresAt !== undefined && expiresAt <= this.now) return false;
    const user = sr === 0 ? s.nodeOf(subj) : `${s.nodeOf(subj)}#${s.nameOf(sr - 1)}`;
    const c = s.conditionOf(cond);
    return isValidAtRead(this.inp.model, s.nodeOf(obj), s.nameOf(rel), user, c?.name || undefined);
  }

  /** A stored tuple's condition outcome, memoised by binding (it does not depend on the tuple). */
  private storedMet(obj: number, rel: number, subj: number, sr: number, cond: number): boolean {
    if (cond === 0) return true;
    let out = this.condOutcome.get(cond);
    if (out === undefined) {
      const s = this.snap;
      const user = sr === 0 ? s.nodeOf(subj) : `${s.nodeOf(subj)}#${s.nameOf(sr - 1)}`;
      const t: TupleEntry = { object: s.nodeOf(obj), relation: s.nameOf(rel), user, condition: s.conditionOf(cond) };
      out = this.state.condition(t);
      this.condOutcome.set(cond, out);
    }
    return this.met(out);
  }

  private met(c: TupleOutcome): boolean {
    if (c instanceof AppError) {
      this.error ??= c;
      return false;
    }
    return c;
  }

  private readonly expandableMemo = new Map<number, boolean>();

  /** Whether `type#rel` has any reverse edge (a node without one is never queued for expansion). */
  private expandable(type: number, rel: number): boolean {
    const k = rk(type, rel);
    let v = this.expandableMemo.get(k);
    if (v === undefined) {
      const g = this.graph;
      v = g.direct.has(kk(type, FORM_USERSET + rel)) || g.computed.has(k) || g.ttu.has(k);
      this.expandableMemo.set(k, v);
    }
    return v;
  }

  /** Ends the walk early (deadline or evaluation budget) and tells the caller it is incomplete. */
  private stop(): void {
    this.stopped = true;
    if (this.inp.outcome) this.inp.outcome.stopped = true;
  }

  /** Marks and queues (obj, rel); confirms it when it is a target. True when it is to be yielded. */
  private visit(obj: number, rel: number, depth: number): boolean {
    if (!this.seen.mark(obj, rel)) return false;
    if (depth >= this.inp.resolveDepth) throw fail.tooComplex();
    const type = this.typeOf(obj);
    if (this.expandable(type, rel)) {
      this.qObj.push(obj);
      this.qRel.push(rel);
      this.qDepth.push(depth);
    }
    if ((++this.visits & 255) === 0 && Date.now() > this.inp.deadline) {
      this.stop();
      return false;
    }
    if (rel !== this.targetRel || type !== this.targetType) return false;
    if (!this.confirm) return true;
    const out = this.inp.confirmer.confirm(obj, rel);
    if (out === 'stop') {
      this.stop();
      return false;
    }
    if (out instanceof AppError) {
      this.error ??= out;
      return false;
    }
    return out;
  }
}

/** Validity within one scan: constant per condition binding (object and subject ids do not matter). */
class Validity {
  private lastCond = -1;
  private last = false;
  constructor(
    private readonly walk: Walk,
    private readonly rel: number,
    private readonly subj: number,
    private readonly sr: number,
  ) {}
  ok(obj: number, cond: number): boolean {
    if (cond !== this.lastCond) {
      this.lastCond = cond;
      this.last = this.walk.validStored(obj, this.rel, this.subj, this.sr, cond);
    }
    return this.last;
  }
}

/**
 * The objects of `q.type` for which Check(q.user, q.relation, object) is TRUE, each once, in
 * discovery order; pull as many as wanted. Throws 2002 (depth limit) as soon as the walk meets
 * it and, at the end of a complete walk, the first condition error (2000). Inputs are validated.
 */
export function listObjectsOnIndex(inp: IndexedListInput, q: ListQuery): Generator<string, void> {
  return new Walk(inp, q).run();
}
