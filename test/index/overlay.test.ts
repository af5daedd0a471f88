// The overlay's batched writes and deletes against the same changes applied one by one, over ids
// the dictionary of a test never reaches (beyond 2^22 and 2^31: every digit of the batch sort),
// with keys repeated within a batch (the last write of a key decides its meta).

import { describe, expect, it } from 'vitest';
import { SR_MASK } from '../../src/abi.js';
import { buildBase, ColumnBuilder, drain } from '../../src/index/base.js';
import { ChangeLog, Overlay } from '../../src/index/overlay.js';
import { numbers } from './helpers.js';

/** `n` records drawn from a few values per field (so keys repeat), large ones included. */
function records(n: number, seed: number): Uint32Array {
  const next = numbers(seed);
  const pick = (values: readonly number[]): number => values[next() % values.length] as number;
  const objs = [0, 1, 7, 2047, 2048, 4_194_303, 4_194_304, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1];
  const rels = [0, 3, 4093];
  const subjs = [5, 2 ** 11 + 1, 2 ** 22 + 9, 2 ** 31 + 4, 2 ** 32 - 2];
  const srs = [0, 1, SR_MASK];
  const words = new Uint32Array(n * 4);
  for (let i = 0; i < n; i++) {
    words[i * 4] = pick(objs);
    words[i * 4 + 1] = pick(rels);
    words[i * 4 + 2] = pick(subjs);
    words[i * 4 + 3] = (pick(srs) | ((next() % 5) << 12)) >>> 0;
  }
  return words;
}

const emptyBase = () => drain(buildBase(new ColumnBuilder(), 0));

/** `apply` of each record of `words`, in order. */
function oneByOne(o: Overlay, revision: number, del: boolean, words: Uint32Array): void {
  for (let p = 0; p < words.length; p += 4)
    o.apply(revision, del, words[p] as number, words[p + 1] as number, words[p + 2] as number, words[p + 3] as number);
}

describe('Overlay batches', () => {
  it('writeAll and deleteAll leave the records of the same changes applied one by one', () => {
    const base = emptyBase();
    const [x, y] = [new Overlay(base), new Overlay(base)];
    try {
      const writes = records(3000, 7);
      x.writeAll(2, writes);
      oneByOne(y, 2, false, writes);
      const [ix, iy] = [x.image().copyWords(), y.image().copyWords()];
      expect(ix).toEqual(iy);
      expect(ix.adds.length / 4).toBeGreaterThan(400); // of the 450 keys the fields allow
      expect(ix.adds.length / 4).toBeLessThan(3000);
      const deletes = records(400, 11).map((v, i) => (i % 4 === 3 ? v & SR_MASK : v));
      x.deleteAll(3, deletes);
      oneByOne(y, 3, true, deletes);
      expect(x.image().copyWords()).toEqual(y.image().copyWords());
      expect(x.size).toBeLessThan(ix.adds.length / 4); // some deletes hit
      // A second batch over a non-empty overlay, with keys already added (a meta change).
      const again = records(2000, 13);
      x.writeAll(4, again);
      oneByOne(y, 4, false, again);
      expect(x.image().copyWords()).toEqual(y.image().copyWords());
    } finally {
      x.drop();
      y.drop();
      base.drop();
    }
  });

  it('writeAll of batches placed above the records, below them and among them: as applied one by one', () => {
    const base = emptyBase();
    const [x, y] = [new Overlay(base), new Overlay(base)];
    /** `n` records of objects from `first` on (an import chunk of new objects), a few subjects each. */
    const objects = (first: number, n: number, seed: number): Uint32Array => {
      const w = records(n, seed);
      for (let i = 0; i < n; i++) w[i * 4] = first + Math.floor(i / 3);
      return w;
    };
    try {
      // Above every record (the next chunk's new objects), below every record, then both and
      // among them, with keys already added (a meta change).
      const batches = [objects(1000, 900, 3), objects(5000, 900, 5), objects(0, 600, 9), records(2000, 17)];
      batches.forEach((words, i) => {
        x.writeAll(2 + i, words);
        oneByOne(y, 2 + i, false, words);
        expect(x.image().copyWords(), `batch ${i}`).toEqual(y.image().copyWords());
      });
      expect(x.size).toBeGreaterThan(2000);
    } finally {
      x.drop();
      y.drop();
      base.drop();
    }
  });

  it('applyAll of a logged tail (writes, deletes, re-adds) equals apply of each change; the log replays the same', () => {
    const base = emptyBase();
    const tail = new ChangeLog();
    const w = records(1500, 17);
    const d = records(600, 19);
    let rev = 1;
    for (let i = 0; i < 1500; i += 100) tail.pushAll(rev++, false, w.subarray(i * 4, (i + 100) * 4));
    for (let i = 0; i < 600; i++)
      tail.push(
        rev++,
        true,
        d[i * 4] as number,
        d[i * 4 + 1] as number,
        d[i * 4 + 2] as number,
        (d[i * 4 + 3] as number) & SR_MASK,
      );
    tail.pushAll(rev++, false, w.subarray(0, 400 * 4)); // re-adds
    const [x, y] = [new Overlay(base), new Overlay(base)];
    try {
      x.applyAll(tail);
      for (let i = 0; i < tail.length; i++) {
        const p = i * 4;
        const k = tail.words;
        y.apply(
          tail.revisionAt(i),
          tail.isDelete(i),
          k[p] as number,
          k[p + 1] as number,
          k[p + 2] as number,
          k[p + 3] as number,
        );
      }
      expect(x.image().copyWords()).toEqual(y.image().copyWords());
      expect(tail.revisionAt(0)).toBe(1);
      expect(tail.runEnd(0)).toBe(100);
      expect(tail.revisionAt(tail.length - 1)).toBe(rev - 1);
      expect(tail.runEnd(1500)).toBe(1501); // one delete per revision
    } finally {
      x.drop();
      y.drop();
      base.drop();
    }
  });
});
