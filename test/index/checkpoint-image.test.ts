// The checkpoint image on its own (src/index/checkpoint.ts): a round trip gives back every node
// string under its id and ends the source; a block whose strings disagree with its count is refused.

import { describe, expect, it } from 'vitest';
import type { TupleKey } from '../../src/domain/types.js';
import { imageChunks, readImage } from '../../src/index/checkpoint.js';
import { StoreIndex } from '../../src/index/store-index.js';

/** 40,000 objects (three blocks of node strings), a few non-ASCII, viewed by 500 users. */
function tuples(): TupleKey[] {
  const out: TupleKey[] = [];
  for (let i = 0; i < 40_000; i++)
    out.push({ object: i % 1000 === 0 ? `doc:é${i}` : `doc:${i}`, relation: 'viewer', user: `user:u${i % 500}` });
  return out;
}

/** The chunks as an async source that records when its iterator was ended. */
function source(chunks: Uint8Array[], ended: { at: number }): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
      let i = 0;
      return {
        next: () =>
          Promise.resolve(
            i < chunks.length ? { done: false, value: chunks[i++] as Uint8Array } : { done: true, value: undefined },
          ),
        return: () => {
          ended.at = performance.now();
          return Promise.resolve({ done: true, value: undefined });
        },
      };
    },
  };
}

describe('checkpoint image', () => {
  it('a round trip keeps every node string under its id and ends the source', async () => {
    const ix = StoreIndex.build(tuples(), 1);
    const s = ix.snapshot();
    const chunks = [...imageChunks(ix.dict, s.base)];
    const ended = { at: 0 };
    const { dict, base } = await readImage(source(chunks, ended));
    expect(ended.at).toBeGreaterThan(0);
    expect(dict.nodeList).toEqual(ix.dict.nodeList);
    expect(dict.nodes.size).toBe(ix.dict.nodeList.length);
    for (const [id, str] of ix.dict.nodeList.entries()) expect(dict.nodes.get(str)).toBe(id);
    expect(dict.nodes.get('doc:40000')).toBeUndefined();
    expect(base.layout).toEqual(s.base.layout);
    base.region.drop();
    ix.close();
  });

  it('a block of node strings whose count disagrees with its strings is refused', async () => {
    const ix = StoreIndex.build(tuples(), 1);
    const chunks = [...imageChunks(ix.dict, ix.snapshot().base)].map((c) => Buffer.from(c));
    // the last chunk is the last block: [count][bytes][strings joined by '\n']; joining two of
    // its strings leaves one fewer than its count says, and the same number of bytes
    const block = chunks[chunks.length - 1] as Buffer;
    block[block.indexOf(0x0a, 8)] = 0x78;
    await expect(readImage(source(chunks, { at: 0 }))).rejects.toThrow('corrupt node strings');
    ix.close();
  });
});
