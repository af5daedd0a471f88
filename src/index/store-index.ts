// One store's live index: dictionary + immutable base + write overlay, publishing an immutable
// IndexSnapshot per revision. Writes never stop the world: they go to the overlay, and when the
// overlay passes a threshold a background merge (sliced with setImmediate) builds a new base,
// then republishes with the changes that arrived meanwhile replayed on top. Once the changes folded
// into the base since the last checkpoint pass a threshold, a checkpoint of that base is due; it is
// copied out in slices too (`checkpointBase`).

import { nextTurn } from '../domain/turn.js';
import type { TupleKey } from '../domain/types.js';
import { AppError } from '../errors.js';
import type { Storage, WriteResult } from '../storage/types.js';
import { SR_MASK } from '../abi.js';
import { type Base, buildBase, ColumnBuilder, drain, SLICE } from './base.js';
import { imageChunks, readImage, streamImage, UnsupportedImageError } from './checkpoint.js';
import { logger } from '../log.js';
import { expiryMs, StoreDictionary } from './dictionary.js';
import { u32 } from './memory.js';
import { ChangeLog, Overlay, sortDeletes, type SortedDeletes } from './overlay.js';
import { IndexSnapshot } from './snapshot.js';

export { IndexSnapshot } from './snapshot.js';

export interface StoreIndexOptions {
  /** Overlay entries that trigger a background merge (default 8,192). */
  readonly mergeThreshold?: number;
  /**
   * Extra time a superseded, unpinned snapshot's memory stays readable (default 0: until the
   * current macrotask ends). Readers that wait for I/O or timers pin (IndexSnapshot.pin).
   */
  readonly retireAfterMs?: number;
  /**
   * Changes folded into the base since the last checkpoint that make the next one due: this many
   * (default 100,000) or a quarter of the base's entries up to MAX_TAIL (250,000), whichever is
   * more. See `checkpointDue`.
   */
  readonly checkpointChanges?: number;
  /** Called when a background merge has published a base whose checkpoint is due (none is running). */
  readonly onCheckpointDue?: ((index: StoreIndex) => void) | undefined;
  /**
   * A background merge's yield between its slices (default: one turn of the event loop). The
   * engine passes its import lane's turn (PriorityLane): a merge is not on any write's path, so
   * its slices wait while an import chunk is planned.
   */
  readonly backgroundTurn?: (() => Promise<void>) | undefined;
}

/** The most changes a crash leaves to replay over the last checkpoint (see `checkpointDue`). */
export const MAX_TAIL = 250_000;

/** What became of a checkpoint: committed, not started (one is running, or the index is closed), or stopped. */
export type CheckpointOutcome = 'written' | 'skipped' | 'cancelled';

/** The object a run of `internInto` calls interned last and its id (-1: none yet). */
export interface LastObject {
  object: string;
  id: number;
}

/**
 * Interns one tuple key into the record words `out[p..p+3]` (obj, rel, subj, meta): no object per
 * tuple (an import chunk interns tens of thousands in a row). With `last`, a tuple of the same
 * object as the previous one reuses its id without a dictionary lookup (hashing a freshly decoded
 * string is most of a lookup's cost). Strings are interned in the same order either way.
 */
export function internInto(d: StoreDictionary, t: TupleKey, out: Uint32Array, p: number, last?: LastObject): void {
  const hash = t.user.lastIndexOf('#');
  const subj = d.node(hash === -1 ? t.user : t.user.slice(0, hash));
  const sr = hash === -1 ? 0 : d.name(t.user.slice(hash + 1)) + 1;
  let obj: number;
  if (last === undefined) obj = d.node(t.object);
  else {
    if (last.id < 0 || t.object !== last.object) {
      last.object = t.object;
      last.id = d.node(t.object);
    }
    obj = last.id;
  }
  out[p] = obj;
  out[p + 1] = d.name(t.relation);
  out[p + 2] = subj;
  out[p + 3] = (sr | (d.cond(t.condition, expiryMs(t.expires_at)) << 12)) >>> 0;
}

/**
 * Interns a stream of stored tuples into columns. Storage scans return tuples in key order
 * (grouped by object), so the previous object's id is reused without a dictionary lookup: the
 * lookup of a freshly decoded string hashes it, the dominant cost of a cold load from tuples.
 */
