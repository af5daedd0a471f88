// The immutable base index: forward and reverse posting lists as CSR in ONE shared-memory Region.
// Built from tuple columns of interned ids (a full build, or a background merge of base + overlay).
//
// Layout (u32 words, offsets relative to the region so an image loads with one memcpy):
//   fwdNode[nodes+1]        first key index of node n            (node = object `T:id`)
//   fwdKey[(keys+1)*2]      (relation, first entry) per (node, relation), sentinel last
//   fwdEnt[entries*2]       (subject node, meta) sorted by (subjRel, subject) inside a key
//   revNode[nodes+1]        first reverse entry of subject node n
//   revEnt[entries*2]       (object node, relation | subjRel << 12), ordered by (object, relation)
// meta = subjRel | condBinding << 12; subjRel = 0 for an object/wildcard, relation id + 1 for a userset.
// Bytes per tuple: 16 (two entries) + 8 per key + 8 per node (see bench "bytes/tuple").

import { COND_SHIFT, SR_MASK } from '../abi.js';
import { Region, u32 } from './memory.js';

/** Units of work (≈ tuples touched) between two yields of a background build: a few ms. */
export const SLICE = 32_768;

/** Unsorted tuple columns of interned ids. */
interface Columns {
  obj: Uint32Array;
  rel: Uint32Array;
  subj: Uint32Array;
  meta: Uint32Array;
  length: number;
}

export interface BaseLayout {
  readonly nodes: number;
  readonly keys: number;
  readonly entries: number;
}

/** Word offsets of each array inside the region, derived from the three counts. */
export function offsets(l: BaseLayout): {
  fwdNode: number;
  fwdKey: number;
  fwdEnt: number;
  revNode: number;
  revEnt: number;
  words: number;
} {
  const fwdNode = 0;
  const fwdKey = fwdNode + l.nodes + 1;
  const fwdEnt = fwdKey + (l.keys + 1) * 2;
  const revNode = fwdEnt + l.entries * 2;
  const revEnt = revNode + l.nodes + 1;
  return { fwdNode, fwdKey, fwdEnt, revNode, revEnt, words: revEnt + l.entries * 2 };
}

export class Base {
  readonly region: Region;
  readonly layout: BaseLayout;
  readonly off: ReturnType<typeof offsets>;
  constructor(region: Region, layout: BaseLayout) {
    this.region = region;
    this.layout = layout;
    this.off = offsets(layout);
  }
  /** Absolute word index of an array start. */
  w(name: 'fwdNode' | 'fwdKey' | 'fwdEnt' | 'revNode' | 'revEnt'): number {
    return (this.region.ptr >>> 2) + this.off[name];
  }
  /** Entry range [lo, hi) of `obj#rel`, or [0, 0). */
  range(obj: number, rel: number): [number, number] {
    if (obj >= this.layout.nodes) return [0, 0];
    const m = u32();
    const fn = this.w('fwdNode');
    const fk = this.w('fwdKey');
    const k1 = m[fn + obj + 1] ?? 0;
    for (let k = m[fn + obj] ?? 0; k < k1; k++) {
      if (m[fk + 2 * k] === rel) return [m[fk + 2 * k + 1] ?? 0, m[fk + 2 * k + 3] ?? 0];
    }
    return [0, 0];
  }
  /** Index of the entry (sr, subj) in `obj#rel`, or -1. */
  find(obj: number, rel: number, sr: number, subj: number): number {
    const [lo0, hi0] = this.range(obj, rel);
    const m = u32();
    const fe = this.w('fwdEnt');
    let lo = lo0;
    let hi = hi0;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const msr = (m[fe + 2 * mid + 1] ?? 0) & SR_MASK;
      const ms = m[fe + 2 * mid] ?? 0;
      if (msr < sr || (msr === sr && ms < subj)) lo = mid + 1;
      else hi = mid;
    }
    if (lo < hi0 && m[fe + 2 * lo] === subj && ((m[fe + 2 * lo + 1] ?? 0) & SR_MASK) === sr) return lo;
    return -1;
  }
  get bytes(): number {
    return this.off.words * 4;
  }
  /** One more reference on the memory (a checkpoint copying it); each is given back by `drop`. */
  retain(): this {
    this.region.retain();
    return this;
  }
  drop(): void {
    this.region.drop();
  }
}

