// One immutable, published view of a store's index at one revision: the base, the serialised
// overlay and the dictionary prefix that existed at publication. Implements TupleView for the
// TypeScript evaluators and exposes the shared-memory header the walker reads.
//
// Example: after `document:1#viewer@group:eng#member` is written at revision 7, a snapshot
// taken then has revision 7 and `users('document:1','viewer')` yields that tuple; a snapshot
// taken at revision 6 never will, even while the write is being merged into a new base.

import type { RelationshipCondition } from '../domain/types.js';
import type { TupleEntry, TupleView } from './types.js';
import { S, SR_MASK, COND_SHIFT, WILDCARD_BIT } from '../abi.js';
import type { Base } from './base.js';
import type { StoreDictionary } from './dictionary.js';
import { type Hold, holdUntilCollected, Region, u32 } from './memory.js';
import type { OverlayImage } from './overlay.js';

/**
 * The words of a snapshot's thread record (a store whose node table is shared: HTTP threads read
 * the snapshot through it, `thread-board.ts`): immutable once written, held with the snapshot.
 */
export const R = {
  HEADER: 0,
  REV_LO: 1,
  REV_HI: 2,
  NODE_COUNT: 3,
  NAME_COUNT: 4,
  TABLE: 5,
  MASK: 6,
  SPANS: 7,
  NODE_TYPE: 8,
  EXPIRING: 9,
  /**
   * A number no other record of this process had (block addresses are reused once a record is
   * released): a reader that keeps a view of a record knows it by its address AND this.
   */
  SERIAL: 10,
  WORDS: 11,
} as const;

/** The last SERIAL given (wraps after 2^32 records; a reader compares it together with the address). */
let serials = 0;

function* filter(entries: Iterable<TupleEntry>, keep: (t: TupleEntry) => boolean): Iterable<TupleEntry> {
  for (const t of entries) if (keep(t)) yield t;
}

export class IndexSnapshot implements TupleView {
  readonly revision: number;
  /** Shared-memory address of the walker's snapshot header (abi S.*). */
  readonly header: number;
  /** Nodes (and name ids) visible to this snapshot; later-interned ids are not. */
  readonly nodeCount: number;
  readonly nameCount: number;
  readonly condCount: number;
  /** Some binding of this snapshot carries an expiry: queries read the clock and pass their instant. */
  readonly expiring: boolean;
  /** Address of the thread record (`R`), 0 when the store's node table is not shared. */
  readonly record: number;
  private readonly hold: Hold;
  private pins = 0;
  private retired = false;

  /** Takes ownership of `overlay`'s regions (an image belongs to exactly one snapshot). */
  constructor(
    readonly dict: StoreDictionary,
    readonly base: Base,
    readonly overlay: OverlayImage,
    revision: number,
  ) {
    this.revision = revision;
    this.nodeCount = dict.nodeList.length;
    this.nameCount = dict.nameList.length;
    this.condCount = dict.conds.length;
    this.expiring = dict.hasExpiries;
    const header = new Region(S.WORDS * 4);
    const m = u32();
    const h = header.ptr >>> 2;
    m[h + S.NODE_COUNT] = this.nodeCount;
    m[h + S.NODE_TYPE] = dict.nodeTypes.region.ptr;
    m[h + S.BASE_NODES] = base.layout.nodes;
    m[h + S.FWD_NODE] = base.w('fwdNode') * 4;
    m[h + S.FWD_KEY] = base.w('fwdKey') * 4;
    m[h + S.FWD_ENT] = base.w('fwdEnt') * 4;
    m[h + S.ADD_COUNT] = overlay.addCount;
    m[h + S.ADD_PTR] = overlay.adds?.ptr ?? 0;
    m[h + S.DEL_COUNT] = overlay.delCount;
    m[h + S.DEL_PTR] = overlay.dels?.ptr ?? 0;
    m[h + S.COND_COUNT] = this.condCount;
    m[h + S.COND_NAME] = dict.condNames.region.ptr;
    m[h + S.COND_EXPIRY] = this.expiring ? dict.condExpiry.region.ptr : 0;
    this.header = header.ptr;
    const held = [header, base.region, dict.nodeTypes.region, dict.condNames.region, dict.condExpiry.region];
    if (overlay.adds) held.push(overlay.adds);
    if (overlay.addsBySubj) held.push(overlay.addsBySubj);
    if (overlay.dels) held.push(overlay.dels);
    let record: Region | undefined;
    if (dict.shared) {
      record = new Region(R.WORDS * 4);
      const at = dict.shared.at;
      const w = u32();
      const r = record.ptr >>> 2;
      w[r + R.HEADER] = header.ptr;
      w[r + R.REV_LO] = revision % 2 ** 32;
      w[r + R.REV_HI] = Math.floor(revision / 2 ** 32);
      w[r + R.NODE_COUNT] = this.nodeCount;
      w[r + R.NAME_COUNT] = this.nameCount;
      w[r + R.TABLE] = at.words;
      w[r + R.MASK] = at.mask;
      w[r + R.SPANS] = at.spans;
      w[r + R.NODE_TYPE] = dict.nodeTypes.region.ptr;
      w[r + R.EXPIRING] = this.expiring ? 1 : 0;
      serials = (serials + 1) >>> 0;
      w[r + R.SERIAL] = serials;
      held.push(record, ...dict.shared.regions());
    }
    this.record = record?.ptr ?? 0;
    this.hold = holdUntilCollected(this, held);
    record?.drop();
    // The header and the overlay image's regions were made for this snapshot alone: drop their
    // creation references so the snapshot's hold is the only one (freed when it is collected).
    header.drop();
    overlay.adds?.drop();
    overlay.addsBySubj?.drop();
    overlay.dels?.drop();
  }

