// A bounded Check result cache for MINIMIZE_LATENCY requests. Entries are scoped to an index
// snapshot (one store at one revision) and a model, so an entry can never answer for a different
// set of tuples: a write publishes a new snapshot and older entries simply stop being hit (and
// age out). A store with expiring tuples adds the expiry epoch (how many expiries have passed) to
// the scope, so an answer is never served after a tuple it may depend on has expired. Only plain Checks are cached (no contextual tuples, no context) and only definite
// answers: errors, deadlines and anything cut short never reach `set`.
//
// The table is open addressing with linear probing over parallel arrays, keyed by the scope and
// the three key strings themselves, compared field by field on a hit. A Map keyed by a string
// built per lookup cost ≈ 340 ns on this project's VM (building the key, flattening it, hashing
// it) and ≈ 150 B of garbage per Check; hashing the fields in place costs ≈ 75 ns and allocates
// nothing. Comparing the fields (not a joined text) also means no two different keys can meet.
//
// Eviction is "second chance" (CLOCK): a hit sets a flag in place; when the cache is full, a hand
// sweeps the slots, clearing flags, and evicts the first entry not hit since the hand last passed
// it. Deletion shifts the following entries of the probe run back (no tombstones), so lookups
// stay short whatever the churn. The table starts small and doubles up to twice the capacity.

import type { CheckTupleKey } from '../contract.js';

const ALLOWED = 1;
const REFERENCED = 2;
const FIRST_SLOTS = 1024;

/** Scope id per (snapshot, model) pair, made on first use (≥ 1, never reused); held weakly by the snapshot. */
const scopes = new WeakMap<object, WeakMap<object, number>>();
const epochScopes = new WeakMap<object, Map<number, number>>();
let nextScope = 1;

/** FNV-1a over the UTF-16 code units of `s`, continuing from `h`. */
function mix(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h;
}

function hashOf(scope: number, k: CheckTupleKey): number {
  // The relation's and the object's lengths go in too, so that moving characters from one field
  // to the next changes the hash (equality is decided field by field anyway).
  let h = Math.imul(0x811c9dc5 ^ scope, 0x01000193) ^ (k.object.length << 16) ^ k.relation.length;
  h = mix(mix(mix(h, k.object), k.relation), k.user);
  return (h ^ (h >>> 16)) | 0;
}

function slotsFor(entries: number): number {
  let n = 2;
  while (n < 2 * entries) n *= 2;
  return n;
}

/** The table's parallel arrays; per slot: the scope id (0 = empty), the key's fields, its hash, ALLOWED | REFERENCED. */
class Slots {
  readonly scopes: Float64Array;
  readonly objects: (string | undefined)[];
  readonly relations: (string | undefined)[];
  readonly users: (string | undefined)[];
  readonly hashes: Int32Array;
  readonly flags: Uint8Array;

  constructor(readonly count: number) {
    this.scopes = new Float64Array(count);
    this.objects = new Array<string | undefined>(count).fill(undefined);
    this.relations = new Array<string | undefined>(count).fill(undefined);
    this.users = new Array<string | undefined>(count).fill(undefined);
    this.hashes = new Int32Array(count);
    this.flags = new Uint8Array(count);
  }
}

export class ResultCache {
  /** Lookups answered and not answered (read by `Latch.stats()` on a metrics scrape). */
  hits = 0;
  misses = 0;
  readonly #maxSlots: number;
  #t: Slots;
  #size = 0;
  #hand = 0;

  constructor(readonly capacity: number) {
    this.#maxSlots = slotsFor(Math.max(1, capacity));
    this.#t = new Slots(Math.min(this.#maxSlots, FIRST_SLOTS));
  }

  /** The scope of a check against one snapshot and one model: entries of other scopes never answer it. */
  static scope(snapshot: object, model: object, expiryEpoch = 0): number {
    let byModel = scopes.get(snapshot);
    if (!byModel) scopes.set(snapshot, (byModel = new WeakMap()));
    let s = byModel.get(model);
    if (s === undefined) byModel.set(model, (s = nextScope++));
    if (expiryEpoch === 0) return s;
    // A later expiry epoch of the same snapshot and model (a stored tuple expired since): a scope of its own.
    let byEpoch = epochScopes.get(snapshot);
    if (!byEpoch) epochScopes.set(snapshot, (byEpoch = new Map()));
    const key = s * 2 ** 21 + expiryEpoch; // no string built per lookup

    let e = byEpoch.get(key);
    if (e === undefined) byEpoch.set(key, (e = nextScope++));
    return e;
  }