/** Compare tuples i and j by (rel, subjRel, subj). */
function cmp(c: Columns, i: number, j: number): number {
  const a = c.rel[i] ?? 0;
  const b = c.rel[j] ?? 0;
  if (a !== b) return a - b;
  const sa = (c.meta[i] ?? 0) & SR_MASK;
  const sb = (c.meta[j] ?? 0) & SR_MASK;
  if (sa !== sb) return sa - sb;
  return (c.subj[i] ?? 0) - (c.subj[j] ?? 0);
}

/** Buckets this short are insertion-sorted; longer ones are merge-sorted from runs this long. */
const RUN = 12;

/** Sorts order[a, b) by `cmp` in place, by insertion. */
function insertionSort(c: Columns, order: Uint32Array, a: number, b: number): void {
  for (let i = a + 1; i < b; i++) {
    const x = order[i] ?? 0;
    let j = i - 1;
    while (j >= a && cmp(c, order[j] ?? 0, x) > 0) {
      order[j + 1] = order[j] ?? 0;
      j--;
    }
    order[j + 1] = x;
  }
}

/**
 * Sorts order[a, b) by `cmp` in place: insertion-sorted runs of RUN, then merged in passes
 * between the range and `tmp` (at least b - a long). Allocates nothing: `Array.prototype.sort`
 * with a comparator, which this replaces, copied each bucket into a work array of its own, and a
 * merge rebuilds every bucket of the base (measured in the 3M import: ≈ 180 bytes allocated per
 * imported tuple on the main thread, each young-generation collection sooner).
 */
function mergeSort(c: Columns, order: Uint32Array, a: number, b: number, tmp: Uint32Array): void {
  const n = b - a;
  for (let s = a; s < b; s += RUN) insertionSort(c, order, s, Math.min(s + RUN, b));
  // Each pass merges pairs of sorted runs of `width` from `src` (offset `so`) into `dst` (offset `dw`).
  let src = order;
  let so = a;
  let dst = tmp;
  let dw = 0;
  for (let width = RUN; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      let k = lo;
      while (i < mid && j < hi) {
        const x = src[so + i] ?? 0;
        const y = src[so + j] ?? 0;
        if (cmp(c, y, x) < 0) {
          dst[dw + k++] = y;
          j++;
        } else {
          dst[dw + k++] = x;
          i++;
        }
      }
      while (i < mid) dst[dw + k++] = src[so + i++] ?? 0;
      while (j < hi) dst[dw + k++] = src[so + j++] ?? 0;
    }
    const t = src;
    src = dst;
    dst = t;
    const o = so;
    so = dw;
    dw = o;
  }
  if (src !== order) for (let i = 0; i < n; i++) order[a + i] = src[so + i] ?? 0;
}

/**
 * Builds a base over `nodes` node ids. A generator so a background merge can yield to the event
 * loop between slices (`yield` every SLICE units of work); a plain build just drains it.
 */
