// Property tests of sortBinaryKeys: on generated keys its order is Array.prototype.sort()'s.

import { describe, expect, it } from 'vitest';
import type { TupleKey } from '../../src/domain/types.js';
import { key, userPosition } from '../../src/storage/codec.js';
import { sortBinaryKeys } from '../../src/storage/key-sort.js';

const STORE = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
const SHARED = key.tuples(STORE).length;

/** A seeded generator (mulberry32): the same cases every run. */
function random(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
}

function pick<T>(next: (n: number) => number, xs: readonly T[]): T {
  return xs[next(xs.length)] as T;
}

/** A string of `len` chars drawn from `alphabet`. */
function text(next: (n: number) => number, alphabet: string, len: number): string {
  let s = '';
  for (let i = 0; i < len; i++) s += alphabet[next(alphabet.length)] as string;
  return s;
}

/** Sorts a copy both ways and compares; also checks that it sorted in place and returned `keys`. */
function expectSorted(keys: readonly string[], shared = 0): void {
  const got = keys.slice();
  const returned = sortBinaryKeys(got, shared);
  expect(returned).toBe(got);
  expect(got).toEqual(keys.slice().sort());
}

/**
 * Tuples as an import has them: ids of random ASCII, decimal ids with shared prefixes, ids with
 * NUL (escaped 00 FF in the keys) and non-ASCII ids (UTF-8 bytes 0x80-0xff in the keys).
 */
function tuples(seed: number, n: number): TupleKey[] {
  const next = random(seed);
  const id = (): string => {
    switch (next(5)) {
      case 0:
        return text(next, 'abcdefghijklmnopqrstuvwxyz0123456789-_', 1 + next(30));
      case 1:
        return String(100000 + next(n * 2));
      case 2:
        return `x${text(next, 'a\u0000b', next(6))}`;
      case 3:
        return text(next, 'aé€\u{1F600}ÿ\u0080z', 1 + next(5));
      default:
        return String(next(20));
    }
  };
  const out: TupleKey[] = [];
  const seen = new Set<string>();
  while (out.length < n) {
    const t = {
      object: `${pick(next, ['doc', 'document', 'folder', 'group'])}:${id()}`,
      relation: pick(next, ['viewer', 'editor', 'owner', 'parent', 'v']),
      user: next(3) === 0 ? `group:${id()}#member` : `user:${id()}`,
    };
    // planImport never gets one tuple twice (the import's validation refuses it).
    const k = key.tuple(STORE, t);
    if (seen.has(k)) continue;
    seen.add(k);
    out.push(t);
  }
  return out;
}

describe('sortBinaryKeys', () => {
  it('leaves empty and one-key arrays as they are', () => {
    expectSorted([]);
    expectSorted([], SHARED);
    expectSorted(['b']);
    expectSorted([key.tuple(STORE, { object: 'doc:1', relation: 'viewer', user: 'user:a' })], SHARED);
  });

  // Sizes on both sides of the insertion sort's bound (32) and of the two-byte passes' (8,192).
  for (const [seed, n] of [
    [1, 2],
    [2, 31],
    [3, 33],
    [4, 500],
    [5, 8191],
    [6, 20000],
  ] as const)
    it(`sorts ${n} tuple keys and by-user keys as sort() does (seed ${seed})`, () => {
      const ts = tuples(seed, n);
      expectSorted(
        ts.map((t) => key.tuple(STORE, t)),
        SHARED,
      );
      expectSorted(
        ts.map((t) => key.byUser(STORE) + userPosition(t)),
        SHARED,
      );
      // The same keys with no shared prefix declared: the comparison starts at char 0.
      expectSorted(ts.map((t) => key.byUser(STORE) + userPosition(t)));
    });

  it('sorts keys that are prefixes of others, and duplicates, over NUL, 0x01, 0x80 and 0xff', () => {
    for (const [seed, n] of [
      [10, 40],
      [11, 3000],
      [12, 12000],
    ] as const) {
      const next = random(seed);
      const keys: string[] = [];
      for (let i = 0; i < n; i++) keys.push(text(next, '\u0000\u0001a\u0080\u00ff', next(19)));
      // Runs equal in 8, 16 and 24 chars and ending at those bounds or one past them.
      for (let i = 0; i < n / 4; i++) keys.push('p'.repeat(8 * (1 + next(3))) + text(next, '\u0000b', next(3)));
      expectSorted(keys);
    }
  });

  it('starts comparing at `shared`, for any shared prefix length', () => {
    const next = random(20);
    for (const shared of [1, 7, 8, 9, 28, 40]) {
      const prefix = text(next, 'DXt\u0000\u00ff', shared);
      const keys: string[] = [];
      for (let i = 0; i < 2000; i++) keys.push(prefix + text(next, '\u0000\u0001ab\u00ff', next(12)));
      expectSorted(keys, shared);
    }
  });

  it('sorts a range whose first and last keys share chars the keys between them lack', () => {
    const next = random(25);
    const keys: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const shared = next(10) === 0 ? 'document\u0000\u0001' : pick(next, ['document\u0000\u0002', 'doc', '']);
      keys.push(shared + text(next, 'ab\u0000', next(10)));
    }
    keys[0] = 'document\u0000\u0001first';
    keys[keys.length - 1] = 'document\u0000\u0001last';
    expectSorted(keys);
    expectSorted(keys.slice(0, 40));
  });

  it('sorts strings with char codes above 0xff as sort() does (UTF-16 code units)', () => {
    const next = random(30);
    const keys: string[] = [];
    for (let i = 0; i < 5000; i++) keys.push(text(next, 'a\u00ff\u0100\uffff\ud83d\ude00', next(14)));
    expectSorted(keys);
    // One such key among binary ones, deep in a run of equal chars.
    const binary = tuples(31, 3000).map((t) => key.tuple(STORE, t));
    binary.push(`${key.tuples(STORE)}doc:1\u0000\u0001viewer\u0000\u0001user:\u0100`);
    expectSorted(binary, SHARED);
  });

  it('sorts correctly again after a larger sort (its scratch is kept)', () => {
    const big = tuples(40, 10000).map((t) => key.byUser(STORE) + userPosition(t));
    expectSorted(big, SHARED);
    expectSorted(big.slice(0, 100), SHARED);
    expectSorted(
      tuples(41, 12000).map((t) => key.tuple(STORE, t)),
      SHARED,
    );
  });
});
