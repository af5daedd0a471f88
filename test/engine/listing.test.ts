// Complete listings in pages through the embedded API (src/engine/evaluation/list/pages.ts): every one of 100,000
// reachable objects comes back exactly once, in order; and while writers add and remove tuples
// between pages, the documented guarantee holds: strictly increasing pages (no duplicates), every
// object accessible for the whole listing listed, nothing listed that was never accessible.

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openLatch } from '../../src/latch.js';
import { LatchService } from '../../src/engine/service.js';

import { openStorage } from '../../src/storage/index.js';
import type { Latch, ListObjectsInput, TupleKey } from '../../src/latch.js';
import { dslToModel } from '../../src/model/dsl.js';
import { DEFAULT_ENGINE_CONFIG } from '../../src/engine/config.js';

const DSL = `model
  schema 1.1
type user
type group
  relations
    define member: [user]
type doc
  relations
    define viewer: [user, group#member]
    define blocked: [user]
    define reader: viewer but not blocked
`;

async function storeWith(latch: Latch, name: string): Promise<string> {
  const store = await latch.createStore(name);
  await latch.writeModel(store.id, dslToModel(DSL));
  return store.id;
}

/** Writes `tuples` in requests of `per` (the embedded API takes the configured per-write limit). */
async function writeAll(latch: Latch, storeId: string, tuples: readonly TupleKey[], per: number): Promise<void> {
  for (let i = 0; i < tuples.length; i += per) {
    await latch.write({
      storeId,
      writes: tuples.slice(i, i + per),
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
  }
}

/** Every page of a paged ListObjects, following the cursors; `between` runs after each page. */
async function allPages(
  latch: Latch,
  input: Omit<ListObjectsInput, 'page'>,
  size: number,
  between?: () => Promise<void>,
): Promise<string[][]> {
  const pages: string[][] = [];
  let after: string | undefined;
  for (;;) {
    const r = await latch.listObjects({ ...input, page: { size, after } });
    pages.push(r.objects);
    if (r.next === undefined) return pages;
    expect(r.next).toBe(r.objects[r.objects.length - 1]);
    after = r.next;
    if (between) await between();
  }
}

function expectStrictlyIncreasing(list: readonly string[]): void {
  for (let i = 1; i < list.length; i++) {
    if (!((list[i - 1] as string) < (list[i] as string)))
      throw new Error(`not increasing at ${i}: ${list[i - 1]} then ${list[i]}`);
  }
}

describe('complete listings through pages', () => {
  let latch: Latch;
  beforeAll(async () => {
    latch = await openLatch({ config: { maxTuplesPerWrite: 10_000 }, expirySweepMs: 0 });
  });
  afterAll(async () => {
    await latch.close();
  });

  // 100,000 objects by default, 100 pages: the paths of a large listing at a tenth of the time.
  // LATCH_LISTING_OBJECTS=1000000 runs the full size; bench/ times it (`--only list-pages`).
  const n = Number(process.env.LATCH_LISTING_OBJECTS ?? 100_000);
  test(`${n.toLocaleString('en')} reachable objects: pages of 1,000 give exactly the full set, in order`, async () => {
    {
      // The data goes straight into an in-memory store (10k tuples per batch); the service then
      // loads it with one scan, as a restart would. Writing them through Write (100 per
      // request, each applied to the live index) would cost minutes of CI time for no coverage.
      const t0 = performance.now();
      const storage = await openStorage({});
      const store = await storage.createStore('million');
      await storage.writeModel(store.id, dslToModel(DSL));
      const expected = new Set<string>();
      await storage.writeTuples(store.id, {
        writes: [{ object: 'group:all', relation: 'member', user: 'user:anne' }],
        deletes: [],
        onDuplicate: 'error',
        onMissing: 'error',
      });
      for (let i = 0; i < n; i += 10_000) {
        const writes: TupleKey[] = [];
        for (let j = i; j < i + 10_000; j++) {
          writes.push({ object: `doc:${j}`, relation: 'viewer', user: 'group:all#member' });
          expected.add(`doc:${j}`);
        }
        await storage.writeTuples(store.id, { writes, deletes: [], onDuplicate: 'error', onMissing: 'error' });
      }
      const built = performance.now() - t0;
      const big = new LatchService(storage, DEFAULT_ENGINE_CONFIG, undefined, { expirySweepMs: 0 });
      try {
        await big.ready();
        const loaded = performance.now() - t0 - built;
        const base = {
          storeId: store.id,
          contextualTuples: [],
          consistency: 'UNSPECIFIED' as const,
          type: 'doc',
          relation: 'viewer',
          user: 'user:anne',
        };
        const t1 = performance.now();
        const pages = await allPages(big, base, 1000);
        const listed = performance.now() - t1;
        console.log(
          `${n} listing: data written in ${(built / 1000).toFixed(1)} s, loaded in ${(loaded / 1000).toFixed(1)} s, ${pages.length} pages listed in ${(listed / 1000).toFixed(1)} s`,
        );
        expect(pages.length).toBe(n / 1000);
        expect(pages.every((p) => p.length === 1000)).toBe(true);
        const all = pages.flat();
        expectStrictlyIncreasing(all);
        expect(all.length).toBe(n);
        for (const o of all) if (!expected.has(o)) throw new Error(`unexpected ${o}`);
        // Without the page fields the answer is OpenFGA's: at most 1,000, no cursor.
        const plain = await big.listObjects(base);
        expect(plain.objects.length).toBe(1000);
        expect(plain.next).toBeUndefined();
      } finally {
        await big.close();
      }
    }
  }, 600_000);

  test('writers between pages: no duplicates, every object accessible throughout listed, nothing never accessible', async () => {
    const storeId = await storeWith(latch, 'churn');
    const ids = (from: number, to: number): string[] =>
      Array.from({ length: to - from }, (_, i) => `doc:${String(from + i).padStart(5, '0')}`);
    const initial = ids(0, 3000);
    await writeAll(
      latch,
      storeId,
      [
        { object: 'group:eng', relation: 'member', user: 'user:anne' },
        ...initial.map((object, i) => ({
          object,
          relation: 'viewer',
          user: i % 2 === 0 ? 'user:anne' : 'group:eng#member',
        })),
      ],
      1000,
    );
    const everAccessible = new Set(initial);
    const removed = new Set<string>();
    let round = 0;
    // Between pages: grant new objects (some sort before the cursor, some after), revoke some,
    // block some (the exclusion path: `reader` confirms candidates with Check).
    const churn = async (): Promise<void> => {
      round++;
      const grant = [
        `doc:${String((round * 37) % 3000).padStart(5, '0')}x`,
        `doc:${String(5000 + round).padStart(5, '0')}`,
      ];
      const victim = initial[(round * 131) % initial.length] as string;
      const blocked = initial[(round * 257 + 11) % initial.length] as string;
      for (const g of grant) everAccessible.add(g);
      const writes: TupleKey[] = [
        ...grant.map((object) => ({ object, relation: 'viewer', user: 'user:anne' })),
        { object: blocked, relation: 'blocked', user: 'user:anne' },
      ];
      const index = initial.indexOf(victim);
      const deletes: TupleKey[] = removed.has(victim)
        ? []
        : [{ object: victim, relation: 'viewer', user: index % 2 === 0 ? 'user:anne' : 'group:eng#member' }];
      removed.add(victim);
      removed.add(blocked);
      await latch.write({ storeId, writes, deletes, onDuplicate: 'ignore', onMissing: 'ignore' });
    };
    const base = {
      storeId,
      contextualTuples: [],
      consistency: 'UNSPECIFIED' as const,
      type: 'doc',
      relation: 'reader',
      user: 'user:anne',
    };
    const pages = await allPages(latch, base, 97, churn);
    const all = pages.flat();
    expectStrictlyIncreasing(all);
    const listed = new Set(all);
    for (const o of initial) if (!removed.has(o)) expect(listed.has(o), `${o} was accessible throughout`).toBe(true);
    for (const o of all) expect(everAccessible.has(o), `${o} was never accessible`).toBe(true);
    expect(round).toBeGreaterThan(25);
    // Each page is what the store answers at that moment: the last page equals a fresh listing's tail.
    const fresh = (await allPages(latch, base, 1000)).flat();
    const last = pages[pages.length - 1] as string[];
    expect(fresh.slice(fresh.indexOf(last[0] as string))).toEqual(last);
  }, 120_000);

  test('an unpaged stream after a paged listing of the same state streams its cached answer', async () => {
    const storeId = await storeWith(latch, 'unpaged');
    // Written in descending order: the walk lists objects in the order the index met them.
    const objects = Array.from({ length: 300 }, (_, i) => `doc:${String(299 - i).padStart(3, '0')}`);
    await writeAll(
      latch,
      storeId,
      objects.map((object) => ({ object, relation: 'viewer', user: 'user:anne' })),
      1000,
    );
    const input: ListObjectsInput = {
      storeId,
      type: 'doc',
      relation: 'viewer',
      user: 'user:anne',
      contextualTuples: [],
      consistency: 'UNSPECIFIED',
    };
    const unpaged = async (): Promise<string[]> => {
      const out: string[] = [];
      const batches = latch.streamedListObjectBatches?.(input);
      if (batches === undefined) throw new Error('no batches');
      for await (const b of batches) out.push(...b);
      return out;
    };
    const walked = await unpaged();
    expect([...walked].sort()).toEqual([...objects].sort());
    expect(walked).not.toEqual([...objects].sort()); // the walk's own order
    const paged = (await allPages(latch, input, 100)).flat();
    expect(paged).toEqual([...objects].sort());
    // The same state: the complete answer the pages were cut from, as it is.
    expect(await unpaged()).toEqual(paged);
    // A write: the cached answer is of an older state; the stream walks again.
    await writeAll(latch, storeId, [{ object: 'doc:300', relation: 'viewer', user: 'user:anne' }], 1);
    const after = await unpaged();
    expect([...after].sort()).toEqual([...paged, 'doc:300']);
    expect(after).not.toEqual([...paged, 'doc:300']);
  });

  test('ListUsers pages: ordered, complete, cursor = the user string', async () => {
    const storeId = await storeWith(latch, 'users');
    const users = Array.from({ length: 250 }, (_, i) => `user:u${i}`);
    await writeAll(
      latch,
      storeId,
      [
        ...users.map((user) => ({ object: 'doc:1', relation: 'viewer', user })),
        { object: 'doc:1', relation: 'viewer', user: 'group:eng#member' },
        { object: 'group:eng', relation: 'member', user: 'user:z' },
      ],
      1000,
    );
    const seen: string[] = [];
    let after: string | undefined;
    do {
      const r = await latch.listUsers({
        storeId,
        contextualTuples: [],
        consistency: 'UNSPECIFIED',
        object: { type: 'doc', id: '1' },
        relation: 'viewer',
        userFilters: [{ type: 'user' }],
        page: { size: 40, after },
      });
      expect(r.users.length).toBeLessThanOrEqual(40);
      for (const u of r.users) seen.push('object' in u ? `${u.object.type}:${u.object.id}` : JSON.stringify(u));
      after = r.next;
    } while (after !== undefined);
    expectStrictlyIncreasing(seen);
    expect(new Set(seen)).toEqual(new Set([...users, 'user:z']));
  });
});