class ColumnInterner {
  readonly cols = new ColumnBuilder();
  private lastObj = '';
  private lastObjId = -1;
  constructor(readonly dict: StoreDictionary) {}
  push(t: TupleKey): void {
    const d = this.dict;
    if (this.lastObjId < 0 || t.object !== this.lastObj) {
      this.lastObj = t.object;
      this.lastObjId = d.node(t.object);
    }
    const hash = t.user.lastIndexOf('#');
    const subj = d.node(hash === -1 ? t.user : t.user.slice(0, hash));
    const sr = hash === -1 ? 0 : d.name(t.user.slice(hash + 1)) + 1;
    this.cols.push(
      this.lastObjId,
      d.name(t.relation),
      subj,
      (sr | (d.cond(t.condition, expiryMs(t.expires_at)) << 12)) >>> 0,
    );
  }
  build(): Base {
    return drain(buildBase(this.cols, this.dict.nodeList.length));
  }
}

/** A write of deletes only, enough of them to be applied in one sorted merge (a delete by filter). */
function isBulkDelete(result: WriteResult): boolean {
  return result.written.length === 0 && result.deleted.length >= 64;
}

/**
 * A merge's catch-up (`catchUp`): changes replayed per turn (one import chunk or more), the most
 * left for the synchronous step at install, and the most turns it takes before finishing at
 * install whatever remains (writes arriving as fast as it replays cannot hold a merge off).
 */
const CATCH_UP_SLICE = 16_384;
const CATCH_UP_LAST = 8_192;
const CATCH_UP_TURNS = 256;

/**
 * Replays `log`'s changes from `at` into `overlay` one write (one revision) at a time, as `apply`
 * of each in order would (a write's deletes come first, then its writes: one sorted batch each),
 * until at least `budget` changes are replayed or the log ends. Returns where it stopped.
 */
function catchUp(overlay: Overlay, log: ChangeLog, at: number, budget: number): number {
  const start = at;
  while (at < log.length && at - start < budget) {
    const revision = log.revisionAt(at);
    const end = log.runEnd(at);
    let dels = at;
    while (dels < end && log.isDelete(dels)) dels++;
    let ordered = true;
    for (let i = dels; i < end; i++) if (log.isDelete(i)) ordered = false;
    // `overlay` logs into a log of its own: nothing is pushed to `log` during this call.
    const w = log.words;
    if (!ordered) for (let i = at; i < end; i++) overlay.applyRecord(revision, log.isDelete(i), w, i * 4);
    else {
      if (dels > at) overlay.deleteAll(revision, w.subarray(at * 4, dels * 4));
      if (end > dels) overlay.writeAll(revision, w.subarray(dels * 4, end * 4));
    }
    at = end;
  }
  return at;
}

/** A write of at least this many changes is a bulk apply (see `mergeIfDue`). */
const BULK_CHANGES = 1_024;

export class StoreIndex {
  private base: Base;
  private overlay: Overlay;
  private current: IndexSnapshot;
  private merging: Promise<void> | undefined;
  private closed = false;
  /** Writes or a merge happened since `current` was built. */
  private stale = false;
  private readonly threshold: number;
  private readonly retireAfterMs: number;
  private readonly checkpointChanges: number;
  private readonly onCheckpointDue: ((index: StoreIndex) => void) | undefined;
  private readonly backgroundTurn: () => Promise<void>;
  /** The revision the base reflects: later changes are in the overlay only (and in the change log). */
  private baseRevision: number;
  /** Changes applied since build or load (the load's tail included), and how many of them the base and the last checkpoint hold. */
  private applied = 0;
  private baseApplied = 0;
  private savedApplied = 0;
  private savedRevision: number | undefined;
  /** The checkpoint being copied; at most one per index. */
  private saving: { stop: boolean; readonly done: Promise<CheckpointOutcome> } | undefined;
  /** A bulk delete's changes looked up ahead of its apply (`prepare`). */
  private prepared: { readonly result: WriteResult; readonly deletes: SortedDeletes } | undefined;

  /** How the last load found the store: from a checkpoint image or a full scan, and how many changes of the log tail it applied. */
  loaded: { readonly fromCheckpoint: boolean; readonly tailChanges: number } = {
    fromCheckpoint: false,
    tailChanges: 0,
  };

