// A bounded Check result cache for MINIMIZE_LATENCY requests. Keys carry the store, the model
// and the index revision, so an entry can never answer for a different set of tuples: a write
// moves the revision and older entries simply stop being hit (and age out of the LRU).
// Only plain Checks are cached (no contextual tuples, no context) and only definite answers:
// errors, deadlines and anything cut short never reach `set`.

export class ResultCache {
  private readonly entries = new Map<string, boolean>();
  /** Lookups answered and not answered (read by `Latch.stats()` on a metrics scrape). */
  hits = 0;
  misses = 0;

  constructor(readonly capacity: number) {}

  static key(storeId: string, modelId: string, revision: number, k: { object: string; relation: string; user: string }): string {
    return `${storeId}\u0000${modelId}\u0000${revision}\u0000${k.object}\u0000${k.relation}\u0000${k.user}`;
  }

  get(key: string): boolean | undefined {
    const v = this.entries.get(key);
    if (v === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    // Refresh recency: Map iteration order is insertion order.
    this.entries.delete(key);
    this.entries.set(key, v);
    return v;
  }

  set(key: string, allowed: boolean): void {
    if (this.capacity <= 0) return;
    if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
    this.entries.set(key, allowed);
  }

  get size(): number {
    return this.entries.size;
  }
}