  /**
   * Keeps the snapshot's memory while an asynchronous reader (a pool batch, a streamed list) uses
   * it. Contract: a reader may use a snapshot without a pin only synchronously, within the
   * macrotask that obtained it (microtask-only awaits included); across any wait for I/O or a
   * timer it must pin first. Memory is only released from a timer or an immediate, never during
   * a call.
   */
  pin(): void {
    this.pins++;
  }
  unpin(): void {
    this.pins--;
    if (this.pins === 0 && this.graceOver) setImmediate(() => this.release()).unref();
  }
  /** Current pins (asynchronous readers holding this snapshot). */
  get pinCount(): number {
    return this.pins;
  }

  private graceOver = false;

  /**
   * Called when a newer snapshot is published: the memory only this snapshot holds (its header,
   * its overlay image, a replaced base) is released once `afterMs` passed (0: after the current
   * macrotask) and no pin is left. Retention is what bounds memory under a write burst: with a
   * reader after every write each write publishes an image of the whole overlay, so images kept
   * for seconds add up to gigabytes (the wasm memory never shrinks); kept only while in use, a
   * burst holds a handful.
   */
  retire(afterMs: number): void {
    if (this.retired) return;
    this.retired = true;
    setTimeout(() => {
      this.graceOver = true;
      this.release();
    }, afterMs).unref();
  }

  private release(): void {
    if (this.pins > 0 || this.hold.released) return;
    this.hold.release();
  }

  /** True once the memory was released (reading it afterwards is a bug). */
  get released(): boolean {
    return this.hold.released;
  }

  /** Node id of `T:id` / `T:*` if this snapshot knows it. */
  nodeId(s: string): number | undefined {
    const id = this.dict.nodes.get(s);
    return id !== undefined && id < this.nodeCount ? id : undefined;
  }

  nameId(s: string): number | undefined {
    const id = this.dict.names.get(s);
    return id !== undefined && id < this.nameCount ? id : undefined;
  }

  private wild: Map<number, number> | undefined;

  /** Node of `T:*` for type name id `type`, or 0xffffffff when no such wildcard tuple subject exists. */
  wildcardOf(type: number): number {
    this.wild ??= new Map();
    let w = this.wild.get(type);
    if (w === undefined) {
      w = this.nodeId(`${this.dict.nameList[type] ?? ''}:*`) ?? 0xffffffff;
      this.wild.set(type, w);
    }
    return w;
  }

  /** Type name id of a node (without the wildcard bit). */
  nodeType(n: number): number {
    return (this.dict.nodeTypes.get(n) & ~WILDCARD_BIT) >>> 0;
  }

  // ---- id-level reads (no strings): the reverse walk of ListObjects over u32 ids ----

  /** True when the base tuple (obj, rel, subjRel, subj) is deleted in this snapshot's overlay. */
  isDeleted(obj: number, rel: number, sr: number, subj: number): boolean {
    return this.overlay.isDeleted(obj, rel, sr, subj);
  }

