// A bounded Check result cache for MINIMIZE_LATENCY requests. Keys carry the index snapshot (one
// store at one revision) and the model, so an entry can never answer for a different set of
// tuples: a write publishes a new snapshot and older entries simply stop being hit (and age out).
// Only plain Checks are cached (no contextual tuples, no context) and only definite answers:
// errors, deadlines and anything cut short never reach `set`.

// Eviction is "second chance" (CLOCK over the Map's insertion order): a hit only sets a flag in
// place, and the oldest entry is evicted unless flagged, in which case it moves to the back
// unflagged. A hit thus costs one Map update instead of a delete and a re-insert.
const ALLOWED = 1;
const REFERENCED = 2;

/** Token per (snapshot, model) pair, made on first use; held weakly by the snapshot. */
const tokens = new WeakMap<object, WeakMap<object, string>>();
let nextToken = 0;

function scopeToken(snapshot: object, model: object): string {
  let byModel = tokens.get(snapshot);
  if (!byModel) tokens.set(snapshot, (byModel = new WeakMap()));
  let t = byModel.get(model);
  if (t === undefined) byModel.set(model, (t = (nextToken++).toString(36)));
  return t;
}

export class ResultCache {
  /** key → ALLOWED bit | REFERENCED bit. */
  private readonly entries = new Map<string, number>();
  /** Lookups answered and not answered (read by `Latch.stats()` on a metrics scrape). */
  hits = 0;
  misses = 0;

  constructor(readonly capacity: number) {}

  /**
   * The key of a check against one snapshot (one store at one revision) and one model: a short
   * token for the pair (never reused, so an entry can only answer for that pair) and the tuple
   * key. Shorter than spelling out store, model and revision: a Map lookup hashes the whole string.
   * A hit is answered before the key is validated against the model, so the key must be injective
   * for any strings: the token has no space, and the object's and relation's lengths delimit them
   * (no separator character can be ruled out of a field the engine has not yet validated).
   */
  static key(snapshot: object, model: object, k: { object: string; relation: string; user: string }): string {
    return `${scopeToken(snapshot, model)} ${k.object.length}:${k.relation.length}:${k.object}${k.relation}${k.user}`;
  }

  get(key: string): boolean | undefined {
    const v = this.entries.get(key);
    if (v === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    if ((v & REFERENCED) === 0) this.entries.set(key, v | REFERENCED);
    return (v & ALLOWED) !== 0;
  }

  set(key: string, allowed: boolean): void {
    if (this.capacity <= 0) return;
    if (this.entries.size >= this.capacity && !this.entries.has(key)) {
      // Bounded: every pass clears a flag, so at most `size` moves before an eviction.
      for (const [oldest, v] of this.entries) {
        this.entries.delete(oldest);
        if ((v & REFERENCED) === 0) break;
        this.entries.set(oldest, v & ALLOWED);
      }
    }
    this.entries.set(key, allowed ? ALLOWED : 0);
  }

  get size(): number {
    return this.entries.size;
  }
}
