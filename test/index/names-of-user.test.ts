// IndexSnapshot.namesOfUser (Read by user on the key-value backends): every tuple of an object
// type for one user, of any relation or of one, from the base (its reverse entries) and from the
// write overlay (adds, and deletes that mask base entries), checked against the live tuple set.

import { describe, expect, it } from 'vitest';
import type { TupleKey } from '../../src/domain/types.js';
import { StoreIndex, type IndexSnapshot } from '../../src/index/store-index.js';
import type { WriteResult } from '../../src/storage/types.js';
import { smallestAfter } from '../../src/engine/commands/read.js';
import { userPosition } from '../../src/storage/codec.js';

const USERS = ['user:anne', 'user:bob', 'user:*', 'group:eng#member', 'group:eng#admin', 'doc:7'];
const RELATIONS = ['viewer', 'editor', 'parent'];
const TYPES = ['doc', 'folder'];

function random(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s % n;
  };
}

const id = (t: TupleKey): string => `${t.object}#${t.relation}@${t.user}`;

function tuple(next: (n: number) => number): TupleKey {
  return {
    object: `${TYPES[next(TYPES.length)] as string}:${next(40)}`,
    relation: RELATIONS[next(RELATIONS.length)] as string,
    user: USERS[next(USERS.length)] as string,
  };
}

/** What namesOfUser must yield for every (type, user, relation or none), sorted. */
function expectSame(s: IndexSnapshot, live: ReadonlyMap<string, TupleKey>): void {
  for (const type of [...TYPES, 'nothing'])
    for (const user of [...USERS, 'user:nobody', 'group:eng#nothing'])
      for (const relation of [undefined, ...RELATIONS, 'nothing']) {
        const want = [...live.values()]
          .filter((t) => t.user === user && t.object.startsWith(`${type}:`) && (!relation || t.relation === relation))
          .map((t) => `${t.relation} ${t.object}`)
          .sort();
        const got = [...s.namesOfUser(type, user, relation)].map(([r, o]) => `${r} ${o}`).sort();
        expect(got, `${type} ${user} ${relation ?? '(any)'}`).toEqual(want);
      }
}

describe('IndexSnapshot.namesOfUser', () => {
  it('lists a user’s tuples of a type from the base and through the overlay’s adds and deletes', () => {
    const next = random(3);
    const live = new Map<string, TupleKey>();
    for (let i = 0; i < 600; i++) {
      const t = tuple(next);
      live.set(id(t), t);
    }
    const ix = StoreIndex.build(live.values(), 1);
    expectSame(ix.snapshot(), live); // all in the base
    for (let rev = 2; rev < 6; rev++) {
      const held = [...live.values()];
      const deleted = held.filter(() => next(5) === 0);
      const written: TupleKey[] = [];
      for (let i = 0; i < 80; i++) {
        const t = tuple(next);
        if (!live.has(id(t)) && !written.some((w) => id(w) === id(t))) written.push(t);
      }
      const result: WriteResult = { revision: rev, timestamp: new Date().toISOString(), written, deleted };
      ix.apply(result);
      for (const t of deleted) live.delete(id(t));
      for (const t of written) live.set(id(t), t);
      expectSame(ix.snapshot(), live); // base entries masked, overlay adds listed
    }
    ix.close();
  });
});

describe('smallestAfter (Read by user of a user with more tuples than a list keeps)', () => {
  it('pages through the user’s positions in order, a page at a time, from any cursor', async () => {
    const tuples: TupleKey[] = [];
    const next = random(11);
    for (let i = 0; i < 3000; i++)
      tuples.push({ object: `doc:${next(100000)}`, relation: RELATIONS[next(3)] as string, user: 'user:anne' });
    tuples.push(
      { object: 'doc:\u00e9', relation: 'viewer', user: 'user:anne' },
      { object: 'doc:x', relation: 'viewer', user: 'user:bob' },
    );
    const live = new Map(tuples.map((t) => [id(t), t]));
    const ix = StoreIndex.build(live.values(), 1);
    ix.apply({
      revision: 2,
      timestamp: '',
      written: [{ object: 'doc:new', relation: 'editor', user: 'user:anne' }],
      deleted: [tuples[0] as TupleKey],
    });
    live.delete(id(tuples[0] as TupleKey));
    live.set('doc:new#editor@user:anne', { object: 'doc:new', relation: 'editor', user: 'user:anne' });
    const s = ix.snapshot();
    for (const rel of [undefined, 'viewer']) {
      const want = [...live.values()]
        .filter((t) => t.user === 'user:anne' && (!rel || t.relation === rel))
        .map(userPosition)
        .sort();
      for (const size of [1, 7, 100, want.length + 1]) {
        const seen: string[] = [];
        let after: string | undefined;
        for (let more = true; more;) {
          const page = await smallestAfter(s, 'doc', 'user:anne', rel, after, size);
          expect(page.positions.length).toBe(page.more ? size : Math.min(size, want.length - seen.length));
          seen.push(...page.positions);
          after = page.positions[page.positions.length - 1];
          more = page.more;
        }
        expect(seen).toEqual(want);
      }
    }
    ix.close();
  });
});
