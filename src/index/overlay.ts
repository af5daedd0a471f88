// The write overlay: tuples added and base tuples deleted since the base was built, kept as an
// ordered change log (so a background merge can drop exactly the prefix it folded in) plus the
// derived maps readers need. Each publication serialises it into sorted shared-memory records
// (obj, rel, subj, meta) that the walker binary-searches; a snapshot never sees later changes.

import { SR_MASK } from '../abi.js';
import type { Base } from './base.js';
import { Region, u32 } from './memory.js';

export interface Change {
  readonly revision: number;
  readonly del: boolean;
  readonly obj: number;
  readonly rel: number;
  readonly subj: number;
  /** subjRel | cond << 12 (cond ignored for deletes). */
  readonly meta: number;
}

export interface Rec {
  readonly obj: number;
  readonly rel: number;
  readonly subj: number;
  readonly meta: number;
}

const key = (obj: number, rel: number, sr: number, subj: number): string => `${obj},${rel},${sr},${subj}`;

/** Immutable serialised overlay: sorted records in shared memory plus JS lookups for TupleView. */
export interface OverlayImage {
  readonly adds: Region | undefined;
  readonly addCount: number;
  readonly dels: Region | undefined;
  readonly delCount: number;
  /** `obj,rel` → added records. */
  readonly addsByKey: ReadonlyMap<string, readonly Rec[]>;
  /** `subj,sr` → added records (reverse). */
  readonly addsBySubject: ReadonlyMap<string, readonly Rec[]>;
  /** `obj,rel,sr,subj` of deleted base tuples. */
  readonly deleted: ReadonlySet<string>;
}

export const EMPTY_OVERLAY: OverlayImage = {
  adds: undefined, addCount: 0, dels: undefined, delCount: 0,
  addsByKey: new Map(), addsBySubject: new Map(), deleted: new Set(),
};

function cmpRec(a: Rec, b: Rec): number {
  return a.obj - b.obj || a.rel - b.rel || (a.meta & SR_MASK) - (b.meta & SR_MASK) || a.subj - b.subj;
}

/** Writes sorted records into a new Region (4 u32 per record). */
export function recordsRegion(recs: Rec[]): Region | undefined {
  if (recs.length === 0) return undefined;
  recs.sort(cmpRec);
  const r = new Region(recs.length * 16);
  const m = u32();
  let p = r.ptr >>> 2;
  for (const x of recs) {
    m[p++] = x.obj;
    m[p++] = x.rel;
    m[p++] = x.subj;
    m[p++] = x.meta;
  }
  return r;
}

export class Overlay {
  readonly log: Change[] = [];
  private readonly adds = new Map<string, Rec>();
  private readonly dels = new Map<string, Rec>();

  constructor(private base: Base) {}

  get size(): number {
    return this.adds.size + this.dels.size;
  }

  /** Applies one change (deletes first within a write, as storage does). */
  apply(c: Change): void {
    this.log.push(c);
    this.fold(c);
  }

  private fold(c: Change): void {
    const sr = c.meta & SR_MASK;
    const k = key(c.obj, c.rel, sr, c.subj);
    if (c.del) {
      this.adds.delete(k);
      if (this.base.find(c.obj, c.rel, sr, c.subj) >= 0) this.dels.set(k, { obj: c.obj, rel: c.rel, subj: c.subj, meta: sr });
    } else {
      this.adds.set(k, { obj: c.obj, rel: c.rel, subj: c.subj, meta: c.meta });
    }
  }

  /** Restarts over a new base that already contains every change up to `revision`. */
  rebase(base: Base, revision: number): void {
    this.base = base;
    const tail = this.log.filter((c) => c.revision > revision);
    this.log.length = 0;
    this.adds.clear();
    this.dels.clear();
    for (const c of tail) this.apply(c);
  }

  /** Current added records and deleted base keys (for a merge). */
  addedRecords(): Rec[] {
    return [...this.adds.values()];
  }
  deletedKeys(): Set<string> {
    return new Set(this.dels.keys());
  }

  image(): OverlayImage {
    if (this.size === 0) return EMPTY_OVERLAY;
    const addList = [...this.adds.values()];
    const byKey = new Map<string, Rec[]>();
    const bySubj = new Map<string, Rec[]>();
    for (const r of addList) {
      const k1 = `${r.obj},${r.rel}`;
      (byKey.get(k1) ?? byKey.set(k1, []).get(k1))?.push(r);
      const k2 = `${r.subj},${r.meta & SR_MASK}`;
      (bySubj.get(k2) ?? bySubj.set(k2, []).get(k2))?.push(r);
    }
    return {
      adds: recordsRegion(addList),
      addCount: addList.length,
      dels: recordsRegion([...this.dels.values()]),
      delCount: this.dels.size,
      addsByKey: byKey,
      addsBySubject: bySubj,
      deleted: new Set(this.dels.keys()),
    };
  }
}

export { key as overlayKey };
