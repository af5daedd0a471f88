// The node dictionary's string → id table in the shared memory, table AND string bytes, for the
// HTTP threads (`--http-threads`): they intern a request's strings against it without a copy of
// the dictionary and without asking the main thread. The main thread is its only writer; any
// thread reads it through a published snapshot record (`thread-board.ts`).
//
// Layout: the words are one Region, copied into a new one when they grow (rehashed); the spans
// and the string bytes are written in chunks that never move, so growth copies nothing and leaves
// no retired copies behind in the memory (which never shrinks: at 100k nodes the copies of the
// spans and string bytes took ≈ 3 MB of it, ≈ 25 MB at 1M):
//   words  slot i = (hash, id + 1) at words 2i, 2i + 1 (id + 1 = 0: empty), linear probing, at
//          most half full: NodeTable's layout, the same hash (`nodeHash`)
//   spans  per id: (address of its bytes, code units | WIDE), WIDE = stored as UTF-16; id i is
//          entry i − SPAN_IDS·(2^k − 1) of chunk k, which holds SPAN_IDS·2^k ids (k = ⌊log2(i /
//          SPAN_IDS + 1)⌋): `dir` holds each chunk's address, one word per k, never moved
//   bytes  the strings, appended to the current arena chunk (one byte per code unit when every
//          unit is below 0x100, else two); a string that does not fit starts a new chunk, each
//          chunk as large as all before it (from ARENA_FIRST to ARENA_MAX, or the string's size)
// The span directory owns the chunks: they are released with it, once the table and every
// published snapshot that holds it have dropped it.
//
// Publication: a writer fills the string bytes and its span (and a new span chunk's directory
// word), writes the slot's hash, then stores its id + 1 with Atomics; a snapshot publishes its node
// count afterwards (a sequentially consistent store of the record's address). A reader trusts only
// ids below the node count of the record it read: every such entry, and every slot on its probe
// path, was complete before that store. An entry being added meanwhile has a larger id, and a probe
// that meets it either stops (id not stored yet: the searched string is newer or absent) or skips
// it (larger id). Slots are never overwritten, so a probe path of a published entry never changes
// under a reader.
//
// On the main thread `get` compares with the dictionary's JS strings (as NodeTable does); only
// readers compare bytes. Costs over NodeTable: the strings once more in the arena (1 byte per ASCII
// character), 8 bytes of span per node. Example: `add('doc:1', 0)` then a reader's
// `sharedNodeId(w, b, table.at, 'doc:1', 1)` is 0, and with a limit of 0 undefined.

import { Region, u32, u8 } from './memory.js';
import { nodeHash } from './node-table.js';

const MIN_SLOTS = 16;
const WIDE = 0x80000000;
/** Ids in span chunk 0 (chunk k holds SPAN_IDS · 2^k; 8 bytes each). */
const SPAN_SHIFT = 4;
/** Directory words: chunks 0 … 28 cover every u32 id. */
const DIR_WORDS = 32;
/** The first arena chunk's bytes (at least), and the most a chunk takes unless a string needs more. */
const ARENA_FIRST = 256;
const ARENA_MAX = 4 << 20;

/** The addresses a reader needs; valid while the snapshot that recorded them is held. */
export interface SharedNodesAt {
  readonly words: number;
  readonly mask: number;
  /** The span directory (DIR_WORDS chunk addresses). */
  readonly spans: number;
}

function slotsFor(n: number): number {
  let slots = MIN_SLOTS;
  while (slots < 2 * n) slots *= 2;
  return slots;
}

/** The span chunk of `id` (see the layout). */
function spanChunk(id: number): number {
  return 31 - Math.clz32((id >>> SPAN_SHIFT) + 1);
}

/** The first id of span chunk `k`. */
function chunkStart(k: number): number {
  return ((1 << k) - 1) * (1 << SPAN_SHIFT);
}

/** The span directory: one Region for the table's life, owning the span and arena chunks. */
class SpanDirectory extends Region {
  readonly chunks: Region[] = [];
  constructor() {
    super(DIR_WORDS * 4);
  }
  /** Releases the chunks with the directory's last reference. */
  override drop(): void {
    super.drop();
    if (!this.alive) for (const c of this.chunks.splice(0)) c.drop();
  }
}

export class SharedNodeTable {
  private words: Region;
  private mask: number;
  private readonly dir = new SpanDirectory();
  /** Where the next string's bytes go in the current arena chunk, and that chunk's end. */
  private arenaAt = 0;
  private arenaEnd = 0;
  /** Bytes of every arena chunk so far (the next chunk's size, up to ARENA_MAX). */
  private arenaBytes: number;
  private count = 0;

  constructor(
    private readonly list: readonly string[],
    capacity = 0,
  ) {
    const slots = slotsFor(capacity);
    this.words = new Region(8 * slots);
    this.mask = slots - 1;
    // A load of `capacity` nodes (≈ 12 bytes each) fills few chunks.
    this.arenaBytes = Math.max(ARENA_FIRST, Math.min(capacity * 12, ARENA_MAX));
  }

  get size(): number {
    return this.count;
  }

  /** Where readers find the table now (recorded by each published snapshot). */
  get at(): SharedNodesAt {
    return { words: this.words.ptr, mask: this.mask, spans: this.dir.ptr };
  }

  /** The regions a snapshot holds while it is readable (the directory holds the chunks). */
  regions(): Region[] {
    return [this.words, this.dir];
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
    this.dir.drop();
  }

  /** Appends the string's bytes and writes its span. */
  private store(s: string, id: number): void {
    let wide = false;
    for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0xff) wide = true;
    const bytes = wide ? 2 * s.length : s.length;
    let at = wide ? this.arenaAt + (this.arenaAt & 1) : this.arenaAt;
    if (at + bytes > this.arenaEnd) at = this.newArenaChunk(bytes);
    const k = spanChunk(id);
    if (id === chunkStart(k)) this.newSpanChunk(k);
    const b = u8();
    if (wide)
      for (let i = 0; i < s.length; i++) {
        const c = s.charCodeAt(i);
        b[at + 2 * i] = c & 0xff;
        b[at + 2 * i + 1] = c >>> 8;
      }
    else for (let i = 0; i < s.length; i++) b[at + i] = s.charCodeAt(i);
    this.arenaAt = at + bytes;
    const w = u32();
    const sp = ((w[(this.dir.ptr >>> 2) + k] as number) >>> 2) + 2 * (id - chunkStart(k));
    w[sp] = at;
    w[sp + 1] = (s.length | (wide ? WIDE : 0)) >>> 0;
  }

  /** Starts an arena chunk with room for `bytes`; the address of its first byte. */
  private newArenaChunk(bytes: number): number {
    const size = Math.max(bytes, Math.min(this.arenaBytes, ARENA_MAX));
    const chunk = new Region(size, false);
    this.dir.chunks.push(chunk);
    this.arenaBytes += size;
    this.arenaAt = chunk.ptr;
    this.arenaEnd = chunk.ptr + size;
    return chunk.ptr;
  }

  /** Allocates span chunk `k` and records it in the directory (before any of its ids is published). */
  private newSpanChunk(k: number): void {
    const chunk = new Region(8 * 2 ** (SPAN_SHIFT + k), false);
    this.dir.chunks.push(chunk);
    u32()[(this.dir.ptr >>> 2) + k] = chunk.ptr;
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
    const k = spanChunk(id);
    const sp = ((w[(at.spans >>> 2) + k] as number) >>> 2) + 2 * (id - chunkStart(k));
    const len = w[sp + 1] as number;
    if ((len & ~WIDE) !== s.length) continue;
    const p = w[sp] as number;
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
