// Golden and property tests for the key codec, cursors and the memory Kv's ordered map.

import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import {
  decodeTupleKey,
  decodeUserIndexKey,
  key,
  part,
  parts,
  prefixEnd,
  userPosition,
} from '../../src/storage/codec.js';
import { decodeCursor, encodeCursor } from '../../src/storage/cursor.js';
import { MemoryKv } from '../../src/storage/memory.js';
import { collect } from './helpers.js';

const STORE = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
const bytes = (s: string): number[] => [...Buffer.from(s, 'utf8')];
const byteOrder = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

describe('codec', () => {
  it('pins the tuple key and by-user position layouts (golden)', () => {
    const t = { object: 'doc:1', relation: 'viewer', user: 'user:é' };
    expect(key.tuple(STORE, t)).toBe(`D${STORE}tdoc:1\u0000\u0001viewer\u0000\u0001user:\u00c3\u00a9\u0000\u0001`);
    expect(userPosition(t)).toBe(`doc\u0000\u0001user:\u00c3\u00a9\u0000\u0001viewer\u0000\u00011\u0000\u0001`);
    expect(decodeTupleKey(key.tuple(STORE, t).slice(key.tuples(STORE).length))).toEqual(t);
    expect(decodeUserIndexKey(userPosition(t))).toEqual(t);
  });

  const samples = [
    '',
    'a',
    'a\u0000',
    'a\u0000b',
    'ab',
    'a\u00ff',
    'é',
    '\uFFFD',
    '\u{1F600}',
    'z',
    'a\u0001',
    '\u0000',
  ];

  it('round-trips components, including NUL and non-ASCII', () => {
    expect(parts(samples.map(part).join(''))).toEqual(samples);
    expect(parts('abc')).toBeUndefined();
    expect(parts('a\u0000\u0002')).toBeUndefined();
  });

  it('orders encoded components like their UTF-8 bytes, component by component', () => {
    const pairs = samples.flatMap((a) => samples.map((b) => [a, b] as const));
    const encoded = [...pairs]
      .sort(([a1, a2], [b1, b2]) => byteOrder(a1, b1) || byteOrder(a2, b2))
      .map(([a, b]) => part(a) + part(b));
    expect([...encoded].sort()).toEqual(encoded);
    expect(bytes('é')).toEqual([0xc3, 0xa9]);
  });

  it('prefixEnd bounds exactly the keys with the prefix', () => {
    expect(prefixEnd('ab')).toBe('ac');
    expect(prefixEnd('a\u00ff')).toBe('b');
    expect(prefixEnd('\u00ff')).toBe('\u00ff\u00ff');
  });

  it('cursors round-trip and reject garbage with invalid_continuation_token', () => {
    const c = encodeCursor('t', 'pos\u0000\u00ff');
    expect(decodeCursor(c, 't', () => true)).toBe('pos\u0000\u00ff');
    expect(decodeCursor(undefined, 't', () => true)).toBeUndefined();
    for (const bad of ['', 'x', 't', 'u.cG9z', 't.cG9z=', 't.c+9z', 't.cG9zAA']) {
      expect(() => decodeCursor(bad, 't', (p) => p === 'pos')).toThrow(AppError);
    }
  });
});

describe('MemoryKv', () => {
  it('matches a naive sorted map over random batches and ranges, across chunk splits', async () => {
    const kv = new MemoryKv();
    const model = new Map<string, number>();
    let seed = 42;
    const rand = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    const k = (): string => `k${String(rand(6000)).padStart(4, '0')}`;
    for (let b = 0; b < 60; b++) {
      const ops = Array.from({ length: 200 }, () =>
        rand(4) === 0
          ? { type: 'del' as const, key: k() }
          : { type: 'put' as const, key: k(), value: new Uint8Array([b]) },
      );
      const before = kv.entries({});
      const snapshot = [...model.entries()].sort(([a], [c]) => (a < c ? -1 : 1)).map(([key, v]) => [key, v] as const);
      await kv.batch(ops);
      for (const op of ops)
        if (op.type === 'put') model.set(op.key, b);
        else model.delete(op.key);
      expect((await collect(before)).map(([key, v]) => [key, v[0]])).toEqual(snapshot);
    }
    const sorted = [...model.keys()].sort();
    for (let i = 0; i < 40; i++) {
      const [x, y] = [k(), k()].sort() as [string, string];
      const limit = rand(3) === 0 ? rand(50) : undefined;
      const forward = sorted.filter((s) => s > x && s < y).slice(0, limit);
      const backward = sorted
        .filter((s) => s >= x && s < y)
        .reverse()
        .slice(0, limit);
      expect(await collect(kv.keys({ gt: x, lt: y, limit }))).toEqual(forward);
      expect(await collect(kv.keys({ gte: x, lt: y, reverse: true, limit }))).toEqual(backward);
    }
    expect(await collect(kv.keys({}))).toEqual(sorted);
    expect(await kv.get(sorted[0] ?? '')).toEqual(new Uint8Array([model.get(sorted[0] ?? '') ?? -1]));
  });
});