  private constructor(
    readonly dict: StoreDictionary,
    base: Base,
    private revision: number,
    opts: StoreIndexOptions = {},
  ) {
    this.base = base;
    this.overlay = new Overlay(base);
    this.threshold = opts.mergeThreshold ?? 8_192;
    this.retireAfterMs = opts.retireAfterMs ?? 0;
    this.checkpointChanges = opts.checkpointChanges ?? 100_000;
    this.onCheckpointDue = opts.onCheckpointDue;
    this.backgroundTurn = opts.backgroundTurn ?? nextTurn;
    this.baseRevision = revision;
    this.current = new IndexSnapshot(dict, base, this.overlay.image(), revision);
  }

  /** A fresh index over `tuples` (each a stored tuple) at `revision`. */
  static build(tuples: Iterable<TupleKey>, revision: number, opts?: StoreIndexOptions): StoreIndex {
    const cols = new ColumnInterner(new StoreDictionary());
    for (const t of tuples) cols.push(t);
    return new StoreIndex(cols.dict, cols.build(), revision, opts);
  }

  /**
   * Loads from the store's checkpoint plus the change-log tail, or from a full scan: when there is
   * no checkpoint, or when its image is in a format this code does not know (a newer node wrote
   * it during a rolling upgrade; docs/deployment.md, "Upgrading a cluster").
   */
  static async load(storage: Storage, storeId: string, opts?: StoreIndexOptions): Promise<StoreIndex> {
    let cp = await storage.readCheckpoint(storeId);
    let index: StoreIndex | undefined;
    if (cp) {
      try {
        const img = await readImage(cp.chunks);
        index = new StoreIndex(img.dict, img.base, cp.revision, opts);
      } catch (err) {
        if (!(err instanceof UnsupportedImageError)) throw err;
        logger.log('warn', 'index checkpoint in an unknown format: loading the store from its tuples', {
          store_id: storeId,
          version: String(err.version),
        });
        cp = undefined;
      }
    }
    if (!index) {
      const scan = await storage.scanTuples(storeId);
      const cols = new ColumnInterner(new StoreDictionary());
      for await (const t of scan.tuples) cols.push(t);
      index = new StoreIndex(cols.dict, cols.build(), scan.revision, opts);
    }
    // The change-log tail since the checkpoint (or the scan) is applied in one step: after a crash
    // it can hold any number of changes, and inserting them one by one into the sorted overlay
    // costs a memmove each (quadratic: 80k changes at random keys took 2.4 s). Past the merge
    // threshold it is folded into the base by a background merge while the index already serves
    // (a synchronous fold cost ≈ 3 s of a 10M-tuple restart; readers see base + overlay meanwhile).
    let last = index.revision;
    const tail = new ChangeLog();
    const k = new Uint32Array(4);
    for await (const ch of storage.changesSince(storeId, index.revision)) {
      const del = ch.operation === 'delete';
      if (index.intern(del, ch.tuple, k, 0)) tail.pushAll(ch.revision, del, k);
      last = Math.max(last, ch.revision);
    }
    index.overlay.applyAll(tail);
    index.applied = tail.length;
    index.savedRevision = cp?.revision;
    index.loaded = { fromCheckpoint: cp !== undefined, tailChanges: tail.length };
    if (last > index.revision) index.publish(last);
    index.mergeIfDue();
    return index;
  }

  /**
   * Interns a change's record into `out[p..p+3]`; false (nothing written) for a delete of strings
   * never interned (it matches nothing). A delete's record has no condition (meta = subjRel).
   */
  private intern(del: boolean, t: TupleKey, out: Uint32Array, p: number): boolean {
    if (del) {
      const hash = t.user.lastIndexOf('#');
      if (
        this.dict.nodes.get(t.object) === undefined ||
        this.dict.nodes.get(hash === -1 ? t.user : t.user.slice(0, hash)) === undefined
      )
        return false;
    }
    internInto(this.dict, del ? { object: t.object, relation: t.relation, user: t.user } : t, out, p);
    return true;
  }

  /** One change's record (`change`; reused: no allocation per change). */
  private readonly one = new Uint32Array(4);

  private change(revision: number, del: boolean, t: TupleKey): void {
    const k = this.one;
    if (this.intern(del, t, k, 0)) this.overlay.applyRecord(revision, del, k, 0);
  }

