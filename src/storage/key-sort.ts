// The sort of a bulk import's binary-string keys (write-plan.ts planImport): exact, in place,
// cheaper on the calling thread than Array.prototype.sort.

/** Chars packed per level: two 32-bit words of four 8-bit chars each. */
const WIDTH = 8;

/** Ranges this short are insertion-sorted by their packed words rather than radix-sorted. */
const SMALL = 32;

/** Ranges this long are radix-sorted two bytes at a time. */
const WIDE = 8192;

/**
 * The scratch of one sort, indexed by position in the keys array: each level packs the chars
 * [d, d + 8) of its range's keys into two words (`hi`, `lo`, big-endian, 0 past a key's end),
 * radix-sorts their positions (`at`) byte by byte into the other set, and recurses into each run
 * of equal words at d + 8 inside the same positions, so the levels never overlap in the scratch.
 */
interface Scratch {
  at: Uint32Array;
  hi: Uint32Array;
  lo: Uint32Array;
  at2: Uint32Array;
  hi2: Uint32Array;
  lo2: Uint32Array;
  count: Int32Array;
  /** Allocated only for a sort of WIDE or more keys. */
  wideCount: Int32Array;
}

/**
 * Sorts `keys` in place into the order of `keys.sort()` (UTF-16 code units; for binary strings,
 * one char per byte as codec.ts makes them, LevelDB's byte order) and returns it.
 *
 * `shared` is how many leading chars every key has in common (planImport's keys all start with
 * their store's `D <id> t` or `D <id> u`, 28 chars): comparison starts there. The order is that of
 * `sort()` only when every key does share them; a wrong `shared` gives a wrong order, not a crash.
 *
 * Why not `sort()`: V8's comparison sort compares whole strings from their first char, ≈ 16
 * comparisons per key at 50,000 keys, each over the 28 shared chars and more. This is an MSD
 * radix sort: each key's next 8 chars are read once per level into two 32-bit words, the
 * positions are radix-sorted on those words' bytes that differ within the range (bytes equal
 * across the range cost no pass, and chars shared by the range's first and last keys, a chunk's
 * "document\0\1", are read past in the same visit), and only the runs of keys equal in all 8
 * chars go one level deeper: a chunk's keys are visited 2-4 times each. Keys with a char code
 * above 0xff (not binary strings) are sorted by `sort()` from the level that meets them: exact.
 * bench/key-sort.ts measures it against `sort()` on the same keys.
 *
 * Allocates nothing per call once its scratch is as large as the largest sort so far (kept).
 */
export function sortBinaryKeys(keys: string[], shared = 0): string[] {
  const n = keys.length;
  if (n < 2) return keys;
  sortRange(keys, scratchFor(n), 0, n, shared);
  return keys;
}

/** The scratch of the largest sort so far (≈ 1.5 MB at 50,000 keys), reused: see scratchFor. */
let kept: Scratch | undefined;

/**
 * Scratch for n keys, kept between sorts: what it trades is ≈ 1.5 MB held after the first import
 * of 50,000-tuple chunks. Allocated per sort (with an array of n keys to permute through), the two
 * sorts of a chunk in the 3M import cost 0.38-0.47 µs per tuple and single sorts took up to 80 ms
 * (collections landing in them); kept, 0.31-0.34 µs and 5-20 ms after the first.
 */
function scratchFor(n: number): Scratch {
  if (kept !== undefined && kept.at.length >= n) return kept;
  kept = {
    at: new Uint32Array(n),
    hi: new Uint32Array(n),
    lo: new Uint32Array(n),
    at2: new Uint32Array(n),
    hi2: new Uint32Array(n),
    lo2: new Uint32Array(n),
    count: new Int32Array(256),
    wideCount: new Int32Array(n >= WIDE ? 65536 : 0),
  };
  return kept;
}

