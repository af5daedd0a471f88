// A bounded Check result cache for MINIMIZE_LATENCY requests. Entries are scoped to an index
// snapshot (one store at one revision) and a model, so an entry can never answer for a different
// set of tuples: a write publishes a new snapshot and older entries simply stop being hit (and
// age out). Only plain Checks are cached (no contextual tuples, no context) and only definite
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

const ALLOWED = 1;
const REFERENCED = 2;
const FIRST_SLOTS = 1024;

/** Scope id per (snapshot, model) pair, made on first use (≥ 1, never reused); held weakly by the snapshot. */
const scopes = new WeakMap<object, WeakMap<object, number>>();
let nextScope = 1;

/** FNV-1a over the UTF-16 code units of `s`, continuing from `h`. */
function mix(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h;
}

interface Key {
  readonly object: string;
  readonly relation: string;
  readonly user: string;
}

function hashOf(scope: number, k: Key): number {
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

export class ResultCache {
  /** Lookups answered and not answered (read by `Latch.stats()` on a metrics scrape). */
  hits = 0;
  misses = 0;
  readonly #maxSlots: number;
  #mask: number;
  /** Per slot: the scope id (0 = empty), the key's fields, its hash, ALLOWED | REFERENCED. */
  #scopes: Float64Array;
  #objects: (string | undefined)[];
  #relations: (string | undefined)[];
  #users: (string | undefined)[];
  #hashes: Int32Array;
  #flags: Uint8Array;
  #size = 0;
  #hand = 0;

  constructor(readonly capacity: number) {
    this.#maxSlots = slotsFor(Math.max(1, capacity));
    const slots = Math.min(this.#maxSlots, FIRST_SLOTS);
    this.#mask = slots - 1;
    this.#scopes = new Float64Array(slots);
    this.#objects = new Array<string | undefined>(slots).fill(undefined);
    this.#relations = new Array<string | undefined>(slots).fill(undefined);
    this.#users = new Array<string | undefined>(slots).fill(undefined);
    this.#hashes = new Int32Array(slots);
    this.#flags = new Uint8Array(slots);
  }

  /** The scope of a check against one snapshot and one model: entries of other scopes never answer it. */
  static scope(snapshot: object, model: object): number {
    let byModel = scopes.get(snapshot);
    if (!byModel) scopes.set(snapshot, (byModel = new WeakMap()));
    let s = byModel.get(model);
    if (s === undefined) byModel.set(model, (s = nextScope++));
    return s;
  }

  get(scope: number, k: Key): boolean | undefined {
    const i = this.#find(scope, k, hashOf(scope, k));
    if (i < 0) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    const f = this.#flags[i] as number;
    this.#flags[i] = f | REFERENCED;
    return (f & ALLOWED) !== 0;
  }

  set(scope: number, k: Key, allowed: boolean): void {
    if (this.capacity <= 0) return;
    const h = hashOf(scope, k);
    let i = this.#find(scope, k, h);
    if (i >= 0) {
      this.#flags[i] = allowed ? ALLOWED : 0;
      return;
    }
    if (this.#size >= this.capacity) this.#evictOne();
    else if (2 * (this.#size + 1) > this.#mask + 1 && this.#mask + 1 < this.#maxSlots) this.#grow();
    else {
      this.#put(~i, scope, k.object, k.relation, k.user, h, allowed ? ALLOWED : 0);
      return;
    }
    i = this.#find(scope, k, h); // the slots moved
    this.#put(~i, scope, k.object, k.relation, k.user, h, allowed ? ALLOWED : 0);
  }

  get size(): number {
    return this.#size;
  }

  /** The slot holding the key, or ~(the empty slot where it would go). */
  #find(scope: number, k: Key, h: number): number {
    const mask = this.#mask;
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const s = this.#scopes[i] as number;
      if (s === 0) return ~i;
      if (s === scope && this.#hashes[i] === h && this.#objects[i] === k.object && this.#relations[i] === k.relation && this.#users[i] === k.user) {
        return i;
      }
    }
  }

  #put(i: number, scope: number, object: string, relation: string, user: string, h: number, flags: number): void {
    this.#scopes[i] = scope;
    this.#objects[i] = object;
    this.#relations[i] = relation;
    this.#users[i] = user;
    this.#hashes[i] = h;
    this.#flags[i] = flags;
    this.#size++;
  }

  /** Evicts one entry (the cache is full, so there is one): within two sweeps every flag is clear. */
  #evictOne(): void {
    const mask = this.#mask;
    for (;;) {
      const i = this.#hand;
      this.#hand = (i + 1) & mask;
      if (this.#scopes[i] === 0) continue;
      const f = this.#flags[i] as number;
      if ((f & REFERENCED) !== 0) {
        this.#flags[i] = f & ALLOWED;
        continue;
      }
      this.#remove(i);
      return;
    }
  }

  /** Empties slot `i`, shifting back the entries after it whose probe run passes through it. */
  #remove(i: number): void {
    const mask = this.#mask;
    let hole = i;
    for (let j = (i + 1) & mask; this.#scopes[j] !== 0; j = (j + 1) & mask) {
      const home = (this.#hashes[j] as number) & mask;
      // The entry at j may fill the hole if the hole lies on its probe path (home … j).
      if (((j - home) & mask) >= ((j - hole) & mask)) {
        this.#scopes[hole] = this.#scopes[j] as number;
        this.#objects[hole] = this.#objects[j];
        this.#relations[hole] = this.#relations[j];
        this.#users[hole] = this.#users[j];
        this.#hashes[hole] = this.#hashes[j] as number;
        this.#flags[hole] = this.#flags[j] as number;
        hole = j;
      }
    }
    this.#scopes[hole] = 0;
    this.#objects[hole] = undefined;
    this.#relations[hole] = undefined;
    this.#users[hole] = undefined;
    this.#size--;
  }

  /** Doubles the table and re-inserts every entry by its stored hash. */
  #grow(): void {
    const old = { scopes: this.#scopes, objects: this.#objects, relations: this.#relations, users: this.#users, hashes: this.#hashes, flags: this.#flags };
    const slots = 2 * (this.#mask + 1);
    this.#mask = slots - 1;
    this.#scopes = new Float64Array(slots);
    this.#objects = new Array<string | undefined>(slots).fill(undefined);
    this.#relations = new Array<string | undefined>(slots).fill(undefined);
    this.#users = new Array<string | undefined>(slots).fill(undefined);
    this.#hashes = new Int32Array(slots);
    this.#flags = new Uint8Array(slots);
    this.#size = 0;
    this.#hand = 0;
    for (let j = 0; j < old.scopes.length; j++) {
      const s = old.scopes[j] as number;
      if (s === 0) continue;
      const h = old.hashes[j] as number;
      let i = h & this.#mask;
      while (this.#scopes[i] !== 0) i = (i + 1) & this.#mask;
      this.#put(i, s, old.objects[j] as string, old.relations[j] as string, old.users[j] as string, h, old.flags[j] as number);
    }
  }
}