  /**
   * A bulk write's records (`apply`), kept between writes: an import chunk is interned straight
   * into words that the overlay copies, not into an object per tuple.
   */
  private chunk = new Uint32Array(0);
  private readonly lastObject: LastObject = { object: '', id: -1 };

  /**
   * Marks the state at `revision` as the one to publish. The snapshot itself is built lazily by
   * the next `snapshot()` call, so a burst of writes with no reader in between costs one image,
   * not one per write (each image copies the overlay into shared memory).
   */
  private publish(revision: number): void {
    this.revision = revision;
    this.stale = true;
    if (this.onPublish) this.onPublish(this.snapshot());
  }

  /**
   * Told every snapshot as soon as it is published, built at once instead of by the next reader
   * (the HTTP threads' board: a thread reads the index without asking this thread, so a write
   * is visible to it when acknowledged).
   */
  onPublish: ((snapshot: IndexSnapshot) => void) | undefined;

  /**
   * Looks up and sorts a bulk delete's keys (a delete by filter) before `result` commits, so that
   * work runs while the datastore writes; `apply` of the same result object only merges them.
   * Reads the dictionary only: a name it lacks is in no stored tuple, and a store's writes apply
   * one at a time, so the lookups equal those `apply` would make; the sort reads nothing else.
   * Nothing else changes (a write that fails is never applied).
   */
  prepare(result: WriteResult): void {
    this.prepared = isBulkDelete(result)
      ? { result, deletes: sortDeletes(result.revision, this.bulkDeletes(result)) }
      : undefined;
  }

  /**
   * The record words of a bulk delete's keys (meta = subjRel), skipping keys the dictionary lacks
   * (they match nothing).
   */
  private bulkDeletes(result: WriteResult): Uint32Array {
    // Its keys are looked up, never interned: a name or node the dictionary lacks is in no stored
    // tuple, so that delete matches nothing (as `intern` decides it, without its key copy).
    const words = new Uint32Array(result.deleted.length * 4);
    const k = this.found;
    let p = 0;
    for (const t of result.deleted)
      if (this.lookUp(t)) {
        words[p] = k.obj;
        words[p + 1] = k.rel;
        words[p + 2] = k.subj;
        words[p + 3] = k.sr;
        p += 4;
      }
    return words.subarray(0, p);
  }

  /** The ids `lookUp` found last (one record, reused: no allocation per tuple looked up). */
  private readonly found = { obj: 0, rel: 0, subj: 0, sr: 0 };

  /**
   * Looks the strings of `t` up without interning any: false when one was never interned (no
   * tuple of the index has it); else true, the ids in `found` (`sr`: subject relation + 1, or 0).
   */
  private lookUp(t: Pick<TupleKey, 'object' | 'relation' | 'user'>): boolean {
    const obj = this.dict.nodes.get(t.object);
    return obj !== undefined && this.lookUpAt(obj, t);
  }

  /** `lookUp` with the object's id `obj` known. */
  private lookUpAt(obj: number, t: Pick<TupleKey, 'object' | 'relation' | 'user'>): boolean {
    const d = this.dict;
    const rel = d.names.get(t.relation);
    if (rel === undefined) return false;
    const user = t.user;
    const hash = user.lastIndexOf('#');
    const subj = d.nodes.get(hash === -1 ? user : user.slice(0, hash));
    if (subj === undefined) return false;
    let sr = 0;
    if (hash !== -1) {
      const r = d.names.get(user.slice(hash + 1));
      if (r === undefined) return false;
      sr = r + 1;
    }
    const k = this.found;
    k.obj = obj;
    k.rel = rel;
    k.subj = subj;
    k.sr = sr;
    return true;
  }

