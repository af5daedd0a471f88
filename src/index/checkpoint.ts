// The checkpoint image of an index: a JSON header chunk, then raw sections copied byte for byte
// (node strings joined by '\n' — ids never contain whitespace, semantics §1.2 —, node types, the
// base region). Loading is one memcpy per section plus decoding the node strings into the map.

import type { JsonObject } from '../domain/types.js';
import { Base, type BaseLayout, offsets } from './base.js';
import { Dictionary } from './dictionary.js';
import { Region, u8 } from './memory.js';

const CHUNK = 8 * 1024 * 1024;
const VERSION = 1;

interface Header {
  v: number;
  names: string[];
  conds: { name: string; context?: JsonObject }[];
  nodes: number;
  stringBytes: number;
  layout: BaseLayout;
}

/** The image chunks (each ≤ 8 MiB). Copies out of shared memory lazily, one chunk at a time. */
export function* writeImage(dict: Dictionary, base: Base): Generator<Uint8Array> {
  const strings = Buffer.from(dict.nodeList.join('\n'), 'utf8');
  const header: Header = {
    v: VERSION,
    names: dict.nameList,
    conds: dict.conds.slice(1).map((c) => (c.context ? { name: c.name, context: c.context } : { name: c.name })),
    nodes: dict.nodeList.length,
    stringBytes: strings.byteLength,
    layout: base.layout,
  };
  yield Buffer.from(JSON.stringify(header), 'utf8');
  for (let i = 0; i < strings.byteLength; i += CHUNK) yield strings.subarray(i, Math.min(i + CHUNK, strings.byteLength));
  const typesPtr = dict.nodeTypes.region.ptr;
  yield* shared(typesPtr, dict.nodeList.length * 4);
  yield* shared(base.region.ptr, base.bytes);
}

function* shared(ptr: number, bytes: number): Generator<Uint8Array> {
  for (let i = 0; i < bytes; i += CHUNK) yield u8().slice(ptr + i, ptr + Math.min(i + CHUNK, bytes));
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
}

export async function readImage(chunks: AsyncIterable<Uint8Array>): Promise<{ dict: Dictionary; base: Base }> {
  const reader = new ChunkReader(chunks[Symbol.asyncIterator]());
  const first = await reader.next();
  if (!first) throw new Error('latch: empty index checkpoint');
  const h = JSON.parse(Buffer.from(first).toString('utf8')) as Header;
  if (h.v !== VERSION) throw new Error(`latch: unsupported index checkpoint version ${h.v}`);
  const strings = new Uint8Array(h.stringBytes);
  await reader.copy(h.stringBytes, (src, off) => strings.set(src, off));
  const dict = new Dictionary(h.nodes + 16);
  for (const n of h.names) dict.name(n);
  for (const c of h.conds) dict.cond(c);
  const list = h.nodes === 0 ? [] : Buffer.from(strings.buffer, strings.byteOffset, strings.byteLength).toString('utf8').split('\n');
  // node types: memcpy into the dictionary's shared array, then register the strings
  const typesAt = dict.nodeTypes.region.ptr;
  await reader.copy(h.nodes * 4, (src, off) => u8().set(src, typesAt + off));
  for (let i = 0; i < list.length; i++) {
    const s = list[i] ?? '';
    dict.nodes.set(s, i);
    dict.nodeList.push(s);
  }
  dict.nodeTypes.length = h.nodes;
  const words = offsets(h.layout).words;
  const region = new Region(words * 4);
  await reader.copy(words * 4, (src, off) => u8().set(src, region.ptr + off));
  return { dict, base: new Base(region, h.layout) };
}