/** Sorts keys[from, to), which share their first `d` chars. */
function sortRange(keys: string[], s: Scratch, from: number, to: number, depth: number): void {
  let d = depth;
  for (;;) {
    if (to - from < 2) return;
    // The chars the range's first and last keys share from d are likely shared by all its keys
    // (a chunk's "document\0\1"): read past them in the same visit of each key, which checks them
    // (when one key lacks them, the range is packed again at d: at most twice the reads).
    const common = sharedRun(keys[from] as string, keys[to - 1] as string, d);
    let diff = common === '' ? MISMATCH : pack(keys, s, from, to, d + common.length, common, d);
    if (diff === MISMATCH) diff = pack(keys, s, from, to, d, '', d);
    else d += common.length;
    if (diff === WIDE_CHAR) return nativeSort(keys, from, to);
    // Keys ending inside [d, d + 8) sort before the keys their padded words equal (a prefix is
    // smaller); within one run they are the only ones to order by length.
    if (diff === 0) {
      from = endedFirst(keys, from, to, d + WIDTH);
      d += WIDTH;
      continue;
    }
    let flipped = false;
    if (to - from <= SMALL) insertionSort(s, from, to);
    else flipped = radixPasses(s, from, to, diff);
    permute(keys, flipped ? s.at2 : s.at, from, to);
    return runs(keys, s, from, to, d, flipped);
  }
}

/**
 * Packs keys[from, to)'s chars [d, d + 8) into s.hi and s.lo at their positions, and s.at[i] = i.
 * Returns a mask of the bytes (bit b: byte b of the 64-bit word, 0 = least significant) that
 * differ within the range, or -1 when a char code is above 0xff.
 */
function pack(
  keys: readonly string[],
  s: Scratch,
  from: number,
  to: number,
  d: number,
  common: string,
  at: number,
): number {
  let hiAnd = -1;
  let hiOr = 0;
  let loAnd = -1;
  let loOr = 0;
  let wide = 0;
  for (let i = from; i < to; i++) {
    const k = keys[i] as string;
    if (common !== '' && !k.startsWith(common, at)) return MISMATCH;
    const len = k.length;
    let hi = 0;
    let lo = 0;
    if (len >= d + WIDTH) {
      const c0 = k.charCodeAt(d);
      const c1 = k.charCodeAt(d + 1);
      const c2 = k.charCodeAt(d + 2);
      const c3 = k.charCodeAt(d + 3);
      const c4 = k.charCodeAt(d + 4);
      const c5 = k.charCodeAt(d + 5);
      const c6 = k.charCodeAt(d + 6);
      const c7 = k.charCodeAt(d + 7);
      wide |= c0 | c1 | c2 | c3 | c4 | c5 | c6 | c7;
      hi = (c0 << 24) | (c1 << 16) | (c2 << 8) | c3;
      lo = (c4 << 24) | (c5 << 16) | (c6 << 8) | c7;
    } else {
      for (let j = d; j < len; j++) {
        const c = k.charCodeAt(j);
        wide |= c;
        const shift = 8 * (3 - ((j - d) & 3));
        if (j - d < 4) hi |= c << shift;
        else lo |= c << shift;
      }
    }
    s.at[i] = i;
    s.hi[i] = hi;
    s.lo[i] = lo;
    hiAnd &= hi;
    hiOr |= hi;
    loAnd &= lo;
    loOr |= lo;
  }
  if (wide > 0xff) return WIDE_CHAR;
  return byteMask(loAnd ^ loOr) | (byteMask(hiAnd ^ hiOr) << 4);
}

/** What pack returns when a key has a char code above 0xff, and when one lacks `common`. */
const WIDE_CHAR = -1;
const MISMATCH = -2;

/** The chars a and b share from d on, '' when fewer than WIDTH. */
function sharedRun(a: string, b: string, d: number): string {
  const n = a.length < b.length ? a.length : b.length;
  let i = d;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i - d < WIDTH ? '' : a.slice(d, i);
}

/** Bit b set when byte b of `x` is not zero. */
function byteMask(x: number): number {
  return (x & 0xff ? 1 : 0) | (x & 0xff00 ? 2 : 0) | (x & 0xff0000 ? 4 : 0) | (x & 0xff000000 ? 8 : 0);
}

/**
 * LSD counting-sort passes over the bytes in `diff`, least significant first, moving positions and
 * words between the two sets. Returns true when the result is in the second set (odd passes).
 * A range of WIDE or more keys takes two bytes per pass (65,536 counters: clearing and summing
 * them costs less than a pass over that many keys).
 */
