// The write overlay: tuples added and base tuples deleted since the base was built, kept as three
// record lists kept sorted incrementally (binary search + memmove per change): the added records
// in key order and again in subject order, and the deleted base keys in key order. Publishing a
// snapshot is one copy of each into shared memory, not a sort, and a snapshot answers every read
// by binary search over its copies: no per-snapshot JS lookup structure is built (building one
// per snapshot cost O(overlay) and its garbage on every write a reader followed). Once a background
// merge has copied the records, the changes applied after it are also logged in order (a packed
// ChangeLog), for the merge to replay over the base it builds.

import { SR_MASK } from '../abi.js';
import type { Base } from './base.js';
import { Region, u32 } from './memory.js';

/**
 * Changes in the order they were applied, packed: per change its record words (obj, rel, subj,
 * meta; a delete's meta is its subject relation alone) and a delete flag, in typed arrays that
 * grow by doubling, and each write's revision once per run of its changes (a write's changes are
 * logged together). Not one JS object per change: a log lives through a background merge (during
 * an import, seconds and many 50k-tuple chunks), long enough for such objects to be promoted to
 * V8's old space and marked by every major GC meanwhile; typed arrays are one object each.
 */
export class ChangeLog {
  private w = new Uint32Array(64 * 4);
  private d = new Uint8Array(64);
  /** The first change of each run and the run's revision. */
  private readonly starts: number[] = [];
  private readonly revs: number[] = [];
  length = 0;

  /** The record words of the changes (4 per change, from word 0): valid until the next push. */
  get words(): Uint32Array {
    return this.w;
  }

  /** True when change `i` is a delete. */
  isDelete(i: number): boolean {
    return this.d[i] === 1;
  }

  /** Room for `n` more changes (capacity at least doubled when it grows), and the run of `revision` open. */
  private grow(revision: number, n: number): void {
    const need = this.length + n;
    if (need > this.d.length) {
      const cap = Math.max(need, this.d.length * 2);
      const w = new Uint32Array(cap * 4);
      w.set(this.w.subarray(0, this.length * 4));
      const d = new Uint8Array(cap);
      d.set(this.d.subarray(0, this.length));
      this.w = w;
      this.d = d;
    }
    if (this.revs.length === 0 || this.revs[this.revs.length - 1] !== revision) {
      this.starts.push(this.length);
      this.revs.push(revision);
    }
  }

  push(revision: number, del: boolean, obj: number, rel: number, subj: number, meta: number): void {
    this.grow(revision, 1);
    const p = this.length * 4;
    this.w[p] = obj;
    this.w[p + 1] = rel;
    this.w[p + 2] = subj;
    this.w[p + 3] = meta;
    this.d[this.length++] = del ? 1 : 0;
  }

  /** Logs the changes of `words` (record words, 4 per change), all deletes or all writes. */
  pushAll(revision: number, del: boolean, words: Uint32Array): void {
    const n = words.length >>> 2;
    this.grow(revision, n);
    this.w.set(words, this.length * 4);
    this.d.fill(del ? 1 : 0, this.length, this.length + n);
    this.length += n;
  }

  /** Logs every change of `other`, in order: one copy per run of a revision. */
  append(other: ChangeLog): void {
    for (let r = 0; r < other.starts.length; r++) {
      const start = other.starts[r] as number;
      const end = other.runEnd(start);
      this.grow(other.revs[r] as number, end - start);
      this.w.set(other.w.subarray(start * 4, end * 4), this.length * 4);
      this.d.set(other.d.subarray(start, end), this.length);
      this.length += end - start;
    }
  }