  get(scope: number, k: CheckTupleKey): boolean | undefined {
    const i = this.#find(scope, k, hashOf(scope, k));
    if (i < 0) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    const t = this.#t;
    const f = t.flags[i] as number;
    t.flags[i] = f | REFERENCED;
    return (f & ALLOWED) !== 0;
  }

  set(scope: number, k: CheckTupleKey, allowed: boolean): void {
    if (this.capacity <= 0) return;
    const h = hashOf(scope, k);
    let i = this.#find(scope, k, h);
    if (i >= 0) {
      this.#t.flags[i] = allowed ? ALLOWED : 0;
      return;
    }
    if (this.#size >= this.capacity) {
      this.#evictOne();
      i = this.#find(scope, k, h); // the deletion shifted entries back
    } else if (2 * (this.#size + 1) > this.#t.count && this.#t.count < this.#maxSlots) {
      this.#grow();
      i = this.#find(scope, k, h);
    }
    this.#put(~i, scope, k.object, k.relation, k.user, h, allowed ? ALLOWED : 0);
  }

  get size(): number {
    return this.#size;
  }

  /** The slot holding the key, or ~(the empty slot where it would go). */
  #find(scope: number, k: CheckTupleKey, h: number): number {
    const t = this.#t;
    const mask = t.count - 1;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const s = t.scopes[i] as number;
      if (s === 0) return ~i;
      if (
        s === scope &&
        t.hashes[i] === h &&
        t.objects[i] === k.object &&
        t.relations[i] === k.relation &&
        t.users[i] === k.user
      ) {
        return i;
      }
    }
  }

  #put(i: number, scope: number, object: string, relation: string, user: string, h: number, flags: number): void {
    const t = this.#t;
    t.scopes[i] = scope;
    t.objects[i] = object;
    t.relations[i] = relation;
    t.users[i] = user;
    t.hashes[i] = h;
    t.flags[i] = flags;
    this.#size++;
  }

  /** Evicts one entry (the cache is full, so there is one): within two sweeps every flag is clear. */
  #evictOne(): void {
    const t = this.#t;
    const mask = t.count - 1;
    for (;;) {
      const i = this.#hand;
      this.#hand = (i + 1) & mask;
      if (t.scopes[i] === 0) continue;
      const f = t.flags[i] as number;
      if ((f & REFERENCED) !== 0) {
        t.flags[i] = f & ALLOWED;
        continue;
      }
      this.#remove(i);
      return;
    }
  }

  /** Empties slot `i`, shifting back the entries after it whose probe run passes through it. */
  #remove(i: number): void {
    const t = this.#t;
    const mask = t.count - 1;
    let hole = i;
    for (let j = (i + 1) & mask; t.scopes[j] !== 0; j = (j + 1) & mask) {
      const home = (t.hashes[j] as number) & mask;
      // The entry at j may fill the hole if the hole lies on its probe path (home … j).
      if (((j - home) & mask) >= ((j - hole) & mask)) {
        t.scopes[hole] = t.scopes[j] as number;
        t.objects[hole] = t.objects[j];
        t.relations[hole] = t.relations[j];
        t.users[hole] = t.users[j];
        t.hashes[hole] = t.hashes[j] as number;
        t.flags[hole] = t.flags[j] as number;
        hole = j;
      }
    }
    t.scopes[hole] = 0;
    t.objects[hole] = undefined;
    t.relations[hole] = undefined;
    t.users[hole] = undefined;
    this.#size--;
  }

  /** Doubles the table and re-inserts every entry by its stored hash. */
  #grow(): void {
    const old = this.#t;
    const t = (this.#t = new Slots(2 * old.count));
    const mask = t.count - 1;
    this.#size = 0;
    this.#hand = 0;
    for (let j = 0; j < old.count; j++) {
      const s = old.scopes[j] as number;
      if (s === 0) continue;
      const h = old.hashes[j] as number;
      let i = h & mask;
      while (t.scopes[i] !== 0) i = (i + 1) & mask;
      this.#put(
        i,
        s,
        old.objects[j] as string,
        old.relations[j] as string,
        old.users[j] as string,
        h,
        old.flags[j] as number,
      );
    }
  }
}
