// ReadChanges (type filter, start_time, cursors, polling), changesSince and scanTuples.

import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { TupleKey } from '../../src/domain/types.js';
import { collect, deletes, rejectsWith, str, tk, writes, type TestStorage } from './helpers.js';

export function changeLog(storage: () => TestStorage, storeId: () => string): void {
  describe('changes', () => {
    let s: TestStorage;
    let id: string;
    beforeEach(() => {
      s = storage();
      id = storeId();
    });

    async function seed(): Promise<void> {
      await s.writeTuples(id, writes('doc:1#viewer@user:anne', 'folder:1#viewer@user:anne'));
      await s.writeTuples(id, { ...writes('doc:2#viewer@user:bob'), deletes: [tk('doc:1#viewer@user:anne')] });
      await s.writeTuples(
        id,
        writes('folder:2#viewer@user:bob', 'doc:3#viewer@user:carl', 'doc:4#viewer@user:dan', 'docs:1#viewer@user:eve'),
      );
    }
    const render = (cs: { operation: string; tuple_key: TupleKey }[]): string[] =>
      cs.map((c) => `${c.operation === 'TUPLE_OPERATION_WRITE' ? '+' : '-'}${str(c.tuple_key)}`);

    const cases: { name: string; type?: string; pageSize: number; expected: string[] }[] = [
      {
        name: 'all, oldest first',
        pageSize: 100,
        expected: [
          '+doc:1#viewer@user:anne',
          '+folder:1#viewer@user:anne',
          '-doc:1#viewer@user:anne',
          '+doc:2#viewer@user:bob',
          '+folder:2#viewer@user:bob',
          '+doc:3#viewer@user:carl',
          '+doc:4#viewer@user:dan',
          '+docs:1#viewer@user:eve',
        ],
      },
      {
        name: 'all, pages of 2',
        pageSize: 2,
        expected: [
          '+doc:1#viewer@user:anne',
          '+folder:1#viewer@user:anne',
          '-doc:1#viewer@user:anne',
          '+doc:2#viewer@user:bob',
          '+folder:2#viewer@user:bob',
          '+doc:3#viewer@user:carl',
          '+doc:4#viewer@user:dan',
          '+docs:1#viewer@user:eve',
        ],
      },
      {
        name: 'type folder, pages of 1',
        type: 'folder',
        pageSize: 1,
        expected: ['+folder:1#viewer@user:anne', '+folder:2#viewer@user:bob'],
      },
      {
        name: 'type doc, pages of 3',
        type: 'doc',
        pageSize: 3,
        expected: [
          '+doc:1#viewer@user:anne',
          '-doc:1#viewer@user:anne',
          '+doc:2#viewer@user:bob',
          '+doc:3#viewer@user:carl',
          '+doc:4#viewer@user:dan',
        ],
      },
      { name: 'unknown type', type: 'team', pageSize: 3, expected: [] },
    ];
    for (const c of cases) {
      it(`ReadChanges ${c.name}; the cursor is echoed once nothing is new`, async () => {
        await seed();
        const seen: string[] = [];
        let after: string | undefined;
        for (let guard = 0; guard < 20; guard++) {
          const page = await s.readChanges(id, { pageSize: c.pageSize, type: c.type, after });
          if (page.items.length === 0) {
            expect(page.next).toBe(after);
            break;
          }
          expect(page.items.length).toBeLessThanOrEqual(c.pageSize);
          expect(page.next).toBeDefined();
          seen.push(...render(page.items));
          after = page.next;
        }
        expect(seen).toEqual(c.expected);
        if (after === undefined) return;
        await s.writeTuples(id, writes(`${c.type ?? 'doc'}:new#viewer@user:zoe`));
        expect(render((await s.readChanges(id, { pageSize: 10, type: c.type, after })).items)).toEqual([
          `+${c.type ?? 'doc'}:new#viewer@user:zoe`,
        ]);
      });
    }

    for (const c of cases.filter((x) => x.expected.length > 0)) {
      it(`ReadChanges ${c.name}: the cursor after each change resumes right after it`, async () => {
        await seed();
        const page = await s.readChanges(id, { pageSize: 100, type: c.type });
        expect(render(page.items)).toEqual(c.expected);
        expect(page.cursors).toHaveLength(page.items.length);
        expect(page.next).toBe(page.cursors[page.cursors.length - 1]);
        for (let i = 0; i < page.items.length; i++) {
          const rest = await s.readChanges(id, { pageSize: 100, type: c.type, after: page.cursors[i] });
          expect(render(rest.items)).toEqual(c.expected.slice(i + 1));
        }
      });
    }

    it('deletes carry no condition; writes keep theirs', async () => {
      await s.writeTuples(id, {
        ...writes(),
        writes: [tk('doc:1#viewer@user:anne', { name: 'c', context: { x: 1 } })],
      });
      await s.writeTuples(id, deletes('doc:1#viewer@user:anne'));
      const [w, d] = (await s.readChanges(id, { pageSize: 10 })).items;
      expect(w?.tuple_key.condition).toEqual({ name: 'c', context: { x: 1 } });
      expect(d?.tuple_key).toEqual(tk('doc:1#viewer@user:anne'));
    });

    it('startTime returns changes at or after that millisecond; nothing matched gives no cursor', async () => {
      // The two writes one millisecond apart on an injected clock (Date only: timers and I/O stay
      // real), a minute in the past: the store is new, so nothing stamped it later.
      const t0 = Date.now() - 60_000;
      vi.useFakeTimers({ toFake: ['Date'], now: t0 });
      try {
        await s.writeTuples(id, writes('doc:1#viewer@user:anne'));
        vi.setSystemTime(t0 + 1);
        await s.writeTuples(id, writes('doc:2#viewer@user:anne'));
      } finally {
        vi.useRealTimers();
      }
      const t = new Date(t0 + 1).toISOString();
      expect((await s.readChanges(id, { pageSize: 10 })).items.map((c) => c.timestamp)).toEqual([
        new Date(t0).toISOString(),
        t,
      ]);
      const page = await s.readChanges(id, { pageSize: 10, startTime: t });
      expect(render(page.items)).toEqual(['+doc:2#viewer@user:anne']);
      expect((await s.readChanges(id, { pageSize: 10, startTime: '1970-01-01T00:00:00Z' })).items).toHaveLength(2);
      const late = await s.readChanges(id, { pageSize: 10, startTime: new Date(Date.now() + 60_000).toISOString() });
      expect(late).toEqual({ items: [], cursors: [] });
      expect(await s.readChanges(id, { pageSize: 10, type: 'none' })).toEqual({
        items: [],
        cursors: [],
        next: undefined,
      });
      await rejectsWith(s.readChanges(id, { pageSize: 10, after: 'c.AAAA' }), 'invalid_continuation_token');
      await rejectsWith(
        s.readChanges(id, { pageSize: 10, after: page.next?.replace(/^c/, 't') }),
        'invalid_continuation_token',
      );
    });

    it('changesSince yields later revisions with their revision numbers', async () => {
      await s.writeTuples(id, writes('doc:1#viewer@user:anne'));
      await s.writeTuples(id, writes('doc:2#viewer@user:anne'));
      await s.writeTuples(id, {
        ...writes('doc:3#viewer@user:anne', 'doc:4#viewer@user:anne'),
        deletes: [tk('doc:1#viewer@user:anne')],
      });
      const since = await collect(s.changesSince(id, 1));
      expect(since.map((c) => `${c.revision} ${c.operation} ${str(c.tuple)}`)).toEqual([
        '2 write doc:2#viewer@user:anne',
        '3 delete doc:1#viewer@user:anne',
        '3 write doc:3#viewer@user:anne',
        '3 write doc:4#viewer@user:anne',
      ]);
      expect(await collect(s.changesSince(id, 3))).toEqual([]);
    });

    it('scanTuples returns the revision with every tuple', async () => {
      await s.writeTuples(id, writes('doc:1#viewer@user:anne', 'doc:2#viewer@user:bob'));
      await s.writeTuples(id, { ...writes(), writes: [tk('doc:0#viewer@user:carl', { name: 'c' })] });
      const scan = await s.scanTuples(id);
      expect(scan.revision).toBe(2);
      expect(await collect(scan.tuples)).toEqual([
        tk('doc:0#viewer@user:carl', { name: 'c' }),
        tk('doc:1#viewer@user:anne'),
        tk('doc:2#viewer@user:bob'),
      ]);
    });
  });
}
