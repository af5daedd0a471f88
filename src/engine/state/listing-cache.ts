// The listing cache: the complete, sorted answers of paged ListObjects and ListUsers requests,
// kept for the next pages while the store state they were computed against lasts
// (evaluation/list/pages.ts holds the page contract).

/**
 * What a complete result was computed against. A cached result is reused only for the same
 * index object (a reloaded store gets a new one), revision and model, and only before `validUntil`
 * (ms): the first instant a stored tuple that the result may depend on expires.
 */
export interface ListingStamp {
  readonly index: object;
  readonly revision: number;
  readonly modelId: string;
  readonly validUntil: number;
}

/** Whether an entry stamped `s` still answers a request stamped `stamp` at `now`. */
function sameState(s: ListingStamp, stamp: ListingStamp, now: number): boolean {
  return s.index === stamp.index && s.revision === stamp.revision && s.modelId === stamp.modelId && now < s.validUntil;
}

interface Entry {
  readonly stamp: ListingStamp;
  readonly keys: readonly string[];
}

/**
 * Sorted complete results by request, most recent last; at most `capacity` entries (each holds
 * references to strings the index dictionary already owns: 8 bytes per result).
 */
export class ListingCache {
  private readonly entries = new Map<string, Entry>();
  hits = 0;
  misses = 0;

  constructor(readonly capacity = 16) {}

  get(key: string, stamp: ListingStamp, now: number): readonly string[] | undefined {
    const e = this.entries.get(key);
    const s = e?.stamp;
    if (!e || !s || !sameState(s, stamp, now)) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.entries.delete(key);
    this.entries.set(key, e);
    return e.keys;
  }

  /**
   * `get` for a request that computes no complete answer itself (an unpaged stream): a hit is
   * counted, a miss is not, and the entry's recency is unchanged.
   */
  peek(key: string, stamp: ListingStamp, now: number): readonly string[] | undefined {
    const e = this.entries.get(key);
    const s = e?.stamp;
    if (!e || !s || !sameState(s, stamp, now)) return undefined;
    this.hits++;
    return e.keys;
  }

  set(key: string, stamp: ListingStamp, keys: readonly string[]): void {
    if (this.capacity <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { stamp, keys });
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  /** Forgets the results of one store (deleted). */
  dropStore(storeId: string): void {
    for (const k of this.entries.keys()) if (k.startsWith(`${storeId}\u0000`)) this.entries.delete(k);
  }
}
