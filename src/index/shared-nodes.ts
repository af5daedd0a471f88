// The node dictionary's string → id table in the shared memory, table AND string bytes, for the
// HTTP threads (`--http-threads`): they intern a request's strings against it without a copy of
// the dictionary and without asking the main thread. The main thread is its only writer; any
// thread reads it through a published snapshot record (`thread-board.ts`).
//
// Layout (each a Region; growth copies into a new Region and drops the old one, which the
// published snapshots that point at it keep alive):
//   words  slot i = (hash, id + 1) at words 2i, 2i + 1 (id + 1 = 0: empty), linear probing, at
//          most half full: NodeTable's layout, the same hash (`nodeHash`)
//   spans  per id: (byte offset in the arena, code units | WIDE), WIDE = stored as UTF-16
//   arena  the strings, appended: one byte per code unit when every unit is below 0x100, else two
//
// Publication: a writer fills the string bytes and its span, writes the slot's hash, then stores
// its id + 1 with Atomics; a snapshot publishes its node count afterwards (a sequentially
// consistent store of the record's address). A reader trusts only ids below the node count of the
// record it read: every such entry, and every slot on its probe path, was complete before that
// store. An entry being added meanwhile has a larger id, and a probe that meets it either stops (id
// not stored yet: the searched string is newer or absent) or skips it (larger id). Slots are never
// overwritten, so a probe path of a published entry never changes under a reader.
//
// On the main thread `get` compares with the dictionary's JS strings (as NodeTable does); only
// readers compare bytes. Costs over NodeTable: the strings once more in the arena (1 byte per ASCII
// character), 8 bytes of span per node. Example: `add('doc:1', 0)` then a reader's
// `sharedNodeId(words, mask, spans, arena, 'doc:1', 1)` is 0, and with a limit of 0 undefined.

import { Region, u32, u8 } from './memory.js';
import { nodeHash } from './node-table.js';

const MIN_SLOTS = 16;
const WIDE = 0x80000000;

/** The addresses a reader needs; valid while the snapshot that recorded them is held. */
export interface SharedNodesAt {
  readonly words: number;
  readonly mask: number;
  readonly spans: number;
  readonly arena: number;
}

function slotsFor(n: number): number {
  let slots = MIN_SLOTS;
  while (slots < 2 * n) slots *= 2;
  return slots;
}

export class SharedNodeTable {
  private words: Region;
  private mask: number;
  private spans: Region;
  private arena: Region;
  /** Bytes of the arena in use. */
  private arenaUsed = 0;
  private count = 0;

  constructor(
    private readonly list: readonly string[],
    capacity = 0,
  ) {
    const slots = slotsFor(capacity);
    this.words = new Region(8 * slots);
    this.mask = slots - 1;
    this.spans = new Region(8 * Math.max(capacity, 16));
    this.arena = new Region(Math.max(capacity * 16, 256), false);
  }

  get size(): number {
    return this.count;
  }

  /** Where readers find the table now (recorded by each published snapshot). */
  get at(): SharedNodesAt {
    return { words: this.words.ptr, mask: this.mask, spans: this.spans.ptr, arena: this.arena.ptr };
  }

  /** The regions a snapshot holds while it is readable. */
  regions(): Region[] {
    return [this.words, this.spans, this.arena];
  }