  /** Condition binding of the base tuple (obj, rel, subjRel, subj); 0 when unconditioned or absent. */
  baseCondition(obj: number, rel: number, sr: number, subj: number): number {
    if (this.condCount <= 1) return 0;
    const at = this.base.find(obj, rel, sr, subj);
    return at < 0 ? 0 : (u32()[this.base.w('fwdEnt') + 2 * at + 1] ?? 0) >>> COND_SHIFT;
  }

  /**
   * Overlay-added records whose subject is (subj, subjRel), in (obj, rel) order: the word offset
   * of each in `u32()` (obj, rel, subj, meta), valid while this snapshot is.
   */
  addedBySubject(subj: number, sr: number): Iterable<number> {
    return this.overlay.addsOfSubject(subj, sr);
  }

  /** Name string of a name id (type, relation, condition). */
  nameOf(id: number): string {
    return this.dict.nameList[id] ?? '';
  }

  /** Node string of a node id of this snapshot. */
  nodeOf(id: number): string {
    return this.dict.nodeList[id] ?? '';
  }

  /** Expiry (ms) of stored binding `id`; undefined when it never expires. */
  expiryOf(id: number): number | undefined {
    return id === 0 ? undefined : this.dict.conds[id]?.expiresAt;
  }

  /** The first expiry after `now` among the store's bindings (Infinity when none): answers may change then. */
  nextExpiry(now: number): number {
    return this.expiring ? this.dict.nextExpiry(now) : Number.POSITIVE_INFINITY;
  }

  /**
   * This snapshot as the TupleView of a query at instant `now` (ms): tuples whose expiry is at or
   * before `now` are left out. The snapshot itself when none of its tuples expires.
   * Example: `doc:1#viewer@user:anne` expiring at T: at(T - 1) yields it, at(T) does not.
   */
  at(now: number): TupleView {
    if (!this.expiring) return this;
    const live = (t: TupleEntry): boolean => t.expiresAt === undefined || t.expiresAt > now;
    return {
      revision: this.revision,
      users: (object: string, relation: string): Iterable<TupleEntry> => filter(this.users(object, relation), live),
      objects: (objectType: string, relation: string, user: string): Iterable<TupleEntry> =>
        filter(this.objects(objectType, relation, user), live),
    };
  }

  /** See Dictionary.expiryEpoch: 0 for a snapshot without expiring tuples. */
  expiryEpoch(now: number): number {
    return this.expiring ? this.dict.expiryEpoch(now) : 0;
  }

  /** The stored condition binding `id` as a tuple condition (undefined for 0 and for an expiry without condition). */
  conditionOf(id: number): RelationshipCondition | undefined {
    return this.condition(id << COND_SHIFT);
  }

  private userString(subj: number, sr: number): string {
    const s = this.dict.nodeList[subj] ?? '';
    return sr === 0 ? s : `${s}#${this.dict.nameList[sr - 1] ?? ''}`;
  }

  private condition(meta: number): RelationshipCondition | undefined {
    const c = meta >>> COND_SHIFT;
    if (c === 0) return undefined;
    const b = this.dict.conds[c];
    if (!b || b.name === '') return undefined;
    return b.context ? { name: b.name, context: b.context } : { name: b.name };
  }

  private entry(obj: number, rel: number, subj: number, meta: number): TupleEntry {
    const condition = this.condition(meta);
    const e = {
      object: this.dict.nodeList[obj] ?? '',
      relation: this.dict.nameList[rel] ?? '',
      user: this.userString(subj, meta & SR_MASK),
    };
    const expiresAt = this.expiring ? this.expiryOf(meta >>> COND_SHIFT) : undefined;
    if (expiresAt !== undefined) return condition ? { ...e, condition, expiresAt } : { ...e, expiresAt };
    return condition ? { ...e, condition } : e;
  }

