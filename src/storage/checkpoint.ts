// Index checkpoints: an opaque image stored as a head plus chunks of at most 8 MiB, written as a
// stream under a fresh generation and published by one atomic batch.
//
// Keys (codec.ts): `D <id> k` is the head {revision, generation, chunks}; `D <id> k <gen><i>` is
// chunk i of a generation. A writer stores the chunks of its own generation in synced batches of
// about 2 MiB as they are produced (so memory holds one batch, not the image), then commits: one
// synced batch with the head naming its generation and the deletion of the previous generation's
// chunks and of orphans. Until that batch, readers read the previous head and its chunks, which
// nothing touches; a crash at any point leaves them intact plus orphan chunks of the uncommitted
// generation, which the store's next commit deletes. Chunk batches are synced too: a commit is
// durable only if the chunks it names are (LevelDB may keep earlier unsynced records in an older
// log file that the commit's sync does not cover).
//
// Format 1 heads (no generation; chunk i at `D <id> k <i>`) are still read; the first commit
// replaces them and deletes their chunks.

import { decodeJson, encodeJson, key, prefixEnd, readUint } from './codec.js';
import type { Kv, KvOp } from './kv.js';
import type { CheckpointWriter } from './types.js';

const MAX_CHUNK_BYTES = 8 * 1024 * 1024;
/**
 * A writer stores its pending chunks once they reach this many bytes. LevelDB copies a batch's
 * values on the calling thread (measured: 2–8 ms for 2 MiB, 3–24 ms for 8 MiB), and a synced
 * batch holds up the other writers in LevelDB's queue until its fsync.
 */
const BATCH_BYTES = 2 * 1024 * 1024;

interface Head {
  readonly revision: number;
  /** Absent in format-1 heads. */
  readonly generation?: number;
  readonly chunks: number;
}

/** Runs `fn` under the store's mutex after checking that the store is live (KvStorage.exclusive). */
type Exclusive = <T>(storeId: string, fn: () => Promise<T>) => Promise<T>;

async function readHead(kv: Kv, storeId: string): Promise<Head | undefined> {
  const v = await kv.get(key.checkpoint(storeId));
  return v ? decodeJson<Head>(v) : undefined;
}

/** The keys of the chunks a head names, in order. */
function chunkKeys(storeId: string, head: Head): string[] {
  const g = head.generation;
  return Array.from({ length: head.chunks }, (_, i) =>
    g === undefined ? key.legacyChunk(storeId, i) : key.chunk(storeId, g, i),
  );
}

/** `chunk` in pieces of at most 8 MiB (views, no copy); an empty chunk stays one empty piece. */
function pieces(chunk: Uint8Array): Uint8Array[] {
  if (chunk.byteLength <= MAX_CHUNK_BYTES) return [chunk];
  const out: Uint8Array[] = [];
  for (let at = 0; at < chunk.byteLength; at += MAX_CHUNK_BYTES)
    out.push(chunk.subarray(at, Math.min(chunk.byteLength, at + MAX_CHUNK_BYTES)));
  return out;
}

/**
 * A checkpoint writer's chunks not stored yet, in pieces of at most MAX_CHUNK_BYTES; every
 * backend's writer stores them in batches of about BATCH_BYTES.
 */
export class PendingChunks {
  private list: Uint8Array[] = [];
  private bytes = 0;

  /** Adds `chunk`; true once a batch's worth is pending. */
  add(chunk: Uint8Array): boolean {
    for (const p of pieces(chunk)) {
      this.list.push(p);
      this.bytes += p.byteLength;
    }
    return this.bytes >= BATCH_BYTES;
  }

  /** The pending chunks, in order; none are pending afterwards. */
  take(): Uint8Array[] {
    const out = this.list;
    this.list = [];
    this.bytes = 0;
    return out;
  }
}

/**
 * The generations of one KvStorage: the last one handed out per store (generations only grow,
 * so a new writer never shares keys with an orphan) and those whose writers are still open (their
 * chunks are not orphans). Process-local: the directory is held by one process at a time.
 */
export class CheckpointGenerations {
  private readonly last = new Map<string, number>();
  private readonly writing = new Map<string, Set<number>>();

  constructor(
    private readonly kv: Kv,
    private readonly exclusive: Exclusive,
  ) {}

