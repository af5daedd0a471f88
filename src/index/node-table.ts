// The node dictionary's string → id lookup: an open-addressing hash table over one Int32Array,
// in place of a `Map<string, number>`: 10M `Map.set`s of distinct strings took 10–15 s of a
// 10M-tuple cold start (45.8 s in a script at load 5, where filling this table took 2.3–7.5 s).
//
// Contract: ids live in a list the caller owns (`list[id]` is the string of `id`); `add(s, id)`
// registers a string that is not in the table yet, once `list[id] === s` holds or before any
// lookup of `s` (the table never reads the list when it adds). Example: with `list` =
// ['doc:1', 'user:anne'] added as ids 0 and 1, `get('user:anne')` is 1 and `get('doc:2')` is
// undefined. Nothing is ever removed: ids are never reused.
//
// Layout: slot i is the pair (hash, id + 1) at words 2i and 2i + 1, id + 1 = 0 for an empty slot;
// linear probing from hash & mask; the table doubles when it would pass half full. The stored
// hash makes a probe a compare of two integers (the string is compared only when the hashes are
// equal) and growth a pass over the words, no string hashed again: the write that grows a table of
// 8.4M nodes stalls the thread for that pass (0.39 s measured, load 3), not for 8.4M string hashes
// on top. It costs 8 bytes a slot, 2–4 slots a node: 268 MB at 10M nodes, where the Map took
// ≈ 700 MB more heap than the table in the same script.

/** Slots of an empty table (a power of two). */
const MIN_SLOTS = 16;
/** `addRun`'s hashes of one slice (one thread runs one `addRun` at a time: shared, not allocated). */
const RUN_HASHES = new Int32Array(4096);

/**
 * The 32-bit hash of `s`: FNV-1a over its UTF-16 code units, then murmur3's finaliser so that the
 * low bits (the slot) depend on every character. Reads the string with charCodeAt: no allocation,
 * any string (lone surrogates included) hashes.
 */
export function nodeHash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** Slots for `n` entries at most half full. */
function slotsFor(n: number): number {
  let slots = MIN_SLOTS;
  while (slots < 2 * n) slots *= 2;
  return slots;
}

export class NodeTable {
  private words: Int32Array;
  private mask: number;
  private count = 0;

  /** `list` is the id → string list the ids index; `capacity` entries fit without growing. */
  constructor(
    private readonly list: readonly string[],
    capacity = 0,
  ) {
    const slots = slotsFor(capacity);
    this.words = new Int32Array(2 * slots);
    this.mask = slots - 1;
  }

  /** Entries in the table. */
  get size(): number {
    return this.count;
  }

  /** The id of `s`, undefined when it was never added. */
  get(s: string): number | undefined {
    const h = nodeHash(s);
    const w = this.words;
    const mask = this.mask;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const id1 = w[2 * i + 1] as number;
      if (id1 === 0) return undefined;
      if (w[2 * i] === h && this.list[id1 - 1] === s) return id1 - 1;
    }
  }

  /** Registers `s` (not in the table) as `id`. */
  add(s: string, id: number): void {
    if (2 * (this.count + 1) > this.mask + 1) this.grow(slotsFor(this.count + 1));
    this.put(nodeHash(s), id + 1);
    this.count++;
  }

  /**
   * Registers `strings` (none in the table, all distinct) as ids `first`, `first + 1`, … in
   * order: the bulk form of `add` for a load, one capacity check for the run. Hashes a slice of
   * the run first, then stores its pairs: the stores, free of string reads, overlap their cache
   * misses (a 10M-node table is hundreds of MB) — about twice as fast as hashing and storing one
   * string after the other, measured at 10M.
   */
  addRun(strings: readonly string[], first: number): void {
    const n = strings.length;
    if (2 * (this.count + n) > this.mask + 1) this.grow(slotsFor(this.count + n));
    const hashes = RUN_HASHES;
    for (let from = 0; from < n; from += hashes.length) {
      const end = Math.min(from + hashes.length, n);
      for (let k = from; k < end; k++) hashes[k - from] = nodeHash(strings[k] as string);
      for (let k = from; k < end; k++) this.put(hashes[k - from] as number, first + k + 1);
    }
    this.count += n;
  }

  /** Stores the pair (h, id1) in the first empty slot from h's. */
  private put(h: number, id1: number): void {
    const w = this.words;
    const mask = this.mask;
    let i = h & mask;
    while (w[2 * i + 1] !== 0) i = (i + 1) & mask;
    w[2 * i] = h;
    w[2 * i + 1] = id1;
  }

  /** Moves every pair into a table of `slots` slots, by its stored hash. */
  private grow(slots: number): void {
    const old = this.words;
    this.words = new Int32Array(2 * slots);
    this.mask = slots - 1;
    for (let j = 1; j < old.length; j += 2) {
      const id1 = old[j] as number;
      if (id1 !== 0) this.put(old[j - 1] as number, id1);
    }
  }
}
