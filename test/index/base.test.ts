// A base built from unsorted columns: each object's entries sorted by (relation, subject relation,
// subject) whatever the size of its bucket (insertion-sorted when short, merge-sorted past that,
// with runs that do not divide it), every tuple once, with its meta.

import { describe, expect, it } from 'vitest';
import { SR_MASK } from '../../src/abi.js';
import { buildBase, ColumnBuilder, drain } from '../../src/index/base.js';
import { u32 } from '../../src/index/memory.js';
import { numbers } from './helpers.js';

interface Entry {
  readonly rel: number;
  readonly sr: number;
  readonly subj: number;
  readonly meta: number;
}

const order = (x: Entry, y: Entry): number => x.rel - y.rel || x.sr - y.sr || x.subj - y.subj;

describe('buildBase', () => {
  it("sorts each object's bucket by (relation, subject relation, subject) at every bucket size", () => {
    const sizes = [0, 1, 2, 11, 12, 13, 23, 24, 25, 37, 48, 49, 100, 257, 1000, 3001];
    const next = numbers(7);
    const subjects = 4000;
    const nodes = sizes.length + subjects;
    const byObject: Entry[][] = [];
    const cols = new ColumnBuilder();
    const all: [number, Entry][] = [];
    sizes.forEach((size, obj) => {
      // Distinct (rel, sr, subj) triples, few relations so keys hold many entries.
      const seen = new Set<string>();
      const entries: Entry[] = [];
      while (entries.length < size) {
        const rel = next() % 3;
        const sr = next() % 2 === 0 ? 0 : 1 + (next() % 2);
        const subj = sizes.length + (next() % subjects);
        const id = `${rel}/${sr}/${subj}`;
        if (seen.has(id)) continue;
        seen.add(id);
        const meta = (sr | ((next() % 5) << 12)) >>> 0;
        entries.push({ rel, sr, subj, meta });
      }
      byObject.push(entries);
      for (const e of entries) all.push([obj, e]);
    });
    // Columns in an order unrelated to the sort (shuffled across objects).
    for (let i = all.length - 1; i > 0; i--) {
      const j = next() % (i + 1);
      [all[i], all[j]] = [all[j] as [number, Entry], all[i] as [number, Entry]];
    }
    for (const [obj, e] of all) cols.push(obj, e.rel, e.subj, e.meta);
    const base = drain(buildBase(cols, nodes));
    const m = u32();
    const fe = base.w('fwdEnt');
    byObject.forEach((entries, obj) => {
      const got: Entry[] = [];
      for (let rel = 0; rel < 3; rel++) {
        const [lo, hi] = base.range(obj, rel);
        for (let i = lo; i < hi; i++) {
          const meta = m[fe + 2 * i + 1] as number;
          got.push({ rel, sr: meta & SR_MASK, subj: m[fe + 2 * i] as number, meta });
        }
      }
      expect(got, `object ${obj}: ${entries.length} entries`).toEqual([...entries].sort(order));
    });
    expect(base.layout.entries).toBe(all.length);
  });
});