  /** The id of `s`, undefined when it was never added (the main thread's lookup). */
  get(s: string): number | undefined {
    const h = nodeHash(s);
    const w = u32();
    const base = this.words.ptr >>> 2;
    const mask = this.mask;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const id1 = w[base + 2 * i + 1] as number;
      if (id1 === 0) return undefined;
      if ((w[base + 2 * i] as number) === h >>> 0 && this.list[id1 - 1] === s) return id1 - 1;
    }
  }

  /** Registers `s` (not in the table) as `id` (ids are added in order: 0, 1, 2, …). */
  add(s: string, id: number): void {
    if (2 * (this.count + 1) > this.mask + 1) this.grow(slotsFor(this.count + 1));
    this.store(s, id);
    this.put(nodeHash(s), id + 1);
    this.count++;
  }

  /** `add` for each of `strings` as ids `first`, `first + 1`, … (a load). */
  addRun(strings: readonly string[], first: number): void {
    const n = strings.length;
    if (2 * (this.count + n) > this.mask + 1) this.grow(slotsFor(this.count + n));
    for (let k = 0; k < n; k++) {
      const s = strings[k] as string;
      this.store(s, first + k);
      this.put(nodeHash(s), first + k + 1);
    }
    this.count += n;
  }

  /** Releases the table's regions (the index is closing; held snapshots keep theirs). */
  drop(): void {
    this.words.drop();
    this.spans.drop();
    this.arena.drop();
  }

  /** Appends the string's bytes and writes its span. */
  private store(s: string, id: number): void {
    let wide = false;
    for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0xff) wide = true;
    const bytes = wide ? 2 * s.length : s.length;
    const at = wide ? (this.arenaUsed + 1) & ~1 : this.arenaUsed;
    if (at + bytes > this.arena.size)
      this.arena = this.moved(this.arena, Math.max(2 * this.arena.size, at + bytes), this.arenaUsed);
    if (8 * (id + 1) > this.spans.size)
      this.spans = this.moved(this.spans, Math.max(2 * this.spans.size, 8 * (id + 1)), 8 * id);
    const b = u8();
    const p = this.arena.ptr + at;
    if (wide)
      for (let i = 0; i < s.length; i++) {
        const c = s.charCodeAt(i);
        b[p + 2 * i] = c & 0xff;
        b[p + 2 * i + 1] = c >>> 8;
      }
    else for (let i = 0; i < s.length; i++) b[p + i] = s.charCodeAt(i);
    this.arenaUsed = at + bytes;
    const w = u32();
    const sp = (this.spans.ptr >>> 2) + 2 * id;
    w[sp] = at;
    w[sp + 1] = (s.length | (wide ? WIDE : 0)) >>> 0;
  }

  /** A copy of the first `used` bytes of `r` in a Region of `size` bytes; `r` is dropped. */
  private moved(r: Region, size: number, used: number): Region {
    const next = new Region(size, false);
    u8().copyWithin(next.ptr, r.ptr, r.ptr + used);
    r.drop();
    return next;
  }

  /** Writes the pair (h, id1) into the first empty slot from h's: the hash first, the id last, atomically. */
  private put(h: number, id1: number): void {
    const w = u32();
    const base = this.words.ptr >>> 2;
    const mask = this.mask;
    let i = h & mask;
    while (w[base + 2 * i + 1] !== 0) i = (i + 1) & mask;
    w[base + 2 * i] = h >>> 0;
    Atomics.store(w, base + 2 * i + 1, id1);
  }

  /** Moves every pair into a new table of `slots` slots, by its stored hash. */
  private grow(slots: number): void {
    const old = this.words;
    const oldSlots = this.mask + 1;
    this.words = new Region(8 * slots);
    this.mask = slots - 1;
    const w = u32();
    const ob = old.ptr >>> 2;
    for (let j = 0; j < oldSlots; j++) {
      const id1 = w[ob + 2 * j + 1] as number;
      if (id1 !== 0) this.put(w[ob + 2 * j] as number, id1);
    }
    old.drop();
  }
}

/**
 * A reader's lookup: the id of `s` in the table at `at`, if below `limit` (the node count of the
 * snapshot record it read), else undefined. `w` and `b` are this thread's views of the memory.
 */
export function sharedNodeId(
  w: Uint32Array,
  b: Uint8Array,
  at: SharedNodesAt,
  s: string,
  limit: number,
): number | undefined {
  const h = nodeHash(s) >>> 0;
  const base = at.words >>> 2;
  const mask = at.mask;
  for (let i = h & mask; ; i = (i + 1) & mask) {
    const id1 = Atomics.load(w, base + 2 * i + 1);
    if (id1 === 0) return undefined;
    if (w[base + 2 * i] !== h) continue;
    const id = id1 - 1;
    if (id >= limit) return undefined; // added after the snapshot (a string has one id)
    const sp = (at.spans >>> 2) + 2 * id;
    const len = w[sp + 1] as number;
    if ((len & ~WIDE) !== s.length) continue;
    const p = at.arena + (w[sp] as number);
    let same = true;
    if (len & WIDE) {
      for (let k = 0; k < s.length && same; k++)
        same = ((b[p + 2 * k] as number) | ((b[p + 2 * k + 1] as number) << 8)) === s.charCodeAt(k);
    } else for (let k = 0; k < s.length && same; k++) same = b[p + k] === s.charCodeAt(k);
    if (same) return id;
  }
}

/** Servers in this process that asked for shared node tables (a test runs several). */
let sharing = 0;

/**
 * Stores indexed while some server asked (`latch serve --http-threads` above 1) keep a
 * SharedNodeTable; `on` false withdraws one request.
 */
export function shareNodeTables(on: boolean): void {
  sharing = Math.max(0, sharing + (on ? 1 : -1));
}

export function sharingNodeTables(): boolean {
  return sharing > 0;
}
