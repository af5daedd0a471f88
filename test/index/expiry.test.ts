// Tuple expiry in the index: bindings carry the expiry (with or without a condition), a snapshot
// seen at an instant leaves expired tuples out, and the expiry survives a checkpoint image, a
// change-log tail and a background merge.

import { describe, expect, it } from 'vitest';
import type { TupleKey } from '../../src/domain/types.js';
import { StoreIndex, type IndexSnapshot } from '../../src/index/store-index.js';
import { openMemoryStorage } from '../../src/storage/memory.js';

const T = '2030-01-01T00:00:00.000Z';
const E = Date.parse(T);
const TUPLES: TupleKey[] = [
  { object: 'doc:1', relation: 'viewer', user: 'user:anne', expires_at: T },
  { object: 'doc:1', relation: 'viewer', user: 'user:bob', condition: { name: 'c', context: { x: 1 } }, expires_at: T },
  { object: 'doc:1', relation: 'viewer', user: 'user:carl', condition: { name: 'c', context: { x: 1 } } },
  { object: 'doc:1', relation: 'viewer', user: 'user:dora' },
];

/** `user → expiresAt` of doc:1#viewer as the snapshot seen at `now` yields it. */
function seen(s: IndexSnapshot, now: number): Record<string, number | string | undefined> {
  const out: Record<string, number | string | undefined> = {};
  for (const t of s.at(now).users('doc:1', 'viewer')) out[t.user] = t.expiresAt ?? t.condition?.name ?? '-';
  return out;
}

describe('index expiry', () => {
  it('at(now) leaves out tuples expired at now; conditions and plain tuples are untouched', () => {
    const s = StoreIndex.build(TUPLES, 1).snapshot();
    expect(s.expiring).toBe(true);
    expect(seen(s, E - 1)).toEqual({ 'user:anne': E, 'user:bob': E, 'user:carl': 'c', 'user:dora': '-' });
    expect(seen(s, E)).toEqual({ 'user:carl': 'c', 'user:dora': '-' });
    expect(s.nextExpiry(E - 1)).toBe(E);
    expect(s.nextExpiry(E)).toBe(Number.POSITIVE_INFINITY);
    expect([s.expiryEpoch(E - 1), s.expiryEpoch(E)]).toEqual([0, 2]); // two bindings (anne; bob with a condition) expire at E
    const plain = StoreIndex.build([TUPLES[3] as TupleKey], 1).snapshot();
    expect([plain.expiring, plain.at(E)]).toEqual([false, plain]);
  });

  it('survives a checkpoint, the change-log tail and a merge', async () => {
    const storage = await openMemoryStorage();
    const store = await storage.createStore('s');
    await storage.writeTuples(store.id, {
      writes: TUPLES.slice(0, 2),
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
    await (await StoreIndex.load(storage, store.id)).checkpoint(storage, store.id);
    await storage.writeTuples(store.id, {
      writes: [{ object: 'doc:1', relation: 'viewer', user: 'user:eve', expires_at: '2030-01-01T00:00:01.000Z' }],
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
    const ix = await StoreIndex.load(storage, store.id, { mergeThreshold: 1 });
    expect(ix.loaded.fromCheckpoint).toBe(true);
    await ix.settled();
    await ix.merge();
    const s = ix.snapshot();
    expect(seen(s, E - 1)).toEqual({ 'user:anne': E, 'user:bob': E, 'user:eve': E + 1000 });
    expect(seen(s, E)).toEqual({ 'user:eve': E + 1000 });
    expect(seen(s, E + 1000)).toEqual({});
  });
});