  /** Applies an acknowledged write (deletes first, as storage did) and publishes its revision. */
  apply(result: WriteResult): void {
    const prepared = this.prepared;
    this.prepared = undefined;
    if (result.revision <= this.revision) return;
    if (isBulkDelete(result)) {
      // A bulk delete (delete by filter): applied in one sorted merge (Overlay.deleteAll).
      if (prepared?.result === result) this.overlay.deleteSorted(prepared.deletes);
      else this.overlay.deleteAll(result.revision, this.bulkDeletes(result));
    } else if (result.deleted.length === 0 && result.written.length >= 64) {
      // A bulk write (an import chunk): interned in a row into record words, applied in one sorted
      // merge. An import's tuples come grouped by object (a document's tuples together): the
      // previous tuple's object id is reused without a dictionary lookup.
      const written = result.written;
      if (this.chunk.length < written.length * 4) this.chunk = new Uint32Array(written.length * 4);
      const words = this.chunk;
      const last = this.lastObject;
      last.id = -1;
      for (let i = 0; i < written.length; i++) internInto(this.dict, written[i] as TupleKey, words, i * 4, last);
      last.object = ''; // holds no string of the chunk
      this.overlay.writeAll(result.revision, words.subarray(0, written.length * 4));
    } else {
      for (const t of result.deleted) this.change(result.revision, true, t);
      for (const t of result.written) this.change(result.revision, false, t);
    }
    const changes = result.deleted.length + result.written.length;
    this.applied += changes;
    this.publish(result.revision);
    this.mergeIfDue(changes >= BULK_CHANGES);
  }

  /**
   * Starts a background merge once the overlay reaches the threshold (one at a time). After a bulk
   * apply (an import chunk, a delete by filter) the merge waits for at least a quarter of the base:
   * a merge rebuilds the whole base, so a store growing by bulk imports rebuilds ≈ 4 entries per
   * change in all, not O(store size) per threshold's worth of changes (measured: 6 µs per tuple at
   * 300k tuples imported in 10k chunks, growing with the store; a 10M import would rebuild ≈ 5·10⁹
   * entries). Ordinary writes keep the fixed threshold, because every snapshot built after a write
   * copies the overlay: a large overlay would make each small write's next snapshot cost O(overlay).
   */
  private mergeIfDue(bulk = false): void {
    const due = bulk ? Math.max(this.threshold, this.base.layout.entries >>> 2) : this.threshold;
    if (this.overlay.size >= due && !this.merging) void this.merge();
  }

  /** The latest published snapshot; a query uses one snapshot from start to end. */
  snapshot(): IndexSnapshot {
    if (this.stale) {
      this.stale = false;
      const old = this.current;
      this.current = new IndexSnapshot(this.dict, this.base, this.overlay.image(), this.revision);
      old.retire(this.retireAfterMs);
    }
    return this.current;
  }

  get currentRevision(): number {
    return this.revision;
  }

  /**
   * False only when no tuple (object, relation, user) is in the index: one of its strings was
   * never interned (the dictionary keeps every string of every tuple applied, deleted ones too).
   * A bulk import's hint to the storage (HeldHint): reads only the tuples this may hold.
   */
  mayHold(t: TupleKey): boolean {
    // An import chunk's tuples come grouped by object (a document's tuples together), and most
    // of a new store's objects are new: the previous tuple's object answers without a lookup
    // (hashing the string and a probe of a table of millions of nodes, a cache miss). Its id
    // cannot change; its absence holds while no node is added.
    const h = this.held;
    const d = this.dict;
    if (t.object !== h.object || (h.id < 0 && h.nodes !== d.nodeList.length)) {
      h.object = t.object;
      h.id = d.nodes.get(t.object) ?? -1;
      h.nodes = d.nodeList.length;
    }
    return h.id >= 0 && this.lookUpAt(h.id, t);
  }

  /** The object `mayHold` looked up last, its id (-1: absent) and the dictionary's node count then. */
  private readonly held = { object: '', id: -1, nodes: 0 };

  /** Resolves when no background merge is running. */
  async settled(): Promise<void> {
    while (this.merging) await this.merging;
  }

  /**
   * Folds the overlay into a new base. Runs in slices (one per event-loop turn); changes applied
   * meanwhile are logged by the overlay (Overlay.record). They are replayed over the new base into
   * a new overlay in slices too (`catchUp`), and the last few synchronously when the new base and
   * overlay are published together. One merge at a time: asked for while one runs, it starts
   * when that one has installed its base (a second merge of the same overlay would install a
   * base missing what the first's new overlay took meanwhile), so it folds every change applied
   * before the call.
   */
  merge(): Promise<void> {
    const prior = this.merging;
    const run = prior ? prior.catch(() => undefined).then(() => this.mergeNow()) : this.mergeNow();
    const tracked: Promise<void> = run.finally(() => {
      if (this.merging === tracked) this.merging = undefined;
    });
    this.merging = tracked;
    return tracked;
  }

