// The board through which the main thread publishes each store's current snapshot to the HTTP
// threads (`--http-threads`), so that a thread answers Check over the one shared index without
// asking the main thread. One SharedArrayBuffer of Int32 words:
//
//   MEM          the shared memory's size in bytes (a reader re-creates its views when it grew)
//   HAZARD + 16t the snapshot record thread t is reading right now, 0 when none (a cache line each)
//   slot s       (SLOT + s * SLOT_WORDS) RECORD: address of the store's current snapshot record
//                (snapshot.ts `R`), 0 when the store is not served from the board; GEN: bumped
//                when the slot changes hands; MODELS: bumped when the store's latest model may
//                have moved; FORWARD: 1 while the store's Checks must run on the main thread
//                (a shadow model samples them); ID_LEN and the store id's code units.
//
// Memory reclamation (hazard pointers): a reader loads RECORD, stores it in its HAZARD word,
// loads RECORD again and retries until both agree; it reads the snapshot and clears HAZARD when
// its synchronous Check ends. The main thread pins every snapshot it publishes and unpins a
// superseded one only once no HAZARD word holds its record: a reader that published its hazard
// before the new RECORD was stored is seen by the sweep; one that did it after reads the new
// record on its second load. All these words are read and written with Atomics (sequentially
// consistent), which also orders everything the main thread wrote before a RECORD store (the
// snapshot, its overlay image, new entries of the node table) before a reader's use of it.

import { memoryBytes, setGrowListener } from './memory.js';
import type { IndexSnapshot } from './snapshot.js';
import type { StoreIndex } from './store-index.js';

/** Most HTTP threads one board serves (threads past it forward their Checks). */
export const MAX_BOARD_THREADS = 64;
/** Most stores served from the board at once (later ones are forwarded to the main thread). */
export const MAX_BOARD_STORES = 1024;
const MAX_ID = 32;

/**
 * Words per hazard: one 64-byte cache line each, so that threads setting and clearing their own
 * hazard twice per Check never write to a line another thread's hazard is on (false sharing).
 */
const HAZARD_WORDS = 16;

export const B = {
  MEM: 0,
  HAZARD: HAZARD_WORDS,
  HAZARD_WORDS,
  SLOT: HAZARD_WORDS * (1 + MAX_BOARD_THREADS),
  SLOT_WORDS: 8 + MAX_ID / 2,
} as const;
export const SLOT = { RECORD: 0, GEN: 1, MODELS: 2, FORWARD: 3, ID_LEN: 4, ID: 8 } as const;

const BOARD_WORDS = B.SLOT + MAX_BOARD_STORES * B.SLOT_WORDS;

interface Entry {
  readonly slot: number;
  current: IndexSnapshot | undefined;
  /** What readers of the slot use besides its snapshots (compiled walker programs): kept until detach. */
  readonly kept: Set<object>;
}

/** The main thread's side: publishes snapshots, keeps them until no reader holds them. */
export class ThreadBoard {
  readonly buffer = new SharedArrayBuffer(BOARD_WORDS * 4);
  private readonly w = new Int32Array(this.buffer);
  private readonly ids = new Uint16Array(this.buffer);
  private readonly entries = new Map<string, Entry>();
  private readonly free: number[] = [];
  private readonly retired: IndexSnapshot[] = [];
  /** Kept values of detached stores, dropped at the next sweep that finds no reader at all. */
  private readonly laterDrops: object[][] = [];
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  /** Told each store put on the board, which starts forwarded until `forward(storeId, false)`. */
  onAttach: ((storeId: string) => void) | undefined;

  constructor() {
    for (let s = MAX_BOARD_STORES - 1; s >= 0; s--) this.free.push(s);
    Atomics.store(this.w, B.MEM, memoryBytes());
    setGrowListener((bytes) => Atomics.store(this.w, B.MEM, bytes));
  }

  /**
   * Serves `index` of `storeId` from the board from now on: its current snapshot at once, each
   * later one as it is published. A store whose node table is not shared, an id longer than the
   * slot holds, or a full board leave the store to the main thread (its Checks are forwarded).
   */
  attach(storeId: string, index: StoreIndex): void {
    if (this.closed || this.entries.has(storeId) || storeId.length > MAX_ID || !index.dict.shared) return;
    const slot = this.free.pop();
    if (slot === undefined) return;
    const entry: Entry = { slot, current: undefined, kept: new Set() };
    this.entries.set(storeId, entry);
    const at = B.SLOT + slot * B.SLOT_WORDS;
    for (let i = 0; i < storeId.length; i++) this.ids[2 * (at + SLOT.ID) + i] = storeId.charCodeAt(i);
    Atomics.store(this.w, at + SLOT.ID_LEN, storeId.length);
    // Forwarded until `onAttach`'s owner says otherwise (a shadow setting may still be loading).
    Atomics.store(this.w, at + SLOT.FORWARD, this.onAttach ? 1 : 0);
    Atomics.add(this.w, at + SLOT.GEN, 1);
    this.onAttach?.(storeId);
    index.onPublish = (snapshot) => this.publish(entry, snapshot);
    this.publish(entry, index.snapshot());
  }

  /** The store is gone (deleted, or its index closed): readers forward from now on. */
  detach(storeId: string, index?: StoreIndex): void {
    const entry = this.entries.get(storeId);
    if (!entry) return;
    if (index) index.onPublish = undefined;
    this.entries.delete(storeId);
    const at = B.SLOT + entry.slot * B.SLOT_WORDS;
    Atomics.store(this.w, at + SLOT.RECORD, 0);
    Atomics.store(this.w, at + SLOT.ID_LEN, 0);
    Atomics.store(this.w, at + SLOT.FORWARD, 0);
    Atomics.add(this.w, at + SLOT.GEN, 1);
    if (entry.current) this.retire(entry.current);
    entry.current = undefined;
    // Programs go once no reader can hold them: with the last retired snapshot's sweep.
    const kept = [...entry.kept];
    entry.kept.clear();
    if (kept.length > 0) this.laterDrops.push(kept);
    this.free.push(entry.slot);
  }