  async open(storeId: string, revision: number): Promise<CheckpointWriter> {
    const generation = await this.exclusive(storeId, async () => {
      const g = (this.last.get(storeId) ?? (await this.highest(storeId))) + 1;
      this.last.set(storeId, g);
      let open = this.writing.get(storeId);
      if (!open) this.writing.set(storeId, (open = new Set()));
      open.add(g);
      return g;
    });
    return new GenerationWriter(this.kv, this.exclusive, storeId, revision, generation, this);
  }

  /** Forgets a deleted store (its keys are reclaimed with the rest of its data). */
  forget(storeId: string): void {
    this.last.delete(storeId);
    this.writing.delete(storeId);
  }

  closed(storeId: string, generation: number): void {
    this.writing.get(storeId)?.delete(generation);
  }

  /** Whether `k` (a key under the head's prefix) is a chunk of an open writer's generation. */
  isOpen(storeId: string, k: string): boolean {
    const head = key.checkpoint(storeId);
    return k.length === head.length + 8 && (this.writing.get(storeId)?.has(readUint(k, head.length, 4)) ?? false);
  }

  /**
   * The highest generation with a key, or named by the head. The last key under the head's
   * prefix is a chunk of the highest generation (for a format-1 key: its index, which no
   * generation above it can collide with either).
   */
  private async highest(storeId: string): Promise<number> {
    const head = key.checkpoint(storeId);
    let g = (await readHead(this.kv, storeId))?.generation ?? 0;
    for await (const k of this.kv.keys({ gt: head, lt: prefixEnd(head), reverse: true, limit: 1 }))
      g = Math.max(g, readUint(k, head.length, 4));
    return g;
  }

  /**
   * Keys of chunks that belong to no checkpoint: every key under the head's prefix except the
   * head, the chunks of generation `keep` (the head's) and those of open writers. Only the gaps
   * between those generations are listed, so the chunks of the live image are not read. A writer
   * opened while the gaps are listed may show up: the caller filters with `isOpen` at commit.
   */
  async orphans(storeId: string, keep: number | undefined): Promise<string[]> {
    const head = key.checkpoint(storeId);
    const skip = [...(this.writing.get(storeId) ?? [])];
    if (keep !== undefined) skip.push(keep);
    skip.sort((a, b) => a - b);
    const out: string[] = [];
    let from = { gt: head } as { gt?: string; gte?: string };
    for (const g of [...skip, undefined]) {
      const lt = g === undefined ? prefixEnd(head) : key.generation(storeId, g);
      for await (const k of this.kv.keys({ ...from, lt })) out.push(k);
      if (g !== undefined) from = { gte: key.generation(storeId, g + 1) };
    }
    return out;
  }
}

class GenerationWriter implements CheckpointWriter {
  private readonly pending = new PendingChunks();
  /** Chunks handed to storage so far; the next chunk's index. */
  private count = 0;
  private finished = false;

  constructor(
    private readonly kv: Kv,
    private readonly exclusive: Exclusive,
    private readonly storeId: string,
    private readonly revision: number,
    private readonly generation: number,
    private readonly owner: CheckpointGenerations,
  ) {}

  async write(chunk: Uint8Array): Promise<void> {
    if (this.finished) throw new Error('latch: checkpoint writer already finished');
    if (this.pending.add(chunk)) {
      const ops = this.takePending();
      await this.exclusive(this.storeId, () => this.kv.batch(ops, true));
    }
  }

  /** Replaces the head unless it names a higher revision; then deletes this writer's chunks instead. */
  async commit(): Promise<boolean> {
    if (this.finished) throw new Error('latch: checkpoint writer already finished');
    const before = await readHead(this.kv, this.storeId);
    const orphans = await this.owner.orphans(this.storeId, before?.generation);
    const ops = this.takePending();
    const head: Head = { revision: this.revision, generation: this.generation, chunks: this.count };
    const won = await this.exclusive(this.storeId, async () => {
      // The head read again under the mutex: another writer may have committed meanwhile (its
      // generation was open above, so only this exact read names its chunks).
      const old = await readHead(this.kv, this.storeId);
      const wins = !old || old.revision <= this.revision;
      if (wins) {
        for (const k of old ? chunkKeys(this.storeId, old) : []) ops.push({ type: 'del', key: k });
        ops.push({ type: 'put', key: key.checkpoint(this.storeId), value: encodeJson(head) });
      } else {
        ops.length = 0;
        for (let i = 0; i < this.count; i++)
          ops.push({ type: 'del', key: key.chunk(this.storeId, this.generation, i) });
      }
      for (const k of orphans)
        if (!this.owner.isOpen(this.storeId, k) && !this.mine(k)) ops.push({ type: 'del', key: k });
      await this.kv.batch(ops, true);
      return wins;
    });
    this.finish();
    return won;
  }

