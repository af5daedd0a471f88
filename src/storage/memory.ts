// The in-memory backend: an ordered, snapshotting key-value map under the same KvStorage logic as
// LevelDB, so ordering, pagination, cursors and errors are identical by construction.
//
// The map is a list of sorted chunks (≤ 256 entries each) that are never mutated once published:
// a batch copies the chunk list and the chunks it touches, then swaps the list in one assignment.
// An iterator keeps the list it started with, which is its snapshot (like LevelDB's). Small
// chunks keep those copies cheap; the test suite checks splits against a naive sorted map.

import { KvStorage } from './kv-storage.js';
import type { Kv, KvEntry, KvOp, KvRange, KvTextEntry } from './kv.js';

interface Entry {
  readonly k: string;
  readonly v: Uint8Array;
}
type Chunk = readonly Entry[];

const MAX_CHUNK = 256;
const BATCH_ROWS = 1000;

/** Index of the chunk that holds or would hold `key` (the last chunk whose first key ≤ key). */
function chunkOf(chunks: readonly Chunk[], key: string): number {
  let lo = 0;
  let hi = chunks.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((chunks[mid]?.[0]?.k ?? '') <= key) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** First index in `chunk` whose key is ≥ key. */
function lowerBound(chunk: Chunk, key: string): number {
  let lo = 0;
  let hi = chunk.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((chunk[mid]?.k ?? '') < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function* forward(chunks: readonly Chunk[], r: KvRange): Generator<Entry> {
  const from = r.gte ?? r.gt;
  let ci = from === undefined ? 0 : chunkOf(chunks, from);
  let i = from === undefined ? 0 : lowerBound(chunks[ci] ?? [], from);
  for (; ci < chunks.length; ci++, i = 0) {
    const c = chunks[ci] ?? [];
    for (; i < c.length; i++) {
      const e = c[i] as Entry;
      if (r.gt !== undefined && e.k <= r.gt) continue;
      if (r.lt !== undefined && e.k >= r.lt) return;
      yield e;
    }
  }
}

function* backward(chunks: readonly Chunk[], r: KvRange): Generator<Entry> {
  let ci = r.lt === undefined ? chunks.length - 1 : chunkOf(chunks, r.lt);
  let i = r.lt === undefined ? (chunks[ci]?.length ?? 0) - 1 : lowerBound(chunks[ci] ?? [], r.lt) - 1;
  for (; ci >= 0; ci--, i = (chunks[ci]?.length ?? 0) - 1) {
    const c = chunks[ci] ?? [];
    for (; i >= 0; i--) {
      const e = c[i] as Entry;
      if (r.gte !== undefined && e.k < r.gte) return;
      if (r.gt !== undefined && e.k <= r.gt) return;
      yield e;
    }
  }
}

/** The entries of `range` in a snapshot, honouring `limit`. */
function* walk(snapshot: readonly Chunk[], range: KvRange): Generator<KvEntry> {
  let n = 0;
  const limit = range.limit ?? Infinity;
  for (const e of range.reverse ? backward(snapshot, range) : forward(snapshot, range)) {
    if (n++ >= limit) return;
    yield [e.k, e.v];
  }
}

/** Ordered in-memory Kv with snapshot iterators. */
export class MemoryKv implements Kv {
  private chunks: readonly Chunk[] = [];

  async get(key: string): Promise<Uint8Array | undefined> {
    return this.find(key);
  }

  async getMany(keys: readonly string[]): Promise<(Uint8Array | undefined)[]> {
    return keys.map((k) => this.find(k));
  }

  async batch(ops: readonly KvOp[]): Promise<void> {
    const chunks = this.chunks.slice();
    const fresh = new Set<Chunk>();
    for (const op of ops) applyOp(chunks, fresh, op);
    this.chunks = chunks;
  }

  entries(range: KvRange): AsyncIterable<KvEntry> {
    const snapshot = this.chunks;
    return {
      async *[Symbol.asyncIterator]() {
        yield* walk(snapshot, range);
      },
    };
  }

  entryBatches(range: KvRange): AsyncIterable<readonly KvEntry[]> {
    const snapshot = this.chunks;
    return {
      async *[Symbol.asyncIterator]() {
        const batch: KvEntry[] = [];
        for (const e of walk(snapshot, range)) {
          batch.push(e);
          if (batch.length === BATCH_ROWS) yield batch.splice(0);
        }
        if (batch.length > 0) yield batch;
      },
    };
  }

  textBatches(range: KvRange): AsyncIterable<readonly KvTextEntry[]> {
    const source = this.entryBatches(range);
    return {
      async *[Symbol.asyncIterator]() {
        for await (const rows of source)
          yield rows.map(([k, v]): KvTextEntry => [
            k,
            Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('utf8'),
          ]);
      },
    };
  }

  keys(range: KvRange): AsyncIterable<string> {
    const entries = this.entries(range);
    return {
      async *[Symbol.asyncIterator]() {
        for await (const [k] of entries) yield k;
      },
    };
  }

  async close(): Promise<void> {}

  private find(key: string): Uint8Array | undefined {
    const c = this.chunks[chunkOf(this.chunks, key)] ?? [];
    const e = c[lowerBound(c, key)];
    return e?.k === key ? e.v : undefined;
  }
}

/** Applies one op to a private copy of the chunk list, copying each touched chunk once. */
function applyOp(chunks: Chunk[], fresh: Set<Chunk>, op: KvOp): void {
  if (chunks.length === 0) {
    if (op.type === 'put') chunks.push([{ k: op.key, v: op.value.slice() }]);
    return;
  }
  const ci = chunkOf(chunks, op.key);
  let c = chunks[ci] as Entry[];
  const i = lowerBound(c, op.key);
  const hit = c[i]?.k === op.key;
  if (op.type === 'del' && !hit) return;
  if (!fresh.has(c)) {
    c = c.slice();
    fresh.add(c);
    chunks[ci] = c;
  }
  if (op.type === 'del') {
    c.splice(i, 1);
    if (c.length === 0) chunks.splice(ci, 1);
    return;
  }
  const entry = { k: op.key, v: op.value.slice() };
  if (hit) c[i] = entry;
  else c.splice(i, 0, entry);
  if (c.length > MAX_CHUNK) {
    const right = c.splice(MAX_CHUNK >> 1);
    fresh.add(right);
    chunks.splice(ci + 1, 0, right);
  }
}

/** A fresh, empty in-memory storage. */
export async function openMemoryStorage(): Promise<KvStorage> {
  return new KvStorage('memory', new MemoryKv()).init();
}