  /** Index of the run holding change `i`. */
  private runOf(i: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if ((this.starts[mid] as number) <= i) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The revision of change `i`. */
  revisionAt(i: number): number {
    return this.revs[this.runOf(i)] as number;
  }

  /** The end (exclusive) of the run of changes of one revision that holds change `i`. */
  runEnd(i: number): number {
    const r = this.runOf(i) + 1;
    return r < this.starts.length ? (this.starts[r] as number) : this.length;
  }
}

/** Compares record `i` of `x` with record `j` of `y` (words obj, rel, subj, meta); 0 for the same key. */
type Compare = (x: Uint32Array, i: number, y: Uint32Array, j: number) => number;

/** Key order: (obj, rel, subjRel, subj), the order of the base's forward entries and the walker's. */
const byKey: Compare = (x, i, y, j) =>
  (x[i] as number) - (y[j] as number) ||
  (x[i + 1] as number) - (y[j + 1] as number) ||
  ((x[i + 3] as number) & SR_MASK) - ((y[j + 3] as number) & SR_MASK) ||
  (x[i + 2] as number) - (y[j + 2] as number);

/** Subject order: (subj, subjRel, obj, rel); the same keys as `byKey`, for reads by subject. */
const bySubject: Compare = (x, i, y, j) =>
  (x[i + 2] as number) - (y[j + 2] as number) ||
  ((x[i + 3] as number) & SR_MASK) - ((y[j + 3] as number) & SR_MASK) ||
  (x[i] as number) - (y[j] as number) ||
  (x[i + 1] as number) - (y[j + 1] as number);

/** The key searched for, as a record (searches are synchronous: one probe serves them all). */
const probe = new Uint32Array(4);
const EMPTY = new Uint32Array(0);

/** Sets the probe to the record (obj, rel, subj, subjRel); meta's other bits are 0. */
function setProbe(obj: number, rel: number, subj: number, sr: number): void {
  probe[0] = obj;
  probe[1] = rel;
  probe[2] = subj;
  probe[3] = sr;
}

/**
 * Index of the first of `count` records at word `b` of `w` that is >= the probe in `order`. A probe
 * of (obj, rel, 0, 0) in key order, or (0, 0, subj, subjRel) in subject order, finds the first
 * record of that prefix.
 */
function lowerBound(w: Uint32Array, b: number, count: number, order: Compare): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (order(w, b + mid * 4, probe, 0) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * `lowerBound` over the first `end` records searched from the top: records end-1, end-2, end-4, …
 * until one is below the probe, then a binary search between the last two. An insertBatch's puts
 * are placed from the last down, each below the one before: a put above every record left (in
 * key order, every record of an import of new objects, ids above the overlay's) is placed after
 * one comparison, one among them after ≈ 2·log2 of its distance from the top (a chunk of 50,000
 * puts spread over a million records: ≈ 9), where a binary search over all of them takes ≈ 20.
 */
function placeBelow(w: Uint32Array, b: number, end: number, order: Compare): number {
  let hi = end;
  for (let step = 1; ; step *= 2) {
    const i = hi - step;
    if (i < 0) return lowerBound(w, b, hi, order);
    if (order(w, b + i * 4, probe, 0) < 0) return i + 1 + lowerBound(w, b + (i + 1) * 4, hi - i - 1, order);
    hi = i;
  }
}

/**
 * Records (obj, rel, subj, meta) sorted in `order`, unique per key, kept in a shared-memory Region
 * owned by the overlay. Inserts and removes shift with `copyWithin` and a publication copies with
 * `copyWithin` too: both stay inside the one SharedArrayBuffer (memmove), where a `set()` from a
 * JS-heap array into shared memory copies element by element (measured ≈ 20× slower).
 */
class SortedRecords {
  private store = new Region(64 * 16);
  length = 0;

  constructor(private readonly order: Compare) {}

  private get at(): number {
    return this.store.ptr >>> 2;
  }

  /** Index of the first record >= the key; `eq`: it has the key. */
  private search(obj: number, rel: number, sr: number, subj: number): number {
    setProbe(obj, rel, subj, sr);
    const w = u32();
    const i = lowerBound(w, this.at, this.length, this.order);
    this.eq = i < this.length && this.order(w, this.at + i * 4, probe, 0) === 0;
    return i;
  }
  private eq = false;

  /** Room for `records` records, the live ones kept: at least double the Region, copied once. */
  private reserve(records: number): void {
    if (records * 16 <= this.store.size) return;
    const next = new Region(Math.max(this.store.size * 2, records * 16), false);
    u32().copyWithin(next.ptr >>> 2, this.at, this.at + this.length * 4);
    this.store.drop();
    this.store = next;
  }

  /** Inserts or replaces the record with this key. */
  put(obj: number, rel: number, subj: number, meta: number): void {
    const i = this.search(obj, rel, meta & SR_MASK, subj);
    if (!this.eq) {
      this.reserve(this.length + 1);
      u32().copyWithin(this.at + i * 4 + 4, this.at + i * 4, this.at + this.length * 4);
      this.length++;
    }
    const w = u32();
    const p = this.at + i * 4;
    w[p] = obj;
    w[p + 1] = rel;
    w[p + 2] = subj;
    w[p + 3] = meta;
  }

  remove(obj: number, rel: number, sr: number, subj: number): void {
    const i = this.search(obj, rel, sr, subj);
    if (!this.eq) return;
    u32().copyWithin(this.at + i * 4, this.at + i * 4 + 4, this.at + this.length * 4);
    this.length--;
  }

  clear(): void {
    this.length = 0;
  }

  /**
   * `remove` of every key in `keys` and then `put` of every record in `puts` (both as record
   * words sorted in this list's order, unique per key; a key's sr is `meta & SR_MASK`) in ONE
   * merge pass over the records: O(records + batch) where one call per change memmoves the tail
   * each time (quadratic for a bulk delete of thousands).
   */
  mergeBatch(keys: Uint32Array, puts: Uint32Array): void {
    if (keys.length === 0) {
      this.insertBatch(puts);
      return;
    }
    const w = u32();
    const b = this.at;
    const n = this.length;
    const out = new Uint32Array((n + (puts.length >>> 2)) * 4);
    const cmp = this.order;
    // Typed-array reads cast, not `?? 0`, and records copied word by word, not by a subarray
    // each: this pass runs over the whole list (thousands of records) for every batch.
    const copy = (from: Uint32Array, i: number): void => {
      out[o] = from[i] as number;
      out[o + 1] = from[i + 1] as number;
      out[o + 2] = from[i + 2] as number;
      out[o + 3] = from[i + 3] as number;
      o += 4;
    };
    const cur = w.subarray(b, b + n * 4);
    let o = 0;
    let k = 0;
    let q = 0;
    for (let i = 0; i < cur.length; i += 4) {
      while (k < keys.length && cmp(keys, k, cur, i) < 0) k += 4;
      while (q < puts.length && cmp(puts, q, cur, i) < 0) {
        copy(puts, q);
        q += 4;
      }
      if (q < puts.length && cmp(puts, q, cur, i) === 0) {
        copy(puts, q); // replaces the record with its key
        q += 4;
        continue;
      }
      if (k < keys.length && cmp(keys, k, cur, i) === 0) continue; // removed
      copy(cur, i);
    }
    if (q < puts.length) {
      out.set(puts.subarray(q), o);
      o += puts.length - q;
    }
    this.fill(out.subarray(0, o));
  }

  /**
   * `mergeBatch` of puts alone (an import chunk), in place: from the last put down, each put's
   * place is found by binary search and the records above it move up in one `copyWithin` (a
   * memmove), so the list's records are moved once each, natively, and compared O(puts · log n)
   * times. A merge pass in JS over the whole list took 0.3–0.9 s per 50k-tuple chunk once the
   * overlay held 1.2–2.2M records (a 10M import), on the main thread.
   */
  private insertBatch(puts: Uint32Array): void {
    const m = puts.length >>> 2;
    const n = this.length;
    this.reserve(n + m);
    const w = u32();
    const b = this.at;
    // Records [0, end) of the list are not placed yet; [o, n + m) is the merged upper part.
    let end = n;
    let o = n + m;
    const order = this.order;
    for (let q = (m - 1) * 4; q >= 0; q -= 4) {
      setProbe(puts[q] as number, puts[q + 1] as number, puts[q + 2] as number, (puts[q + 3] as number) & SR_MASK);
      const p = placeBelow(w, b, end, order);
      const same = p < end && order(w, b + p * 4, probe, 0) === 0; // replaced by the put
      const above = same ? p + 1 : p;
      w.copyWithin(b + (o - (end - above)) * 4, b + above * 4, b + end * 4);
      o -= end - above + 1;
      w[b + o * 4] = puts[q] as number;
      w[b + o * 4 + 1] = puts[q + 1] as number;
      w[b + o * 4 + 2] = puts[q + 2] as number;
      w[b + o * 4 + 3] = puts[q + 3] as number;
      end = p;
    }
    // Replaced records leave a gap of o - end records below the merged part: close it.
    if (o > end) {
      w.copyWithin(b + end * 4, b + o * 4, b + (n + m) * 4);
    }
    this.length = n + m - (o - end);
  }

  /** Replaces the content with `words` (records already sorted in this list's order, unique per key). */
  fill(words: Uint32Array): void {
    const n = words.length >>> 2;
    if (n * 16 > this.store.size) {
      this.store.drop();
      this.store = new Region(Math.max(64, n) * 16, false);
    }
    u32().set(words, this.at);
    this.length = n;
  }

  /** A copy of the live words. */
  copy(): Uint32Array {
    return u32().slice(this.at, this.at + this.length * 4);
  }

  /** One memmove into a new shared Region, or undefined when empty. */
  region(): Region | undefined {
    if (this.length === 0) return undefined;
    const r = new Region(this.length * 16, false); // every byte is written next
    u32().copyWithin(r.ptr >>> 2, this.at, this.at + this.length * 4);
    return r;
  }

  drop(): void {
    this.store.drop();
  }
}

/**
 * A batch's sort runs in typed arrays reused from batch to batch (the main thread applies one
 * batch at a time), up to this many records; a larger batch (a cold load's long tail) gets its own.
 */
const SCRATCH_RECORDS = 1 << 17;
const scratch: Uint32Array[] = [];

/** `length` u32s of reusable slot `slot` (valid until the slot's next use), or a new array. */
function scratchArray(slot: number, length: number): Uint32Array {
  if (length > SCRATCH_RECORDS * 4) return new Uint32Array(length);
  let a = scratch[slot];
  if (a === undefined || a.length < length) {
    a = new Uint32Array(Math.min(SCRATCH_RECORDS * 4, Math.max(length, 2 * (a?.length ?? 0))));
    scratch[slot] = a;
  }
  return a.subarray(0, length);
}

/** Scratch slots: the two halves of a radix sort's offsets, `putAll`'s records, their subject order. */
const ORDER_A = 0;
const ORDER_B = 1;
const PUTS = 2;
const BY_SUBJECT = 3;

/** A sort field: word `[0]` of each record, masked with `[1]`. */
type Field = readonly [word: number, mask: number];
/** Key order (obj, rel, subjRel, subj), least significant field first. */
const KEY_FIELDS: readonly Field[] = [
  [2, 0xffffffff],
  [3, SR_MASK],
  [1, 0xffffffff],
  [0, 0xffffffff],
];
/** Subject order (subj, subjRel, obj, rel), least significant field first. */
const SUBJECT_FIELDS: readonly Field[] = [
  [1, 0xffffffff],
  [0, 0xffffffff],
  [3, SR_MASK],
  [2, 0xffffffff],
];

const DIGIT_BITS = 11;
const BUCKETS = 1 << DIGIT_BITS;
const counts = new Uint32Array(BUCKETS);

/**
 * Offsets of `words`' records sorted by `fields` (least significant first), ties by position: an
 * LSD radix sort, 11 bits per pass, only as many passes per field as its largest value needs, a
 * pass skipped when every record has the same digit. In scratch slots (valid until the next
 * sort). Where a comparison sort of a 50k-record import chunk called a JS comparator ≈ 800k
 * times (twice per chunk: key and subject order), this reads each record a few times.
 */
function radixOrder(words: Uint32Array, fields: readonly Field[]): Uint32Array {
  const n = words.length >>> 2;
  let src = scratchArray(ORDER_A, n);
  let dst = scratchArray(ORDER_B, n);
  for (let i = 0; i < n; i++) src[i] = i * 4;
  for (const [word, mask] of fields) {
    let max = 0;
    for (let p = word; p < words.length; p += 4) {
      const v = ((words[p] as number) & mask) >>> 0;
      if (v > max) max = v;
    }
    for (let shift = 0; shift < 32 && max >>> shift !== 0; shift += DIGIT_BITS) {
      counts.fill(0);
      for (let p = word; p < words.length; p += 4) {
        const b = (((words[p] as number) & mask) >>> shift) & (BUCKETS - 1);
        counts[b] = (counts[b] as number) + 1;
      }
      let sum = 0;
      let single = false;
      for (let b = 0; b < BUCKETS; b++) {
        const c = counts[b] as number;
        if (c === n) single = true;
        counts[b] = sum;
        sum += c;
      }
      if (single) continue; // every record has this digit: the pass would keep the order
      for (let i = 0; i < n; i++) {
        const at = src[i] as number;
        const b = (((words[at + word] as number) & mask) >>> shift) & (BUCKETS - 1);
        dst[counts[b] as number] = at;
        counts[b] = (counts[b] as number) + 1;
      }
      const t = src;
      src = dst;
      dst = t;
    }
  }
  return src;
}

/**
 * `words`' records (key order, unique per key) re-sorted in subject order: in `out` when given
 * (as long as `words`), else in a new array.
 */
function inSubjectOrder(words: Uint32Array, out: Uint32Array = new Uint32Array(words.length)): Uint32Array {
  const order = radixOrder(words, SUBJECT_FIELDS);
  for (let i = 0; i < order.length; i++) {
    const at = order[i] as number;
    out[i * 4] = words[at] as number;
    out[i * 4 + 1] = words[at + 1] as number;
    out[i * 4 + 2] = words[at + 2] as number;
    out[i * 4 + 3] = words[at + 3] as number;
  }
  return out;
}

/** The records at offsets `a` and `b` of `words` have the same key (meta beyond the subject relation aside). */
function sameKey(words: Uint32Array, a: number, b: number): boolean {
  return (
    words[a] === words[b] &&
    words[a + 1] === words[b + 1] &&
    words[a + 2] === words[b + 2] &&
    ((words[a + 3] as number) & SR_MASK) === ((words[b + 3] as number) & SR_MASK)
  );
}

/**
 * Offsets of `words`' records (obj, rel, subj, meta) in key order (obj, rel, subject-relation,
 * subj), ties by position, so the last of a key's records comes last. In scratch (`radixOrder`).
 */
function keyOrder(words: Uint32Array): Uint32Array {
  return radixOrder(words, KEY_FIELDS);
}

/** The deletes of one write sorted for `Overlay.deleteSorted`. */
export interface SortedDeletes {
  readonly revision: number;
  /** Each deleted key once, (obj, rel, subj, subject relation), in key order. */
  readonly removed: Uint32Array;
  /** The same keys in subject order. */
  readonly bySubject: Uint32Array;
}

/**
 * The sorting half of `Overlay.deleteAll`: it reads only `words` (the deletes' record words, read
 * during the call only), no overlay, no base, so a bulk delete's keys can be sorted before its
 * write has committed (StoreIndex.prepare).
 */
export function sortDeletes(revision: number, words: Uint32Array): SortedDeletes {
  const order = keyOrder(words);
  const sorted = new Uint32Array(words.length);
  let n = 0;
  let prev = -1;
  for (const at of order) {
    // a key twice in one batch: once is enough
    if (prev >= 0 && sameKey(words, prev, at)) continue;
    prev = at;
    sorted[n] = words[at] as number;
    sorted[n + 1] = words[at + 1] as number;
    sorted[n + 2] = words[at + 2] as number;
    sorted[n + 3] = (words[at + 3] as number) & SR_MASK;
    n += 4;
  }
  const removed = sorted.subarray(0, n);
  return { revision, removed, bySubject: inSubjectOrder(removed) };
}

/**
 * Immutable serialised overlay: the sorted records in shared memory (the added ones in key and in
 * subject order, the deleted base keys in key order), read by binary search.
 */
export class OverlayImage {
  constructor(
    readonly adds: Region | undefined,
    readonly addCount: number,
    /** The same records as `adds`, in subject order. */
    readonly addsBySubj: Region | undefined,
    readonly dels: Region | undefined,
    readonly delCount: number,
  ) {}

  /** The image's records, read back from its (immutable, snapshot-held) shared regions. */
  private words(r: Region | undefined, count: number): Uint32Array {
    return r ? u32().subarray(r.ptr >>> 2, (r.ptr >>> 2) + count * 4) : EMPTY;
  }

  /** Copies of the image's record words (a past view starts from them). */
  copyWords(): { adds: Uint32Array; addsBySubj: Uint32Array; dels: Uint32Array } {
    return {
      adds: this.words(this.adds, this.addCount).slice(),
      addsBySubj: this.words(this.addsBySubj, this.addCount).slice(),
      dels: this.words(this.dels, this.delCount).slice(),
    };
  }

  /** True when the base key (obj, rel, subjRel, subj) is deleted in this image. */
  isDeleted(obj: number, rel: number, sr: number, subj: number): boolean {
    if (this.delCount === 0 || !this.dels) return false;
    setProbe(obj, rel, subj, sr);
    const w = u32();
    const b = this.dels.ptr >>> 2;
    const i = lowerBound(w, b, this.delCount, byKey);
    return i < this.delCount && byKey(w, b + i * 4, probe, 0) === 0;
  }

  /**
   * Word offsets (into `u32()`, valid while the image is held) of the added records of
   * (obj, rel), in key order.
   */
  *addsOf(obj: number, rel: number): Generator<number> {
    if (this.addCount === 0 || !this.adds) return;
    setProbe(obj, rel, 0, 0);
    const b = this.adds.ptr >>> 2;
    const end = b + this.addCount * 4;
    for (let p = b + lowerBound(u32(), b, this.addCount, byKey) * 4; p < end; p += 4) {
      const w = u32();
      if (w[p] !== obj || w[p + 1] !== rel) return;
      yield p;
    }
  }

  /**
   * Word offsets (into `u32()`, valid while the image is held) of the added records whose subject
   * is (subj, subjRel), in (obj, rel) order.
   */
  *addsOfSubject(subj: number, sr: number): Generator<number> {
    if (this.addCount === 0 || !this.addsBySubj) return;
    setProbe(0, 0, subj, sr);
    const b = this.addsBySubj.ptr >>> 2;
    const end = b + this.addCount * 4;
    for (let p = b + lowerBound(u32(), b, this.addCount, bySubject) * 4; p < end; p += 4) {
      const w = u32();
      if (w[p + 2] !== subj || ((w[p + 3] as number) & SR_MASK) !== sr) return;
      yield p;
    }
  }
}

const EMPTY_OVERLAY = new OverlayImage(undefined, 0, undefined, undefined, 0);

export class Overlay {
  /** The changes applied since `record` (undefined before: nothing reads them). */
  private log: ChangeLog | undefined;
  private readonly adds = new SortedRecords(byKey);
  /** The records of `adds` in subject order (snapshots read a subject's added tuples by it). */
  private readonly addsBySubj = new SortedRecords(bySubject);
  private readonly dels = new SortedRecords(byKey);

  constructor(private base: Base) {}

  get size(): number {
    return this.adds.length + this.dels.length;
  }

  /**
   * From now on every change applied is also logged, in order, in the log returned: a merge's
   * catch-up replays the changes logged after its `length` when it copied the overlay. One log
   * per overlay (a second call returns the same log); before the first call nothing is logged,
   * since only a running merge reads the log.
   */
  record(): ChangeLog {
    this.log ??= new ChangeLog();
    return this.log;
  }

  /** An overlay over `base` holding exactly `image`'s records. */
  static from(base: Base, image: OverlayImage): Overlay {
    const o = new Overlay(base);
    const w = image.copyWords();
    o.adds.fill(w.adds);
    o.addsBySubj.fill(w.addsBySubj);
    o.dels.fill(w.dels);
    return o;
  }

  /**
   * Applies one change (deletes first within a write, as storage does): the record (obj, rel,
   * subj, meta), meta = subjRel | cond << 12 (cond ignored for a delete).
   */
  apply(revision: number, del: boolean, obj: number, rel: number, subj: number, meta: number): void {
    const sr = meta & SR_MASK;
    this.log?.push(revision, del, obj, rel, subj, del ? sr : meta);
    if (del) {
      this.adds.remove(obj, rel, sr, subj);
      this.addsBySubj.remove(obj, rel, sr, subj);
      if (this.base.find(obj, rel, sr, subj) >= 0) this.dels.put(obj, rel, subj, sr);
    } else {
      this.adds.put(obj, rel, subj, meta);
      this.addsBySubj.put(obj, rel, subj, meta);
    }
  }

  /** `apply` of the record at `words[p..p+3]`. */
  applyRecord(revision: number, del: boolean, words: Uint32Array, p: number): void {
    this.apply(
      revision,
      del,
      words[p] as number,
      words[p + 1] as number,
      words[p + 2] as number,
      words[p + 3] as number,
    );
  }

  /** `apply` of each change of `words` (record words, 4 per change, read during the call only), in order. */
  private applyEach(revision: number, del: boolean, words: Uint32Array): void {
    for (let p = 0; p < words.length; p += 4) this.applyRecord(revision, del, words, p);
  }

  /**
   * The same state as `apply` of each change in order for the deletes of one write (a delete by
   * filter: thousands; `words` their records, read during the call only): one sort of the batch
   * and one merge pass over each record list instead of a memmove per change. Deletes commute
   * (each removes its key from the adds and masks it in the base when the base holds it), so
   * their order within the write does not matter.
   */
  deleteAll(revision: number, words: Uint32Array): void {
    if (words.length < 64 * 4) {
      this.applyEach(revision, true, words);
      return;
    }
    this.deleteSorted(sortDeletes(revision, words));
  }

  /**
   * `deleteAll` of deletes sorted ahead (`sortDeletes`, which reads nothing of the overlay). The
   * log gets each key once (a key deleted twice in one write is deleted once: the same state).
   */
  deleteSorted(d: SortedDeletes): void {
    const removed = d.removed;
    this.log?.pushAll(d.revision, true, removed);
    const inBase = new Uint32Array(removed.length);
    let m = 0;
    for (let at = 0; at < removed.length; at += 4) {
      const obj = removed[at] as number;
      const rel = removed[at + 1] as number;
      const subj = removed[at + 2] as number;
      const sr = removed[at + 3] as number;
      if (this.base.find(obj, rel, sr, subj) >= 0) {
        inBase[m] = obj;
        inBase[m + 1] = rel;
        inBase[m + 2] = subj;
        inBase[m + 3] = sr;
        m += 4;
      }
    }
    this.adds.mergeBatch(removed, EMPTY);
    this.addsBySubj.mergeBatch(d.bySubject, EMPTY);
    this.dels.mergeBatch(EMPTY, inBase.subarray(0, m));
  }

  /**
   * The same state as `apply` of each change in order for the writes of one write (an import
   * chunk: tens of thousands, no deletes; `words` their records in write order, read during the
   * call only): one sort of the batch and one merge pass over the added records instead of a
   * memmove per change (quadratic in the overlay's size: the overlay of a store growing by imports
   * holds up to a quarter of the base). Within the batch the last change of a key decides its
   * meta, as `apply` in order would.
   */
  writeAll(revision: number, words: Uint32Array): void {
    if (words.length < 64 * 4) {
      this.applyEach(revision, false, words);
      return;
    }
    this.log?.pushAll(revision, false, words);
    this.putAll(words);
  }

  /** The adds of `writeAll`, not logged. */
  private putAll(words: Uint32Array): void {
    const order = keyOrder(words);
    const n = order.length;
    const sorted = scratchArray(PUTS, n * 4);
    let m = 0;
    for (let k = 0; k < n; k++) {
      const at = order[k] as number;
      const next = order[k + 1];
      // A key twice: only its last change (the next in this order) is kept.
      if (next !== undefined && sameKey(words, at, next)) continue;
      sorted[m] = words[at] as number;
      sorted[m + 1] = words[at + 1] as number;
      sorted[m + 2] = words[at + 2] as number;
      sorted[m + 3] = words[at + 3] as number;
      m += 4;
    }
    const puts = sorted.subarray(0, m);
    this.adds.mergeBatch(EMPTY, puts);
    this.addsBySubj.mergeBatch(EMPTY, inSubjectOrder(puts, scratchArray(BY_SUBJECT, m)));
  }

  /**
   * The same state as `apply` of each change of `changes` in order, computed at once for an empty
   * overlay (a cold load's change-log tail): per key, the last change decides whether it is added
   * (with that change's meta), and a key any change deleted is masked in the base if the base
   * holds it.
   */
  applyAll(changes: ChangeLog): void {
    const n = changes.length;
    const words = changes.words;
    if (this.size > 0 || n < 64) {
      for (let i = 0; i < n; i++) this.applyRecord(changes.revisionAt(i), changes.isDelete(i), words, i * 4);
      return;
    }
    this.log?.append(changes);
    // Writes only (the tail of an import): the same state through `writeAll`'s sorted batch.
    let writesOnly = true;
    for (let i = 0; i < n && writesOnly; i++) if (changes.isDelete(i)) writesOnly = false;
    if (writesOnly) {
      this.putAll(words.subarray(0, n * 4));
      return;
    }
    // Key order, ties by position: a key's changes in the order they were applied.
    const order = keyOrder(words.subarray(0, n * 4));
    const adds: number[] = [];
    const dels: number[] = [];
    for (let i = 0; i < n;) {
      const first = order[i] as number;
      let j = i;
      let deleted = false;
      let last = first;
      for (; j < n; j++) {
        const at = order[j] as number;
        if (!sameKey(words, first, at)) break;
        if (changes.isDelete(at >>> 2)) deleted = true;
        last = at;
      }
      const obj = words[first] as number;
      const rel = words[first + 1] as number;
      const subj = words[first + 2] as number;
      const sr = (words[first + 3] as number) & SR_MASK;
      if (!changes.isDelete(last >>> 2)) adds.push(obj, rel, subj, words[last + 3] as number);
      if (deleted && this.base.find(obj, rel, sr, subj) >= 0) dels.push(obj, rel, subj, sr);
      i = j;
    }
    const added = Uint32Array.from(adds);
    this.adds.fill(added);
    this.addsBySubj.fill(inSubjectOrder(added));
    this.dels.fill(Uint32Array.from(dels));
  }

  /**
   * Added records as record words (obj, rel, subj, meta) in key order: a copy, for a merge. One
   * memcpy, where a JS object per record cost ≈ 0.1 s per 400k records on the main thread (the
   * merge reads it before its first yield) and as much again in garbage.
   */
  addedWords(): Uint32Array {
    return this.adds.copy();
  }
  /** Deleted base keys as sorted record words (a copy, for a merge). */
  deletedWords(): Uint32Array {
    return this.dels.copy();
  }

  /** Releases the record stores (the index is closing; published images keep their copies). */
  drop(): void {
    this.adds.drop();
    this.addsBySubj.drop();
    this.dels.drop();
  }

  image(): OverlayImage {
    if (this.size === 0) return EMPTY_OVERLAY;
    return new OverlayImage(
      this.adds.region(),
      this.adds.length,
      this.addsBySubj.region(),
      this.dels.region(),
      this.dels.length,
    );
  }
}
