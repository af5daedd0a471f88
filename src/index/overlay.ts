// The write overlay: tuples added and base tuples deleted since the base was built, kept as an
// ordered change log (so a background merge can drop exactly the prefix it folded in) plus two
// record lists kept sorted incrementally (binary search + memmove per change), so publishing a
// snapshot is one copy into shared memory, not a sort. The JS lookup maps TupleView needs are
// built lazily, once per published image, only if a TypeScript evaluator reads it.

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

/** Records (obj, rel, subj, meta) sorted by (obj, rel, subjRel, subj); unique per key. */
export class SortedRecords {
  words = new Uint32Array(64);
  length = 0;

  /** Index of the first record >= the key, and whether it is equal. */
  private search(obj: number, rel: number, sr: number, subj: number): [number, boolean] {
    const w = this.words;
    let lo = 0;
    let hi = this.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const p = mid * 4;
      const d = (w[p] ?? 0) - obj || (w[p + 1] ?? 0) - rel || ((w[p + 3] ?? 0) & SR_MASK) - sr || (w[p + 2] ?? 0) - subj;
      if (d < 0) lo = mid + 1;
      else hi = mid;
    }
    const p = lo * 4;
    const eq = lo < this.length && w[p] === obj && w[p + 1] === rel && ((w[p + 3] ?? 0) & SR_MASK) === sr && w[p + 2] === subj;
    return [lo, eq];
  }

  /** Inserts or replaces the record with this key. */
  put(r: Rec): void {
    const [at, eq] = this.search(r.obj, r.rel, r.meta & SR_MASK, r.subj);
    if (!eq) {
      if ((this.length + 1) * 4 > this.words.length) {
        const next = new Uint32Array(this.words.length * 2);
        next.set(this.words);
        this.words = next;
      }
      this.words.copyWithin(at * 4 + 4, at * 4, this.length * 4);
      this.length++;
    }
    this.words.set([r.obj, r.rel, r.subj, r.meta], at * 4);
  }

  remove(obj: number, rel: number, sr: number, subj: number): void {
    const [at, eq] = this.search(obj, rel, sr, subj);
    if (!eq) return;
    this.words.copyWithin(at * 4, at * 4 + 4, this.length * 4);
    this.length--;
  }

  clear(): void {
    this.length = 0;
  }

  records(): Generator<Rec> {
    return recordsOf(this.words.subarray(0, this.length * 4));
  }

  /** A copy of the live words. */
  copy(): Uint32Array {
    return this.words.slice(0, this.length * 4);
  }

  /** One copy into a new shared Region, or undefined when empty. */
  region(): Region | undefined {
    if (this.length === 0) return undefined;
    const r = new Region(this.length * 16);
    u32().set(this.words.subarray(0, this.length * 4), r.ptr >>> 2);
    return r;
  }
}

function* recordsOf(w: Uint32Array): Generator<Rec> {
  for (let i = 0; i + 3 < w.length; i += 4) yield { obj: w[i] ?? 0, rel: w[i + 1] ?? 0, subj: w[i + 2] ?? 0, meta: w[i + 3] ?? 0 };
}

/** JS lookups over one image's records, for TupleView reads. */
export interface OverlayMaps {
  /** `obj,rel` → added records. */
  readonly addsByKey: ReadonlyMap<string, readonly Rec[]>;
  /** `subj,sr` → added records (reverse). */
  readonly addsBySubject: ReadonlyMap<string, readonly Rec[]>;
  /** `obj,rel,sr,subj` of deleted base tuples. */
  readonly deleted: ReadonlySet<string>;
}

/** Immutable serialised overlay: sorted records in shared memory plus lazily built JS maps. */
export class OverlayImage {
  private cached: OverlayMaps | undefined;
  constructor(
    readonly adds: Region | undefined,
    readonly addCount: number,
    readonly dels: Region | undefined,
    readonly delCount: number,
    /** Copies of the sorted record words (4 u32 per record) for the lazy maps. */
    private readonly addWords: Uint32Array,
    private readonly delWords: Uint32Array,
  ) {}

  get maps(): OverlayMaps {
    if (this.cached) return this.cached;
    const byKey = new Map<string, Rec[]>();
    const bySubj = new Map<string, Rec[]>();
    for (const r of recordsOf(this.addWords)) {
      const k1 = `${r.obj},${r.rel}`;
      (byKey.get(k1) ?? byKey.set(k1, []).get(k1))?.push(r);
      const k2 = `${r.subj},${r.meta & SR_MASK}`;
      (bySubj.get(k2) ?? bySubj.set(k2, []).get(k2))?.push(r);
    }
    const deleted = new Set([...recordsOf(this.delWords)].map((r) => key(r.obj, r.rel, r.meta & SR_MASK, r.subj)));
    this.cached = { addsByKey: byKey, addsBySubject: bySubj, deleted };
    return this.cached;
  }
}

export const EMPTY_OVERLAY = new OverlayImage(undefined, 0, undefined, 0, new Uint32Array(0), new Uint32Array(0));

export class Overlay {
  readonly log: Change[] = [];
  private readonly adds = new SortedRecords();
  private readonly dels = new SortedRecords();

  constructor(private base: Base) {}

  get size(): number {
    return this.adds.length + this.dels.length;
  }

  /** Applies one change (deletes first within a write, as storage does). */
  apply(c: Change): void {
    this.log.push(c);
    const sr = c.meta & SR_MASK;
    if (c.del) {
      this.adds.remove(c.obj, c.rel, sr, c.subj);
      if (this.base.find(c.obj, c.rel, sr, c.subj) >= 0) this.dels.put({ obj: c.obj, rel: c.rel, subj: c.subj, meta: sr });
    } else {
      this.adds.put({ obj: c.obj, rel: c.rel, subj: c.subj, meta: c.meta });
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

  /** Current added records (for a merge). */
  addedRecords(): Rec[] {
    return [...this.adds.records()];
  }
  /** Deleted base keys as sorted record words (a copy, for a merge). */
  deletedWords(): Uint32Array {
    return this.dels.copy();
  }

  image(): OverlayImage {
    if (this.size === 0) return EMPTY_OVERLAY;
    return new OverlayImage(this.adds.region(), this.adds.length, this.dels.region(), this.dels.length, this.adds.copy(), this.dels.copy());
  }
}

export { key as overlayKey };