export function* buildBase(c: Columns, nodes: number): Generator<void, Base> {
  const n = c.length;
  // 1. counting sort of tuple indices by object
  const start = new Uint32Array(nodes + 1);
  for (let i = 0; i < n; i++) {
    const o = (c.obj[i] ?? 0) + 1;
    start[o] = (start[o] ?? 0) + 1;
    if ((i & 0xffff) === 0xffff) yield;
  }
  for (let v = 0; v < nodes; v++) start[v + 1] = (start[v + 1] ?? 0) + (start[v] ?? 0);
  const order = new Uint32Array(n);
  const fill = start.slice(0, nodes);
  for (let i = 0; i < n; i++) {
    const o = c.obj[i] ?? 0;
    order[fill[o] ?? 0] = i;
    fill[o] = (fill[o] ?? 0) + 1;
    if ((i & 0xffff) === 0xffff) yield;
  }
  yield;
  // 2. sort each object's bucket by (rel, subjRel, subj); count keys
  let keys = 0;
  let work = 0;
  let scratch = new Uint32Array(0);
  for (let v = 0; v < nodes; v++) {
    const a = start[v] ?? 0;
    const b = start[v + 1] ?? 0;
    work += 4 + (b - a) * 2;
    if (work >= SLICE) {
      work = 0;
      yield;
    }
    if (b - a > 1) {
      if (b - a <= RUN) insertionSort(c, order, a, b);
      else {
        if (scratch.length < b - a) scratch = new Uint32Array(Math.max(b - a, 2 * scratch.length));
        mergeSort(c, order, a, b, scratch);
      }
    }
    for (let i = a; i < b; i++) if (i === a || c.rel[order[i] ?? 0] !== c.rel[order[i - 1] ?? 0]) keys++;
  }
  // 3. emit forward arrays into the region
  const layout: BaseLayout = { nodes, keys, entries: n };
  const off = offsets(layout);
  const region = new Region(off.words * 4, false); // every word is written below
  const base = new Base(region, layout);
  let m = u32();
  const fn = base.w('fwdNode');
  const fk = base.w('fwdKey');
  const fe = base.w('fwdEnt');
  let k = 0;
  work = 0;
  for (let v = 0; v < nodes; v++) {
    work += 4 + (start[v + 1] ?? 0) - (start[v] ?? 0);
    if (work >= SLICE) {
      work = 0;
      yield;
      m = u32(); // other code may have grown the memory between slices
    }
    m[fn + v] = k;
    const a = start[v] ?? 0;
    const b = start[v + 1] ?? 0;
    for (let i = a; i < b; i++) {
      const t = order[i] ?? 0;
      if (i === a || c.rel[t] !== c.rel[order[i - 1] ?? 0]) {
        m[fk + 2 * k] = c.rel[t] ?? 0;
        m[fk + 2 * k + 1] = i;
        k++;
      }
      m[fe + 2 * i] = c.subj[t] ?? 0;
      m[fe + 2 * i + 1] = c.meta[t] ?? 0;
    }
  }
  m[fn + nodes] = k;
  m[fk + 2 * k] = 0;
  m[fk + 2 * k + 1] = n;
  yield;
  // 4. reverse CSR: counting sort of forward positions by subject (stable: keeps (object, relation) order)
  m = u32();
  const rn = base.w('revNode');
  const re = base.w('revEnt');
  const rstart = new Uint32Array(nodes + 1);
  for (let i = 0; i < n; i++) {
    const s = (c.subj[i] ?? 0) + 1;
    rstart[s] = (rstart[s] ?? 0) + 1;
  }
  for (let v = 0; v < nodes; v++) rstart[v + 1] = (rstart[v + 1] ?? 0) + (rstart[v] ?? 0);
  for (let v = 0; v <= nodes; v++) m[rn + v] = rstart[v] ?? 0;
  work = 0;
  for (let v = 0; v < nodes; v++) {
    work += 4 + (start[v + 1] ?? 0) - (start[v] ?? 0);
    if (work >= SLICE) {
      work = 0;
      yield;
      m = u32();
    }
    for (let i = start[v] ?? 0, b = start[v + 1] ?? 0; i < b; i++) {
      const t = order[i] ?? 0;
      const s = c.subj[t] ?? 0;
      const at = rstart[s] ?? 0;
      rstart[s] = at + 1;
      m[re + 2 * at] = v;
      m[re + 2 * at + 1] = ((c.rel[t] ?? 0) | (((c.meta[t] ?? 0) & SR_MASK) << COND_SHIFT)) >>> 0;
    }
  }
  return base;
}

/** Runs a generator to completion synchronously. */
export function drain<T>(g: Generator<void, T>): T {
  for (;;) {
    const r = g.next();
    if (r.done) return r.value;
  }
}

/** Growable columns for collecting tuples. */
export class ColumnBuilder implements Columns {
  obj: Uint32Array;
  rel: Uint32Array;
  subj: Uint32Array;
  meta: Uint32Array;
  length = 0;
  constructor(capacity = 1024) {
    const c = Math.max(capacity, 16);
    this.obj = new Uint32Array(c);
    this.rel = new Uint32Array(c);
    this.subj = new Uint32Array(c);
    this.meta = new Uint32Array(c);
  }
  push(o: number, r: number, s: number, meta: number): void {
    if (this.length === this.obj.length) {
      const grow = (a: Uint32Array): Uint32Array => {
        const b = new Uint32Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.obj = grow(this.obj);
      this.rel = grow(this.rel);
      this.subj = grow(this.subj);
      this.meta = grow(this.meta);
    }
    const i = this.length++;
    this.obj[i] = o;
    this.rel[i] = r;
    this.subj[i] = s;
    this.meta[i] = meta;
  }
}
