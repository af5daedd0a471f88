// The checkpoint image of an index: a JSON header chunk, then the node types and the base region,
// copied byte for byte, then the node strings. Loading is one memcpy per section plus decoding the
// node strings into the node table.
//
// Version 3 (written): the node types, the base, then the node strings in blocks, each
// [count u32 LE][bytes u32 LE][the strings in UTF-8 joined by '\n' — ids never contain whitespace,
// docs/reference/semantics.md §1.2]. A block is one slice of work for a writer that yields to the event loop, and no
// JS string ever holds all node strings (V8 caps a string at ≈ 2^29 characters: ≈ 17M nodes of 30
// characters). The strings come last so that a loader decodes them as they arrive while the heap
// holds none of them during the bulk of the bytes: each buffer a source allocates for a chunk
// (PostgreSQL's COPY: several per 8 MiB chunk) counts towards V8's next full collection, and
// with 10M strings on the heap each one costs hundreds of ms (10M-tuple cold start: ≈ 1.7 s of
// collections during the types and the base when they followed the strings).
// Version 2 (read only): the same blocks first, then the node types and the base.
// Version 1 (read only): the header's `stringBytes`, then one run of all strings joined by '\n',
// then the node types and the base.

import { nextTurn } from '../domain/turn.js';
import type { JsonObject } from '../domain/types.js';
import type { CheckpointWriter } from '../storage/types.js';
import { Base, type BaseLayout, offsets } from './base.js';
import { StoreDictionary } from './dictionary.js';
import { Region, u8 } from './memory.js';

/**
 * Bytes of shared memory copied per chunk: ≈ 1 ms of the thread. The storage writer stores about
 * this much per batch too (LevelDB copies a batch's values on the calling thread: 2–8 ms for
 * 2 MiB, up to 24 ms for 8 MiB, measured).
 */
const CHUNK = 2 * 1024 * 1024;
const VERSION = 3;
/** Node strings per block: ≈ 2 ms to join and encode (65,536 took 5–8 ms), ≈ 0.4 MB at 24 bytes per id. */
const STRINGS_PER_BLOCK = 16_384;

interface Header {
  v: number;
  names: string[];
  /** Binding 1.. in id order; `name` '' with `expiresAt` for a tuple that only expires. */
  conds: { name: string; context?: JsonObject; expiresAt?: number }[];
  nodes: number;
  /** Version 1 only. */
  stringBytes?: number;
  layout: BaseLayout;
}

/**
 * The image of `base` (which covers node ids below `base.layout.nodes`) as chunks of at most
 * 2 MiB. Each `next()` does one bounded slice of work — a block of node strings or one chunk
 * copied out of shared memory — so a caller may yield to the event loop between chunks.
 *
 * Contract for a caller that does: `base` stays alive until the generator finishes (it holds a
 * reference), and `dict` is not closed. Everything read later is immutable or append-only: the
 * names, conditions and nodes below `base.layout.nodes` never change; the node-type array may be
 * moved when it grows (its first entries are copied), so its pointer is read again per chunk.
 */
export function* imageChunks(dict: StoreDictionary, base: Base): Generator<Uint8Array> {
  const nodes = base.layout.nodes;
  const header: Header = {
    v: VERSION,
    names: dict.nameList.slice(),
    conds: dict.conds.slice(1).map((c) => ({
      name: c.name,
      ...(c.context ? { context: c.context } : {}),
      ...(c.expiresAt === undefined ? {} : { expiresAt: c.expiresAt }),
    })),
    nodes,
    layout: base.layout,
  };
  yield Buffer.from(JSON.stringify(header), 'utf8');
  for (let i = 0; i < nodes * 4; i += CHUNK) {
    const at = dict.nodeTypes.region.ptr;
    yield u8().slice(at + i, at + Math.min(i + CHUNK, nodes * 4));
  }
  for (let i = 0; i < base.bytes; i += CHUNK)
    yield u8().slice(base.region.ptr + i, base.region.ptr + Math.min(i + CHUNK, base.bytes));
  for (let i = 0; i < nodes; i += STRINGS_PER_BLOCK) {
    const end = Math.min(i + STRINGS_PER_BLOCK, nodes);
    const text = dict.nodeList.slice(i, end).join('\n');
    const block = Buffer.allocUnsafe(8 + Buffer.byteLength(text, 'utf8'));
    block.writeUInt32LE(end - i, 0);
    block.writeUInt32LE(block.byteLength - 8, 4);
    block.write(text, 8, 'utf8');
    yield block;
  }
}

/** Sequential reader over the chunk stream: copies the next `n` bytes into `dst` at `at`. */
class ChunkReader {
  private cur: Uint8Array = new Uint8Array(0);
  private pos = 0;
  constructor(private readonly it: AsyncIterator<Uint8Array>) {}
  async next(): Promise<Uint8Array | undefined> {
    const r = await this.it.next();
    return r.done ? undefined : r.value;
  }
  async copy(n: number, sink: (src: Uint8Array, offset: number) => void): Promise<void> {
    let done = 0;
    while (done < n) {
      if (this.pos >= this.cur.byteLength) {
        const c = await this.next();
        if (!c) throw new Error('latch: truncated index checkpoint');
        this.cur = c;
        this.pos = 0;
      }
      const take = Math.min(n - done, this.cur.byteLength - this.pos);
      sink(this.cur.subarray(this.pos, this.pos + take), done);
      this.pos += take;
      done += take;
    }
  }
  async bytes(n: number): Promise<Buffer> {
    const out = Buffer.allocUnsafe(n);
    await this.copy(n, (src, off) => out.set(src, off));
    return out;
  }
}