  private async mergeNow(): Promise<void> {
    if (this.closed) return;
    const revision = this.revision;
    const applied = this.applied;
    // The changes logged from here on are the ones applied after `revision` (apply logs a write's
    // changes and publishes its revision in one step).
    const log = this.overlay.record();
    const from = log.length;
    const gen = this.mergeSteps();
    let r = gen.next();
    while (!r.done) {
      await this.backgroundTurn();
      r = gen.next();
    }
    const base = r.value;
    const next = new Overlay(base);
    let at = from;
    for (let turns = 0; !this.closed && turns < CATCH_UP_TURNS; turns++) {
      if (log.length - at <= CATCH_UP_LAST) break;
      at = catchUp(next, log, at, CATCH_UP_SLICE);
      await this.backgroundTurn();
    }
    if (this.closed) {
      next.drop();
      base.drop();
      return;
    }
    this.install(base, revision, applied, next, log, at);
    if (!this.saving && this.checkpointDue) this.onCheckpointDue?.(this);
  }

  /** Synchronous merge (used before writing a checkpoint at a stop). */
  private mergeSync(): void {
    if (this.overlay.size === 0) return;
    const base = drain(this.mergeSteps());
    this.install(base, this.revision, this.applied, new Overlay(base), undefined, 0);
  }

  /**
   * Publishes a merged base that reflects every change up to `revision` (`applied` of them) with
   * `next`, an overlay over it that holds the changes of `log` (what the current overlay logged
   * since the merge copied it; undefined: nothing) before `at`: the rest are replayed into it
   * here. The old base goes with its last reader.
   */
  private install(
    base: Base,
    revision: number,
    applied: number,
    next: Overlay,
    log: ChangeLog | undefined,
    at: number,
  ): void {
    if (log) catchUp(next, log, at, Number.POSITIVE_INFINITY);
    const old = this.base;
    this.base = base;
    this.baseRevision = revision;
    this.baseApplied = applied;
    this.overlay.drop(); // published images hold copies of its records
    this.overlay = next;
    this.publish(this.revision);
    old.drop();
  }

  /**
   * The new base from the current base minus deleted keys plus added records. Everything it reads
   * is captured before the first yield (the base is immutable; the overlay's state is copied), so
   * writes applied between slices cannot leak into it.
   */
  private *mergeSteps(): Generator<void, Base> {
    const cols = new ColumnBuilder(this.base.layout.entries + this.overlay.size);
    // Deleted keys come sorted (obj, rel, subjRel, subj): the same order the base is walked in,
    // so they are skipped with one moving pointer instead of a per-entry key lookup.
    const dels = this.overlay.deletedWords();
    const adds = this.overlay.addedWords();
    const nodes = this.dict.nodeList.length;
    const b = this.base;
    const fn = b.w('fwdNode');
    const fk = b.w('fwdKey');
    const fe = b.w('fwdEnt');
    let d = 0;
    let work = 0;
    for (let v = 0; v < b.layout.nodes; v++) {
      if (work >= SLICE) {
        work = 0;
        yield;
      }
      const m = u32();
      work += 4 + (m[fk + 2 * (m[fn + v + 1] ?? 0) + 1] ?? 0) - (m[fk + 2 * (m[fn + v] ?? 0) + 1] ?? 0);
      for (let k = m[fn + v] ?? 0, k1 = m[fn + v + 1] ?? 0; k < k1; k++) {
        const rel = m[fk + 2 * k] ?? 0;
        for (let i = m[fk + 2 * k + 1] ?? 0, e = m[fk + 2 * k + 3] ?? 0; i < e; i++) {
          const subj = m[fe + 2 * i] ?? 0;
          const meta = m[fe + 2 * i + 1] ?? 0;
          if (
            d < dels.length &&
            dels[d] === v &&
            dels[d + 1] === rel &&
            dels[d + 2] === subj &&
            ((dels[d + 3] ?? 0) & SR_MASK) === (meta & SR_MASK)
          ) {
            d += 4;
            continue;
          }
          cols.push(v, rel, subj, meta);
        }
      }
    }
    for (let i = 0; i < adds.length; i += 4) {
      if ((i & 0x3ffff) === 0) yield; // every 64k records
      cols.push(adds[i] as number, adds[i + 1] as number, adds[i + 2] as number, adds[i + 3] as number);
    }
    return yield* buildBase(cols, nodes);
  }

