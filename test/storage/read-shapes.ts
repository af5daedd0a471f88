// Read for every filter shape of docs/reference/http-api.md §4.12, checked against a reference filter, paged.

import { beforeEach, describe, expect, it } from 'vitest';
import type { Page, Tuple, TupleKey } from '../../src/domain/types.js';
import type { PageRequest, TupleFilter } from '../../src/storage/types.js';
import { rejectsWith, str, tk, writes, type TestStorage } from './helpers.js';

const DATA = [
  'doc:1#viewer@user:anne',
  'doc:1#viewer@user:bob',
  'doc:1#editor@user:anne',
  'doc:1#viewer@group:eng#member',
  'doc:10#viewer@user:anne',
  'doc:2#viewer@user:*',
  'doc:2#owner@user:anne',
  'doc:2#viewer@user:anne',
  'doc:3#viewer@user:annette',
  'docs:1#viewer@user:anne',
  'folder:1#viewer@user:anne',
  'folder:1#parent@doc:1',
];

function matches(t: TupleKey, f: TupleFilter): boolean {
  if (f.object !== undefined && (f.object.endsWith(':') ? !t.object.startsWith(f.object) : t.object !== f.object))
    return false;
  return (!f.relation || t.relation === f.relation) && (!f.user || t.user === f.user);
}

function compare(a: string[], b: string[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return (a[i] ?? '') < (b[i] ?? '') ? -1 : 1;
  return 0;
}

/**
 * Reference answer: the object scan orders by (object, relation, user); the by-user shape by
 * (relation, object) where it is served from a by-user index (`byUserOrder`), else as an object scan.
 */
function expected(f: TupleFilter, byUserOrder = false): string[] {
  const byUser = byUserOrder && f.object?.endsWith(':') === true && !!f.user;
  const sortKey = (t: TupleKey): string[] => (byUser ? [t.relation, t.object] : [t.object, t.relation, t.user]);
  return DATA.map((s) => tk(s))
    .filter((t) => matches(t, f))
    .sort((a, b) => compare(sortKey(a), sortKey(b)))
    .map(str);
}

const SHAPES: TupleFilter[] = [
  {},
  { object: 'doc:1' },
  { object: 'doc:1', relation: 'viewer' },
  { object: 'doc:1', relation: 'viewer', user: 'user:anne' },
  { object: 'doc:1', user: 'user:anne' },
  { object: 'doc:', user: 'user:anne' },
  { object: 'doc:', relation: 'viewer', user: 'user:anne' },
  { object: 'doc:', relation: 'viewer', user: 'group:eng#member' },
  { object: 'doc:' },
  { object: 'doc:', relation: 'viewer' },
  { object: 'doc:404' },
  { object: 'doc:', user: 'user:nobody' },
];

/** Reads and writes through the layer under test: a storage, or the engine over one. */
export interface ReadTarget {
  write(tuples: readonly TupleKey[]): Promise<unknown>;
  read(filter: TupleFilter, page: PageRequest): Promise<Page<Tuple>>;
  /** The by-user shape comes back in (relation, object) order (Storage.readsByUser, or the engine). */
  readonly byUserOrder: boolean;
}

/** A storage's own Read. */
export function storageTarget(storage: () => TestStorage, storeId: () => string): () => ReadTarget {
  return () => {
    const s = storage();
    return {
      write: (tuples) => s.writeTuples(storeId(), writes(...tuples.map(str))),
      read: (filter, page) => s.readTuples(storeId(), filter, page),
      byUserOrder: s.readsByUser,
    };
  };
}

export function readShapes(target: () => ReadTarget): void {
  describe('Read filter shapes', () => {
    beforeEach(async () => {
      await target().write(DATA.map((s) => tk(s)));
    });

    for (const f of SHAPES) {
      it(`${JSON.stringify(f)} pages through exactly the matching tuples`, async () => {
        const want = expected(f, target().byUserOrder);
        if (f.object !== 'doc:404' && f.user !== 'user:nobody') expect(want.length).toBeGreaterThan(0);
        for (const pageSize of [1, 2, 100]) {
          const seen: string[] = [];
          let after: string | undefined;
          for (let guard = 0; guard < 50; guard++) {
            const page = await target().read(f, { pageSize, after });
            seen.push(...page.items.map((t) => str(t.key)));
            if (!page.next) break;
            expect(page.items).toHaveLength(pageSize);
            after = page.next;
          }
          expect(seen).toEqual(want);
        }
      });
    }

    it('rejects garbage cursors and cursors from another filter shape', async () => {
      const s = target();
      const first = await s.read({ object: 'doc:1' }, { pageSize: 1 });
      const byUser = await s.read({ object: 'doc:', user: 'user:anne' }, { pageSize: 1 });
      const bad: [TupleFilter, string | undefined][] = [
        [{ object: 'doc:1' }, 'garbage'],
        [{ object: 'doc:1' }, 't.%%%'],
        [{ object: 'doc:1' }, 't.AAAA'],
        [{ object: 'doc:2' }, first.next],
        [{ object: 'doc:1' }, byUser.next],
        [{ object: 'doc:', user: 'user:bob' }, byUser.next],
      ];
      for (const [f, after] of bad) await rejectsWith(s.read(f, { pageSize: 5, after }), 'invalid_continuation_token');
      const rest = await s.read({}, { pageSize: 100, after: first.next });
      const all = expected({});
      expect(rest.items.map((t) => str(t.key))).toEqual(all.slice(all.indexOf('doc:1#editor@user:anne') + 1));
    });
  });
}