/** One block's frame: its string count, then its byte length (0 counts are corrupt). */
async function readFrame(reader: ChunkReader, read: number, nodes: number): Promise<{ count: number; bytes: number }> {
  const frame = await reader.bytes(8);
  const count = frame.readUInt32LE(0);
  if (count === 0 || read + count > nodes) throw new Error('latch: corrupt node strings in index checkpoint');
  return { count, bytes: frame.readUInt32LE(4) };
}

/** Registers `count` strings (UTF-8, joined by '\n') after those the dictionary holds (their ids follow). */
function internStrings(dict: StoreDictionary, count: number, bytes: Buffer): void {
  const list = dict.nodeList;
  const part = bytes.toString('utf8').split('\n');
  if (part.length !== count) throw new Error('latch: corrupt node strings in index checkpoint');
  dict.nodes.addRun(part, list.length);
  for (const s of part) list.push(s);
}

/**
 * Versions 2 and 3: the node strings, block by block, each registered as it is read. The work per
 * chunk stays bounded, so the reader's source is read again within a block's time: a source that
 * keeps its next chunks in flight meanwhile (PostgreSQL's read) is never left waiting for the
 * whole dictionary to be registered in one go, and the two overlap. Each block ends the
 * event-loop turn (`setImmediate`): when the source has the next chunks already in hand, its
 * reads resolve as microtasks, and without the break a whole image's strings (100k nodes:
 * ≈ 40 ms of the thread and the collections they cause) would run before any timer, such as
 * placement's lease renewal.
 */
async function internAsRead(reader: ChunkReader, nodes: number, dict: StoreDictionary): Promise<void> {
  for (let read = 0; read < nodes;) {
    const { count, bytes } = await readFrame(reader, read, nodes);
    internStrings(dict, count, await reader.bytes(bytes));
    read += count;
    if (read < nodes) await nextTurn();
  }
}

/**
 * The dictionary and base of an image. The source is ended (its iterator's `return()`) as soon as
 * the image's last byte is read.
 */
export async function readImage(chunks: AsyncIterable<Uint8Array>): Promise<{ dict: StoreDictionary; base: Base }> {
  const it = chunks[Symbol.asyncIterator]();
  try {
    return await decodeImage(new ChunkReader(it));
  } finally {
    // The image ends where its layout says, so the source is not read past its last chunk: end it
    // here, or a source that holds a connection until the end (PostgreSQL's transaction) keeps it.
    await it.return?.();
  }
}

/**
 * An image in a format this code does not know (written by a newer latch over the same
 * datastore). The load scans the tuples instead: exact, only slower.
 */
export class UnsupportedImageError extends Error {
  constructor(readonly version: unknown) {
    super(`latch: unsupported index checkpoint version ${String(version)}`);
    this.name = 'UnsupportedImageError';
  }
}

async function decodeImage(reader: ChunkReader): Promise<{ dict: StoreDictionary; base: Base }> {
  const first = await reader.next();
  if (!first) throw new Error('latch: empty index checkpoint');
  const h = JSON.parse(Buffer.from(first).toString('utf8')) as Header;
  if (h.v !== 1 && h.v !== 2 && h.v !== VERSION) throw new UnsupportedImageError(h.v);
  const dict = new StoreDictionary(h.nodes + 16);
  for (const n of h.names) dict.name(n);
  for (const c of h.conds) dict.cond(c.name === '' ? undefined : { name: c.name, context: c.context }, c.expiresAt);
  if (h.v === VERSION) {
    const base = await readTypesAndBase(reader, h, dict);
    try {
      await internAsRead(reader, h.nodes, dict);
    } catch (err) {
      base.region.drop();
      throw err;
    }
    return { dict, base };
  }
  // Versions 1 and 2: the strings first (version 1 as one run of `stringBytes`).
  if (h.v === 2) await internAsRead(reader, h.nodes, dict);
  else {
    const run = await reader.bytes(h.stringBytes ?? 0);
    if (h.nodes > 0) internStrings(dict, h.nodes, run);
  }
  return { dict, base: await readTypesAndBase(reader, h, dict) };
}

/** The node types, memcpy'd into the dictionary's shared array, then the base region. */
async function readTypesAndBase(reader: ChunkReader, h: Header, dict: StoreDictionary): Promise<Base> {
  const typesAt = dict.nodeTypes.region.ptr;
  await reader.copy(h.nodes * 4, (src, off) => u8().set(src, typesAt + off));
  dict.nodeTypes.length = h.nodes;
  const words = offsets(h.layout).words;
  const region = new Region(words * 4);
  await reader.copy(words * 4, (src, off) => u8().set(src, region.ptr + off));
  return new Base(region, h.layout);
}

/**
 * Streams `image` into `writer`, one chunk per event-loop turn (`setImmediate` between chunks:
 * timers, I/O and queries run in between), then commits. Checks `stopped()` before producing
 * each chunk and before the commit; when it holds, aborts the writer and returns false. Any
 * failure aborts the writer too, then rethrows.
 */
export async function streamImage(
  image: Generator<Uint8Array>,
  writer: CheckpointWriter,
  stopped: () => boolean,
): Promise<boolean> {
  try {
    for (;;) {
      if (stopped()) {
        await writer.abort();
        return false;
      }
      const r = image.next();
      if (r.done) break;
      await writer.write(r.value);
      await nextTurn();
    }
    if (stopped()) {
      await writer.abort();
      return false;
    }
    await writer.commit();
    return true;
  } catch (err) {
    await writer.abort();
    throw err;
  }
}