function radixPasses(s: Scratch, from: number, to: number, diff: number): boolean {
  const wide = to - from >= WIDE;
  const bits = wide ? 16 : 8;
  const mask = wide ? 0x3 : 0x1;
  let flipped = false;
  for (let b = 0; b < WIDTH; b += bits / 8) {
    if ((diff & (mask << b)) === 0) continue;
    if (flipped) pass(s.at2, s.hi2, s.lo2, s.at, s.hi, s.lo, from, to, b, bits, wide ? s.wideCount : s.count);
    else pass(s.at, s.hi, s.lo, s.at2, s.hi2, s.lo2, from, to, b, bits, wide ? s.wideCount : s.count);
    flipped = !flipped;
  }
  return flipped;
}

/** One stable counting-sort pass of [from, to) on the `bits` bits from byte `b` of the 64-bit words. */
function pass(
  at: Uint32Array,
  hi: Uint32Array,
  lo: Uint32Array,
  at2: Uint32Array,
  hi2: Uint32Array,
  lo2: Uint32Array,
  from: number,
  to: number,
  b: number,
  bits: number,
  count: Int32Array,
): void {
  const word = b < 4 ? lo : hi;
  const shift = 8 * (b & 3);
  const mask = (1 << bits) - 1;
  count.fill(0);
  for (let i = from; i < to; i++) {
    const c = ((word[i] as number) >>> shift) & mask;
    count[c] = (count[c] as number) + 1;
  }
  let sum = from;
  for (let c = 0; c <= mask; c++) {
    const k = count[c] as number;
    count[c] = sum;
    sum += k;
  }
  for (let i = from; i < to; i++) {
    const c = ((word[i] as number) >>> shift) & mask;
    const p = count[c] as number;
    count[c] = p + 1;
    at2[p] = at[i] as number;
    hi2[p] = hi[i] as number;
    lo2[p] = lo[i] as number;
  }
}

/**
 * Puts keys[at[i]] at i for each i of [from, to), in place: one cycle of the permutation at a
 * time, each position marked done (at[i] = i) as it is filled. `at` holds positions of [from, to).
 */
function permute(keys: string[], at: Uint32Array, from: number, to: number): void {
  for (let i = from; i < to; i++) {
    if (at[i] === i) continue;
    const first = keys[i] as string;
    let j = i;
    for (;;) {
      const next = at[j] as number;
      at[j] = j;
      if (next === i) break;
      keys[j] = keys[next] as string;
      j = next;
    }
    keys[j] = first;
  }
}

/** Sorts each run of keys[from, to) equal in their packed chars (sorted by them) one level deeper. */
function runs(keys: string[], s: Scratch, from: number, to: number, d: number, flipped: boolean): void {
  const hi = flipped ? s.hi2 : s.hi;
  const lo = flipped ? s.lo2 : s.lo;
  let start = from;
  for (let i = from + 1; i <= to; i++) {
    if (i < to && hi[i] === hi[start] && lo[i] === lo[start]) continue;
    // The run's words are read before it is sorted: its sort reuses its own positions only.
    if (i - start > 1) {
      sortRange(keys, s, endedFirst(keys, start, i, d + WIDTH), i, d + WIDTH);
    }
    start = i;
  }
}

/**
 * Moves the keys of keys[from, to) shorter than `end` (a run equal up to `end`, padding
 * included) to the front in length order, and returns where the others begin.
 */
function endedFirst(keys: string[], from: number, to: number, end: number): number {
  let w = from;
  for (let i = from; i < to; i++) {
    const k = keys[i] as string;
    if (k.length >= end) continue;
    keys[i] = keys[w] as string;
    keys[w++] = k;
  }
  if (w - from > 1) nativeSort(keys, from, w);
  return w;
}

/** keys[from, to) by `sort()`: the rare ranges this sort does not take on. */
function nativeSort(keys: string[], from: number, to: number): void {
  const part = keys.slice(from, to).sort();
  for (let i = from; i < to; i++) keys[i] = part[i - from] as string;
}

/** Insertion sort of the first set's positions and words in [from, to) by their words. */
function insertionSort(s: Scratch, from: number, to: number): void {
  const { at, hi, lo } = s;
  for (let i = from + 1; i < to; i++) {
    const p = at[i] as number;
    const h = hi[i] as number;
    const l = lo[i] as number;
    let j = i;
    for (; j > from; j--) {
      const h1 = hi[j - 1] as number;
      if (h1 < h || (h1 === h && (lo[j - 1] as number) <= l)) break;
      at[j] = at[j - 1] as number;
      hi[j] = h1;
      lo[j] = lo[j - 1] as number;
    }
    at[j] = p;
    hi[j] = h;
    lo[j] = l;
  }
}
