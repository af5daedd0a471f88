// Index checkpoints: an opaque image stored as a head (revision, chunk count) plus chunks of at
// most 8 MiB, replaced in one batch and read back from one snapshot.

import { decodeJson, encodeJson, key, prefixEnd } from './codec.js';
import type { Kv, KvOp } from './kv.js';

export const MAX_CHUNK_BYTES = 8 * 1024 * 1024;

interface Head {
  readonly revision: number;
  readonly chunks: number;
}

/** Collects the caller's chunks, splitting any larger than 8 MiB (the concatenation is kept). */
export async function collectChunks(chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): Promise<Uint8Array[]> {
  const out: Uint8Array[] = [];
  for await (const c of chunks) {
    for (let at = 0; at < c.byteLength; at += MAX_CHUNK_BYTES) out.push(c.subarray(at, Math.min(c.byteLength, at + MAX_CHUNK_BYTES)));
    if (c.byteLength === 0) out.push(c);
  }
  return out;
}

/** The batch replacing the store's checkpoint: new chunks and head, stale chunks deleted. */
export async function planCheckpoint(kv: Kv, storeId: string, revision: number, chunks: readonly Uint8Array[]): Promise<KvOp[]> {
  const old = await kv.get(key.checkpoint(storeId));
  const oldCount = old ? decodeJson<Head>(old).chunks : 0;
  const ops: KvOp[] = chunks.map((value, i) => ({ type: 'put', key: key.chunk(storeId, i), value }));
  for (let i = chunks.length; i < oldCount; i++) ops.push({ type: 'del', key: key.chunk(storeId, i) });
  const head: Head = { revision, chunks: chunks.length };
  ops.push({ type: 'put', key: key.checkpoint(storeId), value: encodeJson(head) });
  return ops;
}

/** Head and chunks from one iterator (the head key sorts right before its chunks). */
export async function readCheckpoint(kv: Kv, storeId: string): Promise<{ revision: number; chunks: AsyncIterable<Uint8Array> } | undefined> {
  const base = key.checkpoint(storeId);
  const it = kv.entries({ gte: base, lt: prefixEnd(base) })[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done || first.value[0] !== base) {
    await it.return?.();
    return undefined;
  }
  const head = decodeJson<Head>(first.value[1]);
  async function* chunks(): AsyncGenerator<Uint8Array> {
    try {
      for (let n = 0; n < head.chunks; n++) {
        const r = await it.next();
        if (r.done) return;
        yield r.value[1];
      }
    } finally {
      await it.return?.();
    }
  }
  return { revision: head.revision, chunks: chunks() };
}