  *users(object: string, relation: string): Iterable<TupleEntry> {
    const obj = this.nodeId(object);
    const rel = this.nameId(relation);
    if (obj === undefined || rel === undefined) return;
    const [lo, hi] = this.base.range(obj, rel);
    const fe = this.base.w('fwdEnt');
    for (let i = lo; i < hi; i++) {
      const m = u32();
      const subj = m[fe + 2 * i] ?? 0;
      const meta = m[fe + 2 * i + 1] ?? 0;
      if (this.overlay.isDeleted(obj, rel, meta & SR_MASK, subj)) continue;
      yield this.entry(obj, rel, subj, meta);
    }
    for (const p of this.overlay.addsOf(obj, rel)) {
      const w = u32();
      yield this.entry(obj, rel, w[p + 2] as number, w[p + 3] as number);
    }
  }

  /** A user string's (subject node, subjRel), undefined when the snapshot has never seen it. */
  private subject(user: string): readonly [number, number] | undefined {
    const hash = user.lastIndexOf('#');
    const subj = this.nodeId(hash === -1 ? user : user.slice(0, hash));
    const sr = hash === -1 ? 0 : (this.nameId(user.slice(hash + 1)) ?? -1) + 1;
    return subj === undefined || sr < 0 ? undefined : [subj, sr];
  }

  /** The base's reverse entries [lo, hi) of subject node `subj` (a node of the base). */
  private reverseRange(subj: number): readonly [number, number] {
    const rn = this.base.w('revNode');
    const m = u32();
    return [m[rn + subj] ?? 0, m[rn + subj + 1] ?? 0];
  }

  /**
   * Every tuple `<objectType>:<any id>#<relation>@user` of this snapshot, any relation when
   * `relation` is undefined, as its (relation, object) names, in no particular order: what Read by
   * user needs (engine/commands/read.ts). Expired tuples are included (a snapshot holds what is
   * stored). A generator that reads shared memory: pin the snapshot to hold it across waits.
   */
  *namesOfUser(objectType: string, user: string, relation?: string): Generator<readonly [string, string]> {
    const s = this.subject(user);
    const rel = relation === undefined ? -1 : this.nameId(relation);
    const type = this.nameId(objectType);
    if (s === undefined || rel === undefined || type === undefined) return;
    const [subj, sr] = s;
    const names = this.dict.nameList;
    const nodes = this.dict.nodeList;
    if (subj < this.base.layout.nodes) {
      const re = this.base.w('revEnt');
      const [lo, hi] = this.reverseRange(subj);
      for (let i = lo; i < hi; i++) {
        const m = u32();
        const meta = m[re + 2 * i + 1] ?? 0;
        if (meta >>> COND_SHIFT !== sr) continue;
        const r = meta & SR_MASK;
        if (rel !== -1 && r !== rel) continue;
        const obj = m[re + 2 * i] ?? 0;
        if (this.nodeType(obj) !== type || this.overlay.isDeleted(obj, r, sr, subj)) continue;
        yield [names[r] ?? '', nodes[obj] ?? ''];
      }
    }
    for (const p of this.overlay.addsOfSubject(subj, sr)) {
      const w = u32();
      const obj = w[p] as number;
      const r = w[p + 1] as number;
      if ((rel === -1 || r === rel) && this.nodeType(obj) === type) yield [names[r] ?? '', nodes[obj] ?? ''];
    }
  }

  *objects(objectType: string, relation: string, user: string): Iterable<TupleEntry> {
    const s = this.subject(user);
    const rel = this.nameId(relation);
    const type = this.nameId(objectType);
    if (s === undefined || rel === undefined || type === undefined) return;
    const [subj, sr] = s;
    const want = (rel | (sr << COND_SHIFT)) >>> 0;
    if (subj < this.base.layout.nodes) {
      const re = this.base.w('revEnt');
      const [lo, hi] = this.reverseRange(subj);
      for (let i = lo; i < hi; i++) {
        const m = u32();
        if (m[re + 2 * i + 1] !== want) continue;
        const obj = m[re + 2 * i] ?? 0;
        if (this.nodeType(obj) !== type) continue;
        if (this.overlay.isDeleted(obj, rel, sr, subj)) continue;
        const at = this.base.find(obj, rel, sr, subj);
        yield this.entry(obj, rel, subj, at >= 0 ? (m[this.base.w('fwdEnt') + 2 * at + 1] ?? 0) : sr);
      }
    }
    for (const p of this.overlay.addsOfSubject(subj, sr)) {
      const w = u32();
      const obj = w[p] as number;
      if (w[p + 1] === rel && this.nodeType(obj) === type) yield this.entry(obj, rel, subj, w[p + 3] as number);
    }
  }
}
