// The node table on its own: string → id against a Map as the oracle, through collisions of
// slots and of whole hashes, growth, non-ASCII and short strings, bulk runs and many entries.

import { describe, expect, it } from 'vitest';
import { NodeTable, nodeHash } from '../../src/index/node-table.js';

/** A table and its list, filled with `strings` one `add` at a time. */
function filled(strings: readonly string[], capacity = 0): { table: NodeTable; list: string[] } {
  const list: string[] = [];
  const table = new NodeTable(list, capacity);
  for (const s of strings) {
    list.push(s);
    table.add(s, list.length - 1);
  }
  return { table, list };
}

/** Two distinct strings of one 32-bit hash (a birthday search: ≈ 2^16 strings). */
function fullCollision(): [string, string] {
  const seen = new Map<number, string>();
  for (let i = 0; ; i++) {
    const s = `doc:${i}`;
    const h = nodeHash(s);
    const other = seen.get(h);
    if (other !== undefined) return [other, s];
    seen.set(h, s);
  }
}

describe('NodeTable', () => {
  it('doc:1 and user:anne added as 0 and 1 => 0, 1; doc:2 => undefined', () => {
    const { table } = filled(['doc:1', 'user:anne']);
    expect(table.get('doc:1')).toBe(0);
    expect(table.get('user:anne')).toBe(1);
    expect(table.get('doc:2')).toBeUndefined();
    expect(table.size).toBe(2);
  });

  it('an empty table finds nothing', () => {
    const table = new NodeTable([]);
    expect(table.get('doc:1')).toBeUndefined();
    expect(table.get('')).toBeUndefined();
    expect(table.size).toBe(0);
  });

  it('short and empty-ish strings: "", ":", "a", "a:", ":*" are distinct keys', () => {
    const strings = ['', ':', 'a', 'a:', ':*', 'T:*', '\u0000', '\u0000\u0000'];
    const { table } = filled(strings);
    strings.forEach((s, id) => expect(table.get(s)).toBe(id));
    expect(table.get('b')).toBeUndefined();
    expect(table.get('\u0000\u0000\u0000')).toBeUndefined();
  });

  it('non-ASCII strings: accents, CJK, emoji (surrogate pairs) and a lone surrogate', () => {
    const strings = ['user:anné', 'user:anne\u0301', 'doc:文書', 'doc:😀', 'doc:\ud83d', 'doc:\ude00', 'user:Ω'];
    const { table } = filled(strings);
    strings.forEach((s, id) => expect(table.get(s)).toBe(id));
    expect(table.get('user:anne')).toBeUndefined();
    expect(table.get('doc:😁')).toBeUndefined();
    // the same characters built another way are the same key
    expect(table.get(`doc:${String.fromCodePoint(0x1f600)}`)).toBe(3);
  });

  it('two strings of one full 32-bit hash keep their own ids; a third of that hash is absent', () => {
    const [a, b] = fullCollision();
    expect(nodeHash(a)).toBe(nodeHash(b));
    const { table } = filled(['doc:x', a, b]);
    expect(table.get(a)).toBe(1);
    expect(table.get(b)).toBe(2);
    const { table: only } = filled([a]);
    expect(only.get(b)).toBeUndefined();
  });

  it('slot collisions in a 16-slot table: every probe chain is followed, misses stop at a gap', () => {
    // 8 entries fill a 16-slot table to half: every key probes past others somewhere.
    const strings = Array.from({ length: 8 }, (_, i) => `doc:${i}`);
    const { table } = filled(strings, 8);
    strings.forEach((s, id) => expect(table.get(s)).toBe(id));
    for (let i = 8; i < 200; i++) expect(table.get(`doc:${i}`)).toBeUndefined();
  });

  it('grows from empty through many doublings and keeps every id', () => {
    const strings = Array.from({ length: 5000 }, (_, i) => `user:u${i}`);
    const { table } = filled(strings);
    expect(table.size).toBe(5000);
    strings.forEach((s, id) => expect(table.get(s)).toBe(id));
    expect(table.get('user:u5000')).toBeUndefined();
  });

  it('addRun registers a run after single adds, growing once, ids in order', () => {
    const list = ['doc:a'];
    const table = new NodeTable(list);
    table.add('doc:a', 0);
    const run = Array.from({ length: 3000 }, (_, i) => `doc:r${i}`);
    table.addRun(run, 1);
    list.push(...run);
    table.addRun([], list.length);
    expect(table.size).toBe(3001);
    expect(table.get('doc:a')).toBe(0);
    run.forEach((s, k) => expect(table.get(s)).toBe(k + 1));
  });

  it('strings split out of a joined block find the ids of strings built directly', () => {
    const list = 'doc:1\ngroup:eng#member\nuser:*\nuser:zoë'.split('\n');
    const table = new NodeTable(list, list.length);
    table.addRun(list, 0);
    expect(table.get('user:' + 'zoë')).toBe(3);
    expect(table.get(['group', 'eng#member'].join(':'))).toBe(1);
  });

  it('agrees with a Map on 200,000 entries and as many misses', () => {
    const list: string[] = [];
    const table = new NodeTable(list);
    const oracle = new Map<string, number>();
    for (let i = 0; i < 200_000; i++) {
      const s = i % 3 === 0 ? `doc:${i}` : i % 3 === 1 ? `user:${(i * 2654435761) >>> 0}` : `folder:é${i}`;
      list.push(s);
      table.add(s, i);
      oracle.set(s, i);
    }
    expect(table.size).toBe(oracle.size);
    let mismatches = 0;
    for (const [s, id] of oracle) if (table.get(s) !== id) mismatches++;
    for (let i = 0; i < 200_000; i++) if (table.get(`doc:x${i}`) !== undefined) mismatches++;
    expect(mismatches).toBe(0);
  });
});