  /** Whether `k` is a chunk key of this writer's generation. */
  private mine(k: string): boolean {
    return (
      k.startsWith(key.generation(this.storeId, this.generation)) &&
      k.length === key.chunk(this.storeId, this.generation, 0).length
    );
  }

  async abort(): Promise<void> {
    if (this.finished) return;
    this.pending.take();
    const ops: KvOp[] = Array.from({ length: this.count }, (_, i) => ({
      type: 'del',
      key: key.chunk(this.storeId, this.generation, i),
    }));
    try {
      if (ops.length > 0) await this.exclusive(this.storeId, () => this.kv.batch(ops, false));
    } catch {
      // Left as orphans: the generation is no longer open, so the store's next commit lists them
      // (or the store is deleted and reclamation removes them).
    }
    this.finish();
  }

  private takePending(): KvOp[] {
    const ops: KvOp[] = this.pending.take().map((value, j) => ({
      type: 'put',
      key: key.chunk(this.storeId, this.generation, this.count + j),
      value,
    }));
    this.count += ops.length;
    return ops;
  }

  private finish(): void {
    this.finished = true;
    this.owner.closed(this.storeId, this.generation);
  }
}

/**
 * The head and its chunks from one snapshot: the head is read first, then an iterator (its
 * snapshot taken at once) over exactly the head's chunk keys. A commit landing in between has
 * deleted those chunks, which shows as a missing first chunk: then both are read again.
 */
export async function readCheckpoint(
  kv: Kv,
  storeId: string,
): Promise<{ revision: number; chunks: AsyncIterable<Uint8Array> } | undefined> {
  for (let attempt = 0; ; attempt++) {
    const head = await readHead(kv, storeId);
    if (!head) return undefined;
    if (head.chunks === 0) return { revision: head.revision, chunks: chunksOf(undefined, undefined, 0) };
    const g = head.generation;
    // Format 1: chunk keys are one u32 longer than the head; other keys in the range are skipped.
    const range =
      g === undefined
        ? { gte: key.legacyChunk(storeId, 0), lt: key.legacyChunk(storeId, head.chunks) }
        : { gte: key.chunk(storeId, g, 0), lt: key.chunk(storeId, g, head.chunks) };
    const length = g === undefined ? key.legacyChunk(storeId, 0).length : key.chunk(storeId, g, 0).length;
    const it = kv.entries(range)[Symbol.asyncIterator]();
    let first = await it.next();
    while (!first.done && first.value[0].length !== length) first = await it.next();
    if (!first.done) return { revision: head.revision, chunks: chunksOf(first.value[1], it, head.chunks - 1, length) };
    await it.return?.();
    if (attempt === 2) throw new Error(`latch: the index checkpoint of store ${storeId} names chunks that are missing`);
  }
}

async function* chunksOf(
  first: Uint8Array | undefined,
  it: AsyncIterator<readonly [string, Uint8Array]> | undefined,
  rest: number,
  length = 0,
): AsyncGenerator<Uint8Array> {
  try {
    if (first) yield first;
    for (let n = 0; n < rest && it;) {
      const r = await it.next();
      if (r.done) return;
      if (r.value[0].length !== length) continue;
      n++;
      yield r.value[1];
    }
  } finally {
    await it?.return?.();
  }
}

/**
 * `Storage.writeCheckpoint` on any backend: every chunk through `writer`, then its commit (true
 * when it became the head); on a failure the writer is aborted and the error rethrown.
 */
export async function writeAllChunks(
  writer: CheckpointWriter,
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): Promise<boolean> {
  try {
    for await (const c of chunks) await writer.write(c);
    return await writer.commit();
  } catch (err) {
    await writer.abort();
    throw err;
  }
}
