// The ordered key-value contract under both backends (LevelDB and memory), plus a per-key mutex.
// Keys are binary strings (one char per byte, see codec.ts); values are bytes.

export type KvOp =
  | { readonly type: 'put'; readonly key: string; readonly value: Uint8Array }
  | { readonly type: 'del'; readonly key: string };

/** A key range; bounds are binary strings. */
export interface KvRange {
  readonly gt?: string | undefined;
  readonly gte?: string | undefined;
  readonly lt?: string | undefined;
  readonly reverse?: boolean | undefined;
  readonly limit?: number | undefined;
}

/**
 * One atomic batch filled op by op as the caller finds them (LevelDB: its chained batch, each op
 * handed to the native batch at once), so a large batch needs no array of ops. `write` or
 * `discard` must follow, once.
 */
export interface KvWriter {
  put(key: string, value: Uint8Array): void;
  del(key: string): void;
  /** Writes every op added, atomically; durable on resolve when `sync`. As `Kv.batch` fails. */
  write(sync: boolean): Promise<void>;
  /** Drops the ops unwritten. */
  discard(): Promise<void>;
}

export type KvEntry = readonly [string, Uint8Array];
export type KvTextEntry = readonly [string, string];

export interface Kv {
  get(key: string): Promise<Uint8Array | undefined>;
  getMany(keys: readonly string[]): Promise<(Uint8Array | undefined)[]>;
  /** Atomic; durable on resolve when `sync` (every API mutation passes sync: true). */
  batch(ops: readonly KvOp[], sync: boolean): Promise<void>;
  /**
   * Optional: a batch to fill op by op (KvWriter), for a caller that finds its ops one at a time
   * while it waits on reads; undefined when the backend has none to give now (then: `batch`).
   */
  writer?(): KvWriter | undefined;
  /**
   * Entries in key order (reverse when asked). The snapshot is taken synchronously when this is
   * called, so a caller that reads in-memory state and opens the iterator in the same tick sees
   * one consistent state. The iterable must be consumed (or broken out of) to release it.
   */
  entries(range: KvRange): AsyncIterable<KvEntry>;
  /** The same entries in arrays (one per native read): the cheap way to stream millions. */
  entryBatches(range: KvRange): AsyncIterable<readonly KvEntry[]>;
  /**
   * entryBatches with values decoded as UTF-8, for ranges whose values are text (tuples): LevelDB
   * hands out strings much cheaper than one Uint8Array per value.
   */
  textBatches(range: KvRange): AsyncIterable<readonly KvTextEntry[]>;
  /** Keys only, same snapshot rule as `entries`. */
  keys(range: KvRange): AsyncIterable<string>;
  close(): Promise<void>;
}

/**
 * An async iterator over the items of batches that needs no generator machinery per item:
 * `next()` hands out buffered items as already-resolved promises (scanTuples streams millions).
 */
export class FlatIterator<E, T> implements AsyncIterableIterator<T> {
  private buffer: readonly E[] = [];
  private at = 0;

  constructor(
    private readonly source: AsyncIterator<readonly E[]>,
    private readonly map: (e: E) => T,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T>> {
    if (this.at < this.buffer.length)
      return Promise.resolve({ done: false, value: this.map(this.buffer[this.at++] as E) });
    return this.refill();
  }

  async return(): Promise<IteratorResult<T>> {
    this.buffer = [];
    await this.source.return?.();
    return { done: true, value: undefined };
  }

  private async refill(): Promise<IteratorResult<T>> {
    for (;;) {
      const r = await this.source.next();
      if (r.done) return { done: true, value: undefined };
      this.buffer = r.value;
      this.at = 0;
      if (this.buffer.length > 0) return this.next();
    }
  }
}

/** Serializes async sections per key (one store's writes): commit order = call order. */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release: () => void = () => {};
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Resolves when every section queued so far has finished (used by close()). */
  async idle(): Promise<void> {
    while (this.tails.size > 0) await Promise.all(this.tails.values());
  }
}