  /** Keeps `value` (shared memory a reader of the store may use) while the store is on the board. */
  keep(storeId: string, value: object): boolean {
    const entry = this.entries.get(storeId);
    entry?.kept.add(value);
    return entry !== undefined;
  }

  /** The store's latest model may have changed: readers drop what they cached as "latest". */
  modelsMoved(storeId: string): void {
    const entry = this.entries.get(storeId);
    if (entry) Atomics.add(this.w, B.SLOT + entry.slot * B.SLOT_WORDS + SLOT.MODELS, 1);
  }

  /** While `on`, readers forward the store's Checks to the main thread. */
  forward(storeId: string, on: boolean): void {
    const entry = this.entries.get(storeId);
    if (entry) Atomics.store(this.w, B.SLOT + entry.slot * B.SLOT_WORDS + SLOT.FORWARD, on ? 1 : 0);
  }

  /** Stores served from the board now (for tests). */
  get stores(): number {
    return this.entries.size;
  }

  /** Unpublishes every store and releases every snapshot (after the HTTP threads ended). */
  close(): void {
    this.closed = true;
    for (const id of [...this.entries.keys()]) this.detach(id);
    for (const s of this.retired.splice(0)) s.unpin();
    if (this.timer) clearTimeout(this.timer);
    setGrowListener(undefined);
  }

  private publish(entry: Entry, snapshot: IndexSnapshot): void {
    if (snapshot === entry.current) return;
    snapshot.pin();
    Atomics.store(this.w, B.SLOT + entry.slot * B.SLOT_WORDS + SLOT.RECORD, snapshot.record);
    const old = entry.current;
    entry.current = snapshot;
    if (old) this.retire(old);
  }

  private anyReader(): boolean {
    for (let t = 0; t < MAX_BOARD_THREADS; t++)
      if (Atomics.load(this.w, B.HAZARD + t * B.HAZARD_WORDS) !== 0) return true;
    return false;
  }

  private retire(snapshot: IndexSnapshot): void {
    this.retired.push(snapshot);
    this.sweep();
  }

  /** Unpins every superseded snapshot no reader holds; looks again soon while some are held. */
  private sweep(): void {
    const w = this.w;
    let keep = 0;
    for (const s of this.retired) {
      let held = false;
      for (let t = 0; t < MAX_BOARD_THREADS && !held; t++)
        held = Atomics.load(w, B.HAZARD + t * B.HAZARD_WORDS) === s.record;
      if (held) this.retired[keep++] = s;
      else s.unpin();
    }
    this.retired.length = keep;
    if (this.laterDrops.length > 0 && !this.anyReader()) this.laterDrops.length = 0;
    if ((keep > 0 || this.laterDrops.length > 0) && !this.timer && !this.closed) {
      // A reader holds a record only for one synchronous Check: microseconds.
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.sweep();
      }, 1);
      this.timer.unref();
    }
  }
}

/** An HTTP thread's side of the board: finds a store's slot, enters and leaves its snapshot. */
export class BoardReader {
  private readonly w: Int32Array;
  private readonly ids: Uint16Array;
  private readonly hazard: number;

  /** `thread` is this reader's hazard word (0 … MAX_BOARD_THREADS − 1, one per thread). */
  constructor(buffer: SharedArrayBuffer, thread: number) {
    this.w = new Int32Array(buffer);
    this.ids = new Uint16Array(buffer);
    this.hazard = B.HAZARD + thread * B.HAZARD_WORDS;
  }

  /** The memory's size as last published (`syncViews` with it before reading a record). */
  get memoryBytes(): number {
    return Atomics.load(this.w, B.MEM);
  }

  /** The slot serving `storeId` now, or -1. A slot is reused by another store only after a GEN bump. */
  find(storeId: string): number {
    for (let s = 0; s < MAX_BOARD_STORES; s++) {
      const at = B.SLOT + s * B.SLOT_WORDS;
      if (Atomics.load(this.w, at + SLOT.ID_LEN) !== storeId.length) continue;
      let same = true;
      for (let i = 0; i < storeId.length && same; i++)
        same = this.ids[2 * (at + SLOT.ID) + i] === storeId.charCodeAt(i);
      if (same && Atomics.load(this.w, at + SLOT.RECORD) !== 0) return s;
    }
    return -1;
  }

  gen(slot: number): number {
    return Atomics.load(this.w, B.SLOT + slot * B.SLOT_WORDS + SLOT.GEN);
  }

  models(slot: number): number {
    return Atomics.load(this.w, B.SLOT + slot * B.SLOT_WORDS + SLOT.MODELS);
  }

  forwarded(slot: number): boolean {
    return Atomics.load(this.w, B.SLOT + slot * B.SLOT_WORDS + SLOT.FORWARD) !== 0;
  }

  /**
   * The slot's current record, published as this thread's hazard (0: the slot serves nothing now).
   * Until `leave`, the record and everything it points at stay valid.
   */
  enter(slot: number): number {
    const w = this.w;
    const at = B.SLOT + slot * B.SLOT_WORDS + SLOT.RECORD;
    let r = Atomics.load(w, at);
    for (;;) {
      Atomics.store(w, this.hazard, r);
      const again = Atomics.load(w, at);
      if (again === r) return r;
      r = again;
    }
  }

  leave(): void {
    Atomics.store(this.w, this.hazard, 0);
  }
}