  /**
   * True when the base holds at least max(checkpointChanges, min(entries / 4, MAX_TAIL)) changes
   * more than the last checkpoint. The quarter keeps the copy's cost per change applied small (a
   * background copy of a 1M-tuple image takes ≈ 0.16 s, bench checkpoint-stall; a synced write
   * costs milliseconds). The cap bounds a restart after a crash: the image loads in ≈ 0.3 µs per
   * entry and the tail replays, LevelDB reads included, into the overlay; the index then serves
   * while a background merge folds the tail into the base. bench cold-load, image + 250k changes:
   * serving after 2.1 s at 1M tuples and 6.8 s at 10M (image alone 3.6 s; the fold took 3.7 s
   * more in the background), where scanning 10M tuples takes 42–55 s.
   */
  get checkpointDue(): boolean {
    return (
      this.baseApplied - this.savedApplied >=
      Math.max(this.checkpointChanges, Math.min(this.base.layout.entries / 4, MAX_TAIL))
    );
  }

  /**
   * Writes a checkpoint of the current base at the revision it reflects (the overlay's changes
   * stay in the change log for the next load to replay), without blocking: see `save`. Skipped
   * when a checkpoint of this index is running or the index is closed.
   */
  checkpointBase(storage: Storage, storeId: string): Promise<CheckpointOutcome> {
    if (this.closed || this.saving) return Promise.resolve('skipped');
    return this.save(storage, storeId, this.base, this.baseRevision, this.baseApplied);
  }

  /**
   * Writes a checkpoint of the index at its current revision (at a graceful stop): stops a
   * running background checkpoint, lets merges settle, folds the overlay into the base
   * (synchronously), then saves that base like `checkpointBase`.
   */
  async checkpoint(storage: Storage, storeId: string): Promise<CheckpointOutcome> {
    for (;;) {
      if (this.saving) {
        this.saving.stop = true;
        await this.saving.done.catch(() => undefined);
      } else if (this.merging) await this.settled();
      else break;
    }
    if (this.closed) return 'skipped'; // dropped (store deleted) meanwhile: nothing to keep
    this.mergeSync();
    return this.save(storage, storeId, this.base, this.revision, this.applied);
  }

  /**
   * Streams the image of `base` to storage, one chunk (≤ 2 MiB, or one block of node strings)
   * per event-loop turn, so writes, merges and queries run in between. The base is pinned (one
   * more reference on its memory) until the copy ends: a merge may replace it and a close may
   * drop the index's reference meanwhile, and neither has to wait for a copy that can take
   * seconds. The copy stops at the next slice once the index is closed (the dictionary's memory
   * goes with it) or `checkpoint` asks; a deleted store stops it too. Sets `saving` synchronously.
   */
  private save(
    storage: Storage,
    storeId: string,
    base: Base,
    revision: number,
    applied: number,
  ): Promise<CheckpointOutcome> {
    base.retain();
    const job: { stop: boolean; done: Promise<CheckpointOutcome> } = { stop: false, done: Promise.resolve('skipped') };
    job.done = (async (): Promise<CheckpointOutcome> => {
      try {
        const writer = await storage.openCheckpoint(storeId, revision);
        if (!(await streamImage(imageChunks(this.dict, base), writer, () => job.stop || this.closed)))
          return 'cancelled';
        if (applied >= this.savedApplied) {
          this.savedApplied = applied;
          this.savedRevision = revision;
        }
        return 'written';
      } catch (err) {
        if (err instanceof AppError && err.code === 'store_id_not_found') return 'cancelled';
        throw err;
      } finally {
        base.drop();
        if (this.saving === job) this.saving = undefined;
      }
    })();
    this.saving = job;
    return job.done;
  }

  /** The revision of the last checkpoint this index wrote or was loaded from, if any. */
  get checkpointRevision(): number | undefined {
    return this.savedRevision;
  }

  /** Releases the index's own references; snapshots still in use keep their memory alive. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.current.retire(this.retireAfterMs);
    this.base.drop();
    this.overlay.drop();
    this.dict.nodeTypes.region.drop();
    this.dict.condNames.region.drop();
    this.dict.shared?.drop();
  }

  /** Bytes of shared memory held by the base (for benchmarks). */
  get baseBytes(): number {
    return this.base.bytes;
  }
}
