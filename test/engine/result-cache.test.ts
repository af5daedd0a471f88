// The Check result cache: bounded, answers what was stored, and evicts with a second chance for
// entries hit since they were last considered.
import { describe, expect, test } from 'vitest';
import { ResultCache } from '../../src/engine/result-cache.js';
import { openLatch } from '../../src/index.js';

describe('ResultCache', () => {
  test('stores both answers; a miss is undefined; hits and misses are counted', () => {
    const c = new ResultCache(10);
    c.set('a', true);
    c.set('b', false);
    expect([c.get('a'), c.get('b'), c.get('z')]).toEqual([true, false, undefined]);
    expect([c.hits, c.misses]).toEqual([2, 1]);
  });

  test('full: the oldest entry not hit since is evicted; a hit entry survives once', () => {
    const c = new ResultCache(3);
    c.set('a', true);
    c.set('b', false);
    c.set('c', true);
    expect(c.get('a')).toBe(true);
    c.set('d', false); // a had a hit: it moves back unflagged, b goes
    expect(c.size).toBe(3);
    expect([c.get('b'), c.get('a'), c.get('c'), c.get('d')]).toEqual([undefined, true, true, false]);
    c.set('e', true); // every entry was hit: one full pass clears the flags, then the oldest goes
    expect(c.size).toBe(3);
    expect([c.get('a'), c.get('c'), c.get('d'), c.get('e')].filter((v) => v === undefined)).toHaveLength(1);
  });

  test('re-setting a present key never evicts; capacity 0 stores nothing', () => {
    const c = new ResultCache(2);
    c.set('a', true);
    c.set('b', true);
    c.set('a', false);
    expect([c.get('a'), c.get('b'), c.size]).toEqual([false, true, 2]);
    const off = new ResultCache(0);
    off.set('a', true);
    expect(off.get('a')).toBeUndefined();
  });

  test('keys: one per (snapshot, model, tuple key); another snapshot or model never shares one', () => {
    const [s1, s2, m1, m2] = [{}, {}, {}, {}];
    const k = { object: 'doc:1', relation: 'viewer', user: 'user:anne' };
    expect(ResultCache.key(s1, m1, k)).toBe(ResultCache.key(s1, m1, { ...k }));
    const keys = [ResultCache.key(s1, m1, k), ResultCache.key(s2, m1, k), ResultCache.key(s1, m2, k), ResultCache.key(s1, m1, { ...k, user: 'user:bob' })];
    expect(new Set(keys).size).toBe(4);
  });

  test('keys are injective: no choice of separator characters inside the fields makes two checks share one', () => {
    const [s, m] = [{}, {}];
    // Pairs that collided when fields were only joined by a separator character.
    const pairs = [
      [{ object: 'doc:a\u0000x', relation: 'y', user: 'u:1' }, { object: 'doc:a', relation: 'x', user: 'y\u0000u:1' }],
      [{ object: 'doc:a b', relation: 'r', user: 'u:1' }, { object: 'doc:a', relation: 'b r', user: 'u:1' }],
      [{ object: 'doc:a:1', relation: 'r', user: 'u:1' }, { object: 'doc:a', relation: '1:r', user: 'u:1' }],
      [{ object: 'doc:1', relation: 'r', user: 'u:1' }, { object: 'doc:1r', relation: '', user: 'u:1' }],
    ];
    for (const [a, b] of pairs) expect(ResultCache.key(s, m, a as never)).not.toBe(ResultCache.key(s, m, b as never));
  });

  test('a cached answer never answers a different request whose fields join to the same text', async () => {
    const latch = await openLatch({ config: { workers: 0 } });
    try {
      const store = await latch.createStore('cache-keys');
      // A relation name may hold any character but `:#@` and ASCII whitespace (semantics.md §3).
      const model = {
        schema_version: '1.1',
        type_definitions: [
          { type: 'user' },
          { type: 'doc', relations: { 'a\u0000b': { this: {} } }, metadata: { relations: { 'a\u0000b': { directly_related_user_types: [{ type: 'user' }] } } } },
        ],
      };
      await latch.writeModel(store.id, model as never);
      const a = { user: 'user:c', relation: 'a\u0000b', object: 'doc:x' };
      await latch.write({ storeId: store.id, writes: [a], deletes: [], onDuplicate: 'error', onMissing: 'error' });
      const ask = (k: typeof a) => latch.check({ storeId: store.id, tupleKey: k, contextualTuples: [], modelId: undefined, context: undefined, consistency: 'MINIMIZE_LATENCY' });
      expect((await ask(a)).allowed).toBe(true); // now cached
      // The same characters split another way: an object with a control character is not valid.
      await expect(ask({ user: 'user:c', relation: 'b', object: 'doc:x\u0000a' })).rejects.toMatchObject({ code: 'validation_error' });
    } finally {
      await latch.close();
    }
  });
});
