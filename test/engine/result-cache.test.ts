// The Check result cache: bounded, answers what was stored (per scope, field by field), and evicts
// with a second chance for entries hit since the hand last passed them.
import { describe, expect, test } from 'vitest';
import { ResultCache } from '../../src/engine/state/result-cache.js';
import { openLatch } from '../../src/latch.js';

/** A key by name: doc:<name>#viewer@user:<name>. */
const key = (name: string) => ({ object: `doc:${name}`, relation: 'viewer', user: `user:${name}` });

describe('ResultCache', () => {
  test('stores both answers; a miss is undefined; hits and misses are counted', () => {
    const c = new ResultCache(10);
    c.set(1, key('a'), true);
    c.set(1, key('b'), false);
    expect([c.get(1, key('a')), c.get(1, key('b')), c.get(1, key('z'))]).toEqual([true, false, undefined]);
    expect([c.hits, c.misses]).toEqual([2, 1]);
  });

  test('full: an entry hit since the hand last passed survives the next eviction; one entry goes per insert', () => {
    const c = new ResultCache(3);
    c.set(1, key('a'), true);
    c.set(1, key('b'), false);
    c.set(1, key('c'), true);
    expect(c.get(1, key('a'))).toBe(true);
    c.set(1, key('d'), false); // a was hit: b or c goes
    expect(c.size).toBe(3);
    expect(c.get(1, key('a'))).toBe(true);
    expect(c.get(1, key('d'))).toBe(false);
    expect([c.get(1, key('b')), c.get(1, key('c'))].filter((v) => v === undefined)).toHaveLength(1);
    c.set(1, key('e'), true); // entries were hit: a sweep clears their flags, then one goes
    expect(c.size).toBe(3);
    expect(c.get(1, key('e'))).toBe(true);
  });

  test('the entry not hit since the hand last passed is the one evicted, wherever it sits', () => {
    for (const victim of [0, 17, 49]) {
      const c = new ResultCache(50);
      for (let i = 0; i < 50; i++) c.set(1, key(`n${i}`), true);
      for (let i = 0; i < 50; i++) if (i !== victim) c.get(1, key(`n${i}`));
      c.set(1, key('new'), false);
      const gone = Array.from({ length: 50 }, (_, i) => i).filter((i) => c.get(1, key(`n${i}`)) === undefined);
      expect(gone).toEqual([victim]);
    }
  });

  test('re-setting a present key never evicts; capacity 0 stores nothing', () => {
    const c = new ResultCache(2);
    c.set(1, key('a'), true);
    c.set(1, key('b'), true);
    c.set(1, key('a'), false);
    expect([c.get(1, key('a')), c.get(1, key('b')), c.size]).toEqual([false, true, 2]);
    const off = new ResultCache(0);
    off.set(1, key('a'), true);
    expect(off.get(1, key('a'))).toBeUndefined();
    expect(off.size).toBe(0);
  });

  test('scopes: one per (snapshot, model); an entry answers only its own scope', () => {
    const [s1, s2, m1, m2] = [{}, {}, {}, {}];
    expect(ResultCache.scope(s1, m1)).toBe(ResultCache.scope(s1, m1));
    const ids = [
      ResultCache.scope(s1, m1),
      ResultCache.scope(s2, m1),
      ResultCache.scope(s1, m2),
      ResultCache.scope(s2, m2),
    ];
    expect(new Set(ids).size).toBe(4);
    expect(Math.min(...ids)).toBeGreaterThan(0); // 0 means "not cacheable" to the caller
    const c = new ResultCache(10);
    c.set(ids[0] as number, key('a'), true);
    expect(ids.map((id) => c.get(id, key('a')))).toEqual([true, undefined, undefined, undefined]);
  });

  test('keys are compared field by field: moving characters between fields is another key', () => {
    const c = new ResultCache(100);
    // Pairs that are one text when joined with a separator character, or concatenated.
    const pairs = [
      [
        { object: 'doc:a\u0000x', relation: 'y', user: 'u:1' },
        { object: 'doc:a', relation: 'x', user: 'y\u0000u:1' },
      ],
      [
        { object: 'doc:a b', relation: 'r', user: 'u:1' },
        { object: 'doc:a', relation: 'b r', user: 'u:1' },
      ],
      [
        { object: 'doc:1', relation: 'r', user: 'u:1' },
        { object: 'doc:1r', relation: '', user: 'u:1' },
      ],
    ];
    for (const [a, b] of pairs) {
      c.set(7, a as never, true);
      expect(c.get(7, b as never)).toBeUndefined();
      expect(c.get(7, { ...(a as object) } as never)).toBe(true); // equal strings, other objects: a hit
    }
  });

  test('random operations against a reference: never a wrong answer, never over capacity, growth and eviction included', () => {
    let seed = 20261123;
    const next = (): number => {
      seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
      return seed / 4294967296;
    };
    for (const capacity of [1, 2, 7, 100, 3000]) {
      const c = new ResultCache(capacity);
      const last = new Map<string, boolean>(); // the last answer set per key, evicted or not
      const universe = capacity * 3 + 5;
      let present = 0;
      let wrong = 0; // answers that differ from the reference, counted (one expect per case keeps this fast)
      let over = 0;
      for (let op = 0; op < 40_000; op++) {
        const n = Math.floor(next() * universe);
        const scope = 1 + (n % 3);
        const k = key(`k${n}`);
        const id = `${scope}/${n}`;
        if (next() < 0.5) {
          const allowed = next() < 0.5;
          c.set(scope, k, allowed);
          last.set(id, allowed);
          if (c.get(scope, k) !== allowed) wrong++; // just set: present with that answer
        } else {
          const got = c.get(scope, k);
          if (got !== undefined) {
            present++;
            if (got !== last.get(id)) wrong++; // a hit is always the last answer set for that key
          }
        }
        if (c.size > capacity) over++;
      }
      expect([capacity, wrong, over]).toEqual([capacity, 0, 0]);
      expect(c.size).toBe(Math.min(capacity, last.size));
      expect(present).toBeGreaterThan(0);
      // Every entry the cache holds can still be found (deletions keep probe runs intact): the
      // keys that answer are exactly `size` many, each with its last answer.
      let findable = 0;
      for (let n = 0; n < universe; n++) {
        const got = c.get(1 + (n % 3), key(`k${n}`));
        if (got === undefined) continue;
        findable++;
        if (got !== last.get(`${1 + (n % 3)}/${n}`)) wrong++;
      }
      expect([capacity, findable, wrong]).toEqual([capacity, c.size, 0]);
    }
  });

  test('a cached answer never answers a different request whose fields join to the same text', async () => {
    const latch = await openLatch({ config: { workers: 0 } });
    try {
      const store = await latch.createStore('cache-keys');
      // A relation name may hold any character but `:#@` and ASCII whitespace (docs/reference/semantics.md §3).
      const model = {
        schema_version: '1.1',
        type_definitions: [
          { type: 'user' },
          {
            type: 'doc',
            relations: { 'a\u0000b': { this: {} } },
            metadata: { relations: { 'a\u0000b': { directly_related_user_types: [{ type: 'user' }] } } },
          },
        ],
      };
      await latch.writeModel(store.id, model as never);
      const a = { user: 'user:c', relation: 'a\u0000b', object: 'doc:x' };
      await latch.write({ storeId: store.id, writes: [a], deletes: [], onDuplicate: 'error', onMissing: 'error' });
      const ask = (k: typeof a) =>
        latch.check({
          storeId: store.id,
          tupleKey: k,
          contextualTuples: [],
          modelId: undefined,
          context: undefined,
          consistency: 'MINIMIZE_LATENCY',
        });
      expect((await ask(a)).allowed).toBe(true); // now cached
      // The same characters split another way: an object with a control character is not valid.
      await expect(ask({ user: 'user:c', relation: 'b', object: 'doc:x\u0000a' })).rejects.toMatchObject({
        code: 'validation_error',
      });
    } finally {
      await latch.close();
    }
  });
});
