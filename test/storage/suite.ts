// The one storage suite: every backend must pass it unchanged (memory.test.ts, level.test.ts,
// postgres.test.ts).

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AppError, ErrorCode } from '../../src/errors.js';
import type { TupleKey } from '../../src/domain/types.js';
import type { TupleWrite } from '../../src/storage/types.js';
import { allTuples, collect, deletes, rejectsWith, str, tk, writes, type TestStorage } from './helpers.js';
import { changeLog } from './change-log.js';
import { readShapes, storageTarget } from './read-shapes.js';

export interface Harness {
  readonly storage: TestStorage;
  /** Another storage object over the same datastore (shared backends only); closed by the caller. */
  readonly second?: (() => Promise<TestStorage>) | undefined;
  /** Closes the storage and removes its files. */
  readonly dispose: () => Promise<void>;
}

/**
 * The storage contract on one backend. `shared`: several storage objects may open the same
 * datastore (PostgreSQL), so the cases that need two of them are registered; memory and LevelDB
 * are exclusive and do not have those cases at all.
 */
export function storageSuite(name: string, open: () => Promise<Harness>, shared = false): void {
  describe(`storage: ${name}`, () => {
    let h: Harness;
    let s: TestStorage;
    let id: string;
    beforeEach(async () => {
      h = await open();
      s = h.storage;
      id = (await s.createStore('suite')).id;
    });
    afterEach(async () => h.dispose());

    describe('stores', () => {
      it('lists oldest first with pagination and an exact name filter', async () => {
        const made = [id];
        for (const n of ['a-1', 'b-2', 'a-1', 'c-3']) made.push((await s.createStore(n)).id);
        const seen: string[] = [];
        let after: string | undefined;
        do {
          const page = await s.listStores({ pageSize: 2, after });
          seen.push(...page.items.map((x) => x.id));
          after = page.next;
        } while (after);
        expect(seen).toEqual(made);
        const named = await s.listStores({ pageSize: 1, name: 'a-1' });
        expect(named.items.map((x) => x.id)).toEqual([made[1]]);
        const rest = await s.listStores({ pageSize: 1, name: 'a-1', after: named.next });
        expect(rest.items.map((x) => x.id)).toEqual([made[3]]);
        expect(rest.next).toBeUndefined();
        await rejectsWith(s.listStores({ pageSize: 1, after: 'garbage' }), 'invalid_continuation_token');
      });

      it('getStore returns the record; created_at equals updated_at', async () => {
        const got = await s.getStore(id);
        expect(got?.name).toBe('suite');
        expect(got?.created_at).toBe(got?.updated_at);
        expect(await s.getStore('01ARZ3NDEKTSV4RRFFQ69G5FAV')).toBeUndefined();
      });

      it('a tombstone hides the store and all its data at once; reclamation removes its keys', async () => {
        const model = await s.writeModel(id, { schema_version: '1.1', type_definitions: [{ type: 'user' }] });
        await s.writeTuples(id, writes('doc:1#viewer@user:anne', 'doc:2#viewer@user:bob'));
        await s.writeAssertions(id, model.id, [{ tuple_key: tk('doc:1#viewer@user:anne'), expectation: true }]);
        await s.writeCheckpoint(id, 1, [new Uint8Array([1, 2, 3])]);
        await s.putPermissionIndex(id, {
          id: '01ARZ3NDEKTSV4RRFFQ69G5FAV',
          name: 'x',
          relations: [{ object_type: 'doc', relation: 'viewer' }],
          modelId: model.id,
          createdAt: '2026-01-01T00:00:00.000Z',
        });
        await s.writeShadow(id, { modelId: model.id, sampling: 0.5, updatedAt: '2026-01-01T00:00:00.000Z' });
        const other = (await s.createStore('other')).id;
        await s.writeTuples(other, writes('doc:1#viewer@user:anne'));
        expect(await s.countStoreKeys(id)).toBeGreaterThan(9);

        expect(await s.deleteStore(id)).toBe(true);
        expect(await s.deleteStore(id)).toBe(false);
        expect(await s.getStore(id)).toBeUndefined();
        expect((await s.listStores({ pageSize: 100 })).items.map((x) => x.id)).toEqual([other]);
        expect((await s.readTuples(id, {}, { pageSize: 100 })).items).toEqual([]);
        expect((await s.readChanges(id, { pageSize: 100 })).items).toEqual([]);
        expect(await s.revision(id)).toBe(0);
        expect(await s.latestModel(id)).toBeUndefined();
        expect(await s.getModel(id, model.id)).toBeUndefined();
        expect(await s.readAssertions(id, model.id)).toEqual([]);
        expect(await s.readCheckpoint(id)).toBeUndefined();
        expect(await s.listPermissionIndexes(id)).toEqual([]);
        expect(await s.getPermissionIndex(id, '01ARZ3NDEKTSV4RRFFQ69G5FAV')).toBeUndefined();
        expect(await s.readShadow(id)).toBeUndefined();
        await rejectsWith(s.writeShadow(id, undefined), 'store_id_not_found');
        await rejectsWith(
          s.putPermissionIndex(id, {
            id: '01ARZ3NDEKTSV4RRFFQ69G5FAW',
            name: 'y',
            relations: [],
            modelId: model.id,
            createdAt: '2026-01-01T00:00:00.000Z',
          }),
          'store_id_not_found',
        );
        expect(await collect(s.changesSince(id, 0))).toEqual([]);
        expect(await collect((await s.scanTuples(id)).tuples)).toEqual([]);
        await rejectsWith(s.writeTuples(id, writes('doc:3#viewer@user:anne')), 'store_id_not_found');
        await rejectsWith(s.writeModel(id, { schema_version: '1.1', type_definitions: [] }), 'store_id_not_found');

        await s.settled();
        expect(await s.countStoreKeys(id)).toBe(0);
        expect(await allTuples(s, other)).toEqual(['doc:1#viewer@user:anne']);
      });

      it('nothing is written to a store once its tombstone is committed', async () => {
        const racing = Array.from({ length: 6 }, (_, i) => s.writeTuples(id, writes(`doc:${i}#viewer@user:anne`)));
        const deleted = s.deleteStore(id);
        const late = s.writeTuples(id, writes('doc:late#viewer@user:anne'));
        const outcomes = await Promise.allSettled([...racing, deleted, late]);
        expect(outcomes.slice(0, 6).every((o) => o.status === 'fulfilled')).toBe(true);
        expect(outcomes[6]).toEqual({ status: 'fulfilled', value: true });
        const late7 = outcomes[7];
        expect(late7?.status === 'rejected' && (late7.reason as AppError).code).toBe('store_id_not_found');
        await s.settled();
        expect(await s.countStoreKeys(id)).toBe(0);
      });
    });

    describe('the shadow model setting', () => {
      it('is set, replaced and cleared per store', async () => {
        const at = '2026-05-01T08:00:00.000Z';
        const other = (await s.createStore('other')).id;
        expect(await s.readShadow(id)).toBeUndefined();
        await s.writeShadow(id, { modelId: '01H000000000000000000000MM', sampling: 0.25, updatedAt: at });
        expect(await s.readShadow(id)).toEqual({
          modelId: '01H000000000000000000000MM',
          sampling: 0.25,
          updatedAt: at,
        });
        expect(await s.readShadow(other)).toBeUndefined();
        await s.writeShadow(id, { modelId: '01H000000000000000000000MN', sampling: 1, updatedAt: at });
        expect(await s.readShadow(id)).toEqual({ modelId: '01H000000000000000000000MN', sampling: 1, updatedAt: at });
        await s.writeShadow(id, undefined);
        await s.writeShadow(id, undefined);
        expect(await s.readShadow(id)).toBeUndefined();
        await rejectsWith(
          s.writeShadow('01ARZ3NDEKTSV4RRFFQ69G5FAV', {
            modelId: '01H000000000000000000000MM',
            sampling: 0,
            updatedAt: at,
          }),
          'store_id_not_found',
        );
      });

      it('readShadows reads many stores at once: a setting, null for none, deleted and unknown absent', async () => {
        const at = '2026-05-01T08:00:00.000Z';
        const none = (await s.createStore('none')).id;
        const gone = (await s.createStore('gone')).id;
        const setting = { modelId: '01H000000000000000000000MM', sampling: 0.5, updatedAt: at };
        await s.writeShadow(id, setting);
        await s.writeShadow(gone, setting);
        await s.deleteStore(gone);
        const unknown = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
        const read = await s.readShadows([id, none, gone, unknown]);
        expect([...read.entries()].sort()).toEqual(
          [
            [id, setting],
            [none, null],
          ].sort(),
        );
        expect((await s.readShadows([])).size).toBe(0);
      });

      if (shared)
        it('a setting made through one storage object is read through another', async () => {
          if (!h.second) throw new Error(`the ${name} harness opens no second storage object`);
          const other = await h.second();
          try {
            const setting = {
              modelId: '01H000000000000000000000MM',
              sampling: 0.1,
              updatedAt: '2026-05-01T08:00:00.000Z',
            };
            await s.writeShadow(id, setting);
            expect(await other.readShadow(id)).toEqual(setting);
            await other.writeShadow(id, undefined);
            expect(await s.readShadow(id)).toBeUndefined();
          } finally {
            await other.close();
          }
        });
    });

    describe('permission index definitions', () => {
      it('stores, lists in id order, reads and deletes definitions per store', async () => {
        const rec = (n: number) => ({
          id: `01ARZ3NDEKTSV4RRFFQ69G5FA${n}`,
          name: `doc#viewer ${n}`,
          relations: [
            { object_type: 'doc', relation: 'viewer' },
            { object_type: 'folder', relation: 'owner' },
          ],
          modelId: '01H000000000000000000000MM',
          createdAt: '2026-05-01T08:00:00.000Z',
        });
        const other = (await s.createStore('other')).id;
        expect(await s.listPermissionIndexes(id)).toEqual([]);
        await s.putPermissionIndex(id, rec(3));
        await s.putPermissionIndex(id, rec(1));
        await s.putPermissionIndex(other, rec(2));
        expect(await s.listPermissionIndexes(id)).toEqual([rec(1), rec(3)]);
        expect(await s.getPermissionIndex(id, rec(3).id)).toEqual(rec(3));
        expect(await s.getPermissionIndex(id, rec(2).id)).toBeUndefined();
        expect(await s.deletePermissionIndex(id, rec(3).id)).toBe(true);
        expect(await s.deletePermissionIndex(id, rec(3).id)).toBe(false);
        expect(await s.deletePermissionIndex(id, rec(2).id)).toBe(false);
        expect(await s.listPermissionIndexes(id)).toEqual([rec(1)]);
        expect(await s.listPermissionIndexes(other)).toEqual([rec(2)]);
        await rejectsWith(s.putPermissionIndex('01ARZ3NDEKTSV4RRFFQ69G5FAV', rec(4)), 'store_id_not_found');
      });
    });

    describe('models and assertions', () => {
      it('lists models newest first across pages; latest is the greatest id', async () => {
        expect(await s.latestModel(id)).toBeUndefined();
        const ids: string[] = [];
        for (let i = 0; i < 5; i++)
          ids.push((await s.writeModel(id, { schema_version: '1.1', type_definitions: [{ type: `t${i}` }] })).id);
        expect([...ids].sort()).toEqual(ids);
        const seen: string[] = [];
        let after: string | undefined;
        do {
          const page = await s.listModels(id, { pageSize: 2, after });
          seen.push(...page.items.map((m) => m.id));
          after = page.next;
        } while (after);
        expect(seen).toEqual([...ids].reverse());
        expect((await s.latestModel(id))?.type_definitions[0]?.type).toBe('t4');
        expect((await s.getModel(id, ids[1] as string))?.type_definitions).toEqual([{ type: 't1' }]);
        expect(await s.getModel(id, '01ARZ3NDEKTSV4RRFFQ69G5FAV')).toBeUndefined();
        await rejectsWith(s.listModels(id, { pageSize: 2, after: 'm.bm90IGFuIGlk' }), 'invalid_continuation_token');
      });

      it('writeAssertions replaces the set; an empty set clears it', async () => {
        const m = (await s.writeModel(id, { schema_version: '1.1', type_definitions: [{ type: 'user' }] })).id;
        const a = { tuple_key: tk('doc:1#viewer@user:anne'), expectation: true };
        const b = { tuple_key: tk('doc:2#viewer@user:bob'), expectation: false, context: { x: 1 } };
        expect(await s.readAssertions(id, m)).toEqual([]);
        await s.writeAssertions(id, m, [a, b]);
        expect(await s.readAssertions(id, m)).toEqual([a, b]);
        await s.writeAssertions(id, m, [b]);
        expect(await s.readAssertions(id, m)).toEqual([b]);
        await s.writeAssertions(id, m, []);
        expect(await s.readAssertions(id, m)).toEqual([]);
      });
    });

    describe('writes', () => {
      it('revisions strictly increase by one per write; ignored-only writes keep it', async () => {
        expect(await s.revision(id)).toBe(0);
        const r1 = await s.writeTuples(id, writes('doc:1#viewer@user:anne', 'doc:1#viewer@user:bob'));
        const r2 = await s.writeTuples(id, deletes('doc:1#viewer@user:anne'));
        const r3 = await s.writeTuples(id, { ...writes('doc:1#viewer@user:bob'), onDuplicate: 'ignore' });
        expect([r1.revision, r2.revision, r3.revision]).toEqual([1, 2, 2]);
        expect(r3.written).toEqual([]);
        expect(await s.revision(id)).toBe(2);
        expect(r1.timestamp <= r2.timestamp).toBe(true);
      });

      it("a delete's change carries the deleted tuple's state (condition, expiry), not its ReadChanges row", async () => {
        const t = { ...tk('doc:1#viewer@user:anne'), condition: { name: 'office', context: { ip: '10.0.0.1' } } };
        const e = { ...tk('doc:2#viewer@user:bob'), expires_at: '2099-01-01T00:00:00.000Z' };
        const plain = tk('doc:3#viewer@user:carl');
        await s.writeTuples(id, { ...writes(), writes: [t, e, plain] });
        await s.writeTuples(id, deletes('doc:1#viewer@user:anne', 'doc:2#viewer@user:bob', 'doc:3#viewer@user:carl'));
        const log = await collect(s.changesSince(id, 0));
        const dels = log.filter((c) => c.operation === 'delete');
        expect(dels.map((c) => c.tuple)).toEqual([
          tk('doc:1#viewer@user:anne'),
          tk('doc:2#viewer@user:bob'),
          tk('doc:3#viewer@user:carl'),
        ]);
        expect(dels.map((c) => c.prior)).toEqual([t, e, plain]);
        expect(log.find((c) => c.operation === 'write')?.prior).toBeUndefined();
        // ReadChanges shows the delete as requested, without the deleted tuple's state.
        const page = await s.readChanges(id, { pageSize: 10 });
        expect(page.items.filter((c) => c.operation === 'TUPLE_OPERATION_DELETE').map((c) => c.tuple_key)).toEqual([
          tk('doc:1#viewer@user:anne'),
          tk('doc:2#viewer@user:bob'),
          tk('doc:3#viewer@user:carl'),
        ]);
      });

      it('revisionTime and revisionAt map revisions to commit times and back', async () => {
        expect(await s.revisionTime(id, 0)).toBeUndefined();
        expect(await s.revisionAt(id, Date.now())).toBeUndefined();
        const r1 = await s.writeTuples(id, writes('doc:1#viewer@user:anne', 'doc:2#viewer@user:anne'));
        const r2 = await s.writeTuples(id, deletes('doc:1#viewer@user:anne'));
        const t1 = Date.parse(r1.timestamp);
        const t2 = Date.parse(r2.timestamp);
        expect(await s.revisionTime(id, 1)).toBe(t1);
        expect(await s.revisionTime(id, 2)).toBe(t2);
        expect(await s.revisionTime(id, 3)).toBeUndefined();
        expect(await s.revisionAt(id, t1 - 1)).toBeUndefined();
        expect(await s.revisionAt(id, t1)).toEqual({ revision: t1 === t2 ? 2 : 1, ms: t1 });
        expect(await s.revisionAt(id, t2)).toEqual({ revision: 2, ms: t2 });
        expect(await s.revisionAt(id, t2 + 60_000)).toEqual({ revision: 2, ms: t2 });
        expect(await s.revisionTime('01ARZ3NDEKTSV4RRFFQ69G5FAV', 1)).toBeUndefined();
        expect(await s.revisionAt('01ARZ3NDEKTSV4RRFFQ69G5FAV', t2)).toBeUndefined();
      });

      if (shared)
        it('concurrent writers on two storage objects over one datastore: no gap, no duplicate revision', async () => {
          if (!h.second) throw new Error(`the ${name} harness opens no second storage object`);
          const other = await h.second();
          try {
            const both = [s, other];
            const results = await Promise.all(
              Array.from({ length: 40 }, (_, i) =>
                (both[i % 2] as TestStorage).writeTuples(id, writes(`doc:${i}#viewer@user:anne`)),
              ),
            );
            expect(results.map((r) => r.revision).sort((a, b) => a - b)).toEqual(
              Array.from({ length: 40 }, (_, i) => i + 1),
            );
            const log = await collect(s.changesSince(id, 0));
            expect(log.map((c) => c.revision)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
            const byRevision = new Map(results.map((r) => [r.revision, str(r.written[0] ?? tk('x:x#x@x:x'))]));
            expect(log.map((c) => str(c.tuple))).toEqual(log.map((c) => byRevision.get(c.revision)));
            const dup = await Promise.allSettled(
              both.map((x) => x.writeTuples(id, writes('doc:dup#viewer@user:anne'))),
            );
            expect(dup.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
            expect(await other.revision(id)).toBe(41);
          } finally {
            await other.close();
          }
        });

      it('concurrent writes get distinct, contiguous revisions; concurrent duplicates fail once', async () => {
        const results = await Promise.all(
          Array.from({ length: 12 }, (_, i) => s.writeTuples(id, writes(`doc:${i}#viewer@user:anne`))),
        );
        expect(results.map((r) => r.revision).sort((a, b) => a - b)).toEqual(
          Array.from({ length: 12 }, (_, i) => i + 1),
        );
        const outcomes = await Promise.allSettled(
          [1, 2, 3].map(() => s.writeTuples(id, writes('doc:x#viewer@user:anne'))),
        );
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      });

      it('applies deletes before writes, and records them first in the changelog', async () => {
        await s.writeTuples(id, writes('doc:1#viewer@user:anne'));
        const r = await s.writeTuples(id, {
          ...writes('doc:2#viewer@user:anne'),
          deletes: [tk('doc:1#viewer@user:anne')],
        });
        expect(r.deleted.map(str)).toEqual(['doc:1#viewer@user:anne']);
        expect(await allTuples(s, id)).toEqual(['doc:2#viewer@user:anne']);
        const changes = (await s.readChanges(id, { pageSize: 10 })).items;
        expect(changes.map((c) => `${c.operation} ${str(c.tuple_key)}`)).toEqual([
          'TUPLE_OPERATION_WRITE doc:1#viewer@user:anne',
          'TUPLE_OPERATION_DELETE doc:1#viewer@user:anne',
          'TUPLE_OPERATION_WRITE doc:2#viewer@user:anne',
        ]);
        expect(changes[1]?.timestamp).toBe(changes[2]?.timestamp);
      });

      const failing: { name: string; write: TupleWrite; code: ErrorCode; message: RegExp }[] = [
        {
          name: 'a write whose 3rd tuple already exists (on_duplicate error)',
          write: writes('doc:8#viewer@user:anne', 'doc:9#viewer@user:anne', 'doc:1#viewer@user:anne'),
          code: 'write_failed_due_to_invalid_input',
          message:
            /^cannot write a tuple which already exists: user: 'user:anne', relation: 'viewer', object: 'doc:1': tuple to be written already existed or the tuple to be deleted did not exist$/,
        },
        {
          name: 'a write whose 2nd and 4th tuples already exist names the 2nd (on_duplicate error)',
          write: writes(
            'doc:8#viewer@user:anne',
            'doc:1#viewer@user:anne',
            'doc:9#viewer@user:anne',
            'doc:2#viewer@user:bob',
          ),
          code: 'write_failed_due_to_invalid_input',
          message: /^cannot write a tuple which already exists: user: 'user:anne', relation: 'viewer', object: 'doc:1'/,
        },
        {
          name: 'a delete of a missing tuple (on_missing error) after a valid delete and with writes',
          write: {
            ...writes('doc:8#viewer@user:anne'),
            deletes: [tk('doc:1#viewer@user:anne'), tk('doc:7#viewer@user:zed')],
          },
          code: 'write_failed_due_to_invalid_input',
          message:
            /^cannot delete a tuple which does not exist: user: 'user:zed', relation: 'viewer', object: 'doc:7': tuple/,
        },
        {
          name: 'on_duplicate ignore with a different condition',
          write: {
            ...writes('doc:8#viewer@user:anne'),
            writes: [tk('doc:8#viewer@user:anne'), tk('doc:2#viewer@user:bob', { name: 'c', context: { x: 2 } })],
            onDuplicate: 'ignore',
          },
          code: 'transaction_conflict',
          message:
            /^transactional write failed due to conflict: attempted to write a tuple which already exists with a different condition: user: 'user:bob', relation: 'viewer', object: 'doc:2'$/,
        },
        {
          name: 'on_duplicate ignore where the stored tuple has a condition and the new one none',
          write: { ...writes('doc:3#viewer@user:carl'), onDuplicate: 'ignore' },
          code: 'transaction_conflict',
          message: /different condition/,
        },
      ];
      for (const c of failing) {
        it(`a failed batch changes nothing: ${c.name}`, async () => {
          await s.writeTuples(id, {
            ...writes('doc:1#viewer@user:anne', 'doc:2#viewer@user:bob'),
            writes: [
              tk('doc:1#viewer@user:anne'),
              tk('doc:2#viewer@user:bob', { name: 'c', context: { x: 1 } }),
              tk('doc:3#viewer@user:carl', { name: 'c' }),
            ],
          });
          const before = {
            tuples: await allTuples(s, id),
            revision: await s.revision(id),
            changes: (await s.readChanges(id, { pageSize: 100 })).items,
          };
          const err = await rejectsWith(s.writeTuples(id, c.write), c.code);
          expect(err.message).toMatch(c.message);
          expect({
            tuples: await allTuples(s, id),
            revision: await s.revision(id),
            changes: (await s.readChanges(id, { pageSize: 100 })).items,
          }).toEqual(before);
        });
      }

      it('a key deleted and written back in one write, and a key written twice, follow request order', async () => {
        await s.writeTuples(id, writes('doc:1#viewer@user:anne'));
        const back = await s.writeTuples(id, {
          ...writes('doc:1#viewer@user:anne'),
          deletes: [tk('doc:1#viewer@user:anne')],
        });
        expect([back.deleted.map(str), back.written.map(str), back.revision]).toEqual([
          ['doc:1#viewer@user:anne'],
          ['doc:1#viewer@user:anne'],
          2,
        ]);
        const twice = await s.writeTuples(id, {
          ...writes('doc:2#viewer@user:anne', 'doc:2#viewer@user:anne'),
          onDuplicate: 'ignore',
        });
        expect([twice.written.map(str), twice.revision]).toEqual([['doc:2#viewer@user:anne'], 3]);
        const differs = await rejectsWith(
          s.writeTuples(id, {
            ...writes(),
            writes: [
              tk('doc:4#viewer@user:anne'),
              tk('doc:2#viewer@user:anne', { name: 'c' }),
              tk('doc:4#viewer@user:anne'),
            ],
            onDuplicate: 'ignore',
          }),
          'transaction_conflict',
        );
        expect(differs.message).toMatch(
          /a different condition: user: 'user:anne', relation: 'viewer', object: 'doc:2'$/,
        );
        const err = await rejectsWith(
          s.writeTuples(id, writes('doc:3#viewer@user:anne', 'doc:3#viewer@user:anne')),
          'write_failed_due_to_invalid_input',
        );
        expect(err.message).toMatch(
          /^cannot write a tuple which already exists: user: 'user:anne', relation: 'viewer', object: 'doc:3'/,
        );
        const gone = await rejectsWith(
          s.writeTuples(id, deletes('doc:1#viewer@user:anne', 'doc:1#viewer@user:anne')),
          'write_failed_due_to_invalid_input',
        );
        expect(gone.message).toMatch(/^cannot delete a tuple which does not exist: user: 'user:anne'/);
        expect(await allTuples(s, id)).toEqual(['doc:1#viewer@user:anne', 'doc:2#viewer@user:anne']);
        expect(await s.revision(id)).toBe(3);
      });

      it('on_duplicate ignore: a different expires_at is a conflict naming expires_at; a reordered context is the same', async () => {
        const at = '2099-01-01T00:00:00.000Z';
        const cond = { name: 'c', context: { a: 1, b: { y: [true, null], x: 'v' } } };
        await s.writeTuples(id, { ...writes(), writes: [{ ...tk('doc:1#viewer@user:anne', cond), expires_at: at }] });
        const same = { name: 'c', context: { b: { x: 'v', y: [true, null] }, a: 1 } };
        const r = await s.writeTuples(id, {
          ...writes(),
          writes: [{ ...tk('doc:1#viewer@user:anne', same), expires_at: at }],
          onDuplicate: 'ignore',
        });
        expect([r.written, r.revision]).toEqual([[], 1]);
        const err = await rejectsWith(
          s.writeTuples(id, {
            ...writes(),
            writes: [{ ...tk('doc:1#viewer@user:anne', same), expires_at: '2099-01-02T00:00:00.000Z' }],
            onDuplicate: 'ignore',
          }),
          'transaction_conflict',
        );
        expect(err.message).toMatch(/a different expires_at: user: 'user:anne', relation: 'viewer', object: 'doc:1'$/);
        const none = await rejectsWith(
          s.writeTuples(id, { ...writes('doc:1#viewer@user:anne'), onDuplicate: 'ignore' }),
          'transaction_conflict',
        );
        expect(none.message).toMatch(/a different condition/);
      });

      it('ignore options skip identical duplicates and missing deletes without changelog entries', async () => {
        const cond = { name: 'c', context: { b: [1, 2], a: 'x' } };
        await s.writeTuples(id, { ...writes(), writes: [tk('doc:1#viewer@user:anne', cond)] });
        const r = await s.writeTuples(id, {
          deletes: [tk('doc:9#viewer@user:nobody')],
          writes: [
            tk('doc:1#viewer@user:anne', { name: 'c', context: { a: 'x', b: [1, 2] } }),
            tk('doc:2#viewer@user:anne'),
          ],
          onDuplicate: 'ignore',
          onMissing: 'ignore',
        });
        expect(r.deleted).toEqual([]);
        expect(r.written.map(str)).toEqual(['doc:2#viewer@user:anne']);
        expect(r.revision).toBe(2);
        expect((await s.readChanges(id, { pageSize: 100 })).items).toHaveLength(2);
        const read = await s.readTuples(
          id,
          { object: 'doc:1', relation: 'viewer', user: 'user:anne' },
          { pageSize: 10 },
        );
        expect(read.items[0]?.key.condition).toEqual(cond);
        expect(read.items[0]?.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      });

      it('importTuples: one revision per chunk, stored tuples skipped, a conflict writes nothing', async () => {
        const cond = { name: 'c', context: { a: 1 } };
        await s.writeTuples(id, writes('doc:1#viewer@user:anne'));
        const chunk = [
          tk('doc:1#viewer@user:anne'),
          tk('doc:2#viewer@user:\u{1F600}'),
          tk('doc:3#viewer@user:bob', cond),
          tk('group:\u0000x#member@user:é'),
        ];
        const r = await s.importTuples(id, chunk);
        expect(r.revision).toBe(2);
        expect(r.deleted).toEqual([]);
        expect(r.written.map(str)).toEqual(chunk.slice(1).map(str));
        // Sent again: nothing changes, no revision, no change.
        const again = await s.importTuples(id, chunk);
        expect(again.revision).toBe(2);
        expect(again.written).toEqual([]);
        const changes = (await s.readChanges(id, { pageSize: 100 })).items;
        expect(changes.map((c) => [c.operation, str(c.tuple_key)])).toEqual(
          [chunk[0], ...chunk.slice(1)].map((t) => ['TUPLE_OPERATION_WRITE', str(t as TupleKey)]),
        );
        expect(changes[2]?.tuple_key.condition).toEqual(cond);
        expect((await s.readChanges(id, { pageSize: 100, type: 'group' })).items.map((c) => str(c.tuple_key))).toEqual([
          'group:\u0000x#member@user:é',
        ]);
        // The same tuple with another condition: a conflict, and the chunk's new tuple is not written.
        await rejectsWith(
          s.importTuples(id, [tk('doc:4#viewer@user:new'), tk('doc:3#viewer@user:bob', { name: 'other' })]),
          'transaction_conflict',
        );
        expect(await s.revision(id)).toBe(2);
        expect((await allTuples(s, id)).length).toBe(4);
        const since: string[] = [];
        for await (const c of s.changesSince(id, 1)) since.push(`${c.revision} ${c.operation} ${str(c.tuple)}`);
        expect(since).toEqual(chunk.slice(1).map((t) => `2 write ${str(t)}`));
        await rejectsWith(
          s.importTuples('01JAAAAAAAAAAAAAAAAAAAAAAA', [tk('doc:1#viewer@user:anne')]),
          'store_id_not_found',
        );
      });

      it('importTuples logs its changes grouped by object type; every page size, cursor and replay lists each', async () => {
        const T = '2030-01-01T00:00:00.000Z';
        const cond = { name: 'c', context: { a: 1 } };
        await s.writeTuples(id, writes('doc:0#viewer@user:x'));
        const chunk: TupleKey[] = [
          tk('doc:1#viewer@user:a'),
          tk('group:g#member@user:b'),
          { ...tk('doc:2#viewer@user:c', cond), expires_at: T },
          tk('folder:f#viewer@user:d'),
          tk('doc:0#viewer@user:x'),
          tk('group:h#member@user:e'),
          { ...tk('doc:3#viewer@user:f'), expires_at: T },
        ];
        const [d1, g, d2, f, , h, d3] = chunk as [TupleKey, TupleKey, TupleKey, TupleKey, TupleKey, TupleKey, TupleKey];
        const r = await s.importTuples(id, chunk);
        expect(r.revision).toBe(2);
        const grouped = [d1, d2, d3, g, h, f];
        expect(r.written).toEqual(grouped);
        const all = (await s.readChanges(id, { pageSize: 100 })).items;
        expect(all.map((c) => c.tuple_key)).toEqual([tk('doc:0#viewer@user:x'), ...grouped]);
        expect(all.every((c) => c.operation === 'TUPLE_OPERATION_WRITE')).toBe(true);
        expect(new Set(all.slice(1).map((c) => c.timestamp))).toEqual(new Set([r.timestamp]));
        const paged = async (pageSize: number, type?: string): Promise<TupleKey[]> => {
          const out: TupleKey[] = [];
          let after: string | undefined;
          for (;;) {
            const page = await s.readChanges(id, { pageSize, after, ...(type ? { type } : {}) });
            if (page.items.length === 0) return out;
            out.push(...page.items.map((c) => c.tuple_key));
            after = page.next;
          }
        };
        for (const size of [1, 2, 3, 4, 5])
          expect(await paged(size), `page size ${size}`).toEqual(all.map((c) => c.tuple_key));
        for (const size of [1, 2, 3]) {
          expect(await paged(size, 'group')).toEqual([g, h]);
          expect(await paged(size, 'doc')).toEqual([tk('doc:0#viewer@user:x'), d1, d2, d3]);
        }
        // Each change's own cursor resumes right after it.
        const cursors = (await s.readChanges(id, { pageSize: 100 })).cursors;
        for (let i = 0; i < cursors.length; i++)
          expect((await s.readChanges(id, { pageSize: 1, after: cursors[i] })).items.map((c) => c.tuple_key)).toEqual(
            all.slice(i + 1, i + 2).map((c) => c.tuple_key),
          );
        const since: TupleKey[] = [];
        for await (const c of s.changesSince(id, 1)) {
          expect([c.revision, c.operation, c.prior]).toEqual([2, 'write', undefined]);
          since.push(c.tuple);
        }
        expect(since).toEqual(grouped);
        expect(await s.revisionTime(id, 2)).toBe(Date.parse(r.timestamp));
      });

      it('importTuples keeps every character (backslash, tab, newline, CR, NUL) and conflicts on expiry', async () => {
        const T = '2030-01-01T00:00:00.000Z';
        const odd = [
          { object: 'doc:a\\b', relation: 'viewer', user: 'user:\\N' },
          { object: 'doc:\tc', relation: 'viewer', user: 'user:x\ny' },
          { object: 'doc:d\r', relation: 'viewer', user: 'user:\u0000\u0001' },
          tk('doc:e#viewer@user:z', { name: 'c', context: { s: 'tab\there\\' } }),
        ];
        await s.writeTuples(id, writes('doc:e#viewer@user:old'));
        const r = await s.importTuples(id, [...odd, { ...tk('doc:e#viewer@user:old') }]);
        expect(r.written).toEqual(odd);
        expect((await allTuples(s, id)).sort()).toEqual([...odd, tk('doc:e#viewer@user:old')].map(str).sort());
        const since: TupleKey[] = [];
        for await (const c of s.changesSince(id, 1)) since.push(c.tuple);
        expect(since).toEqual(odd);
        await rejectsWith(
          s.importTuples(id, [tk('doc:f#viewer@user:new'), { ...tk('doc:e#viewer@user:old'), expires_at: T }]),
          'transaction_conflict',
        );
        expect(await s.revision(id)).toBe(2);
      });

      it('importTuples of a chunk none of which is stored writes each tuple as given and logs it by type', async () => {
        const T = '2030-01-01T00:00:00.000Z';
        const cond = { name: 'c', context: { s: 'tab\there\\', n: [1, { x: null }] } };
        await s.writeTuples(id, writes('doc:0#viewer@user:x'));
        const chunk: TupleKey[] = [
          { object: 'doc:a\\b', relation: 'viewer', user: 'user:\\N' },
          tk('group:g#member@user:\u{1F600}'),
          { object: 'doc:\tc', relation: 'viewer', user: 'user:x\ny' },
          { object: 'doc:d\r', relation: 'viewer', user: 'user:\u0000\u0001"', condition: cond, expires_at: T },
          { ...tk('group:h#member@user:e'), expires_at: T },
          tk('doc:0#viewer@user:y', { name: 'only' }),
        ];
        const grouped = [chunk[0], chunk[2], chunk[3], chunk[5], chunk[1], chunk[4]] as TupleKey[];
        const r = await s.importTuples(id, chunk);
        expect(r.revision).toBe(2);
        expect(r.deleted).toEqual([]);
        expect(r.written).toEqual(grouped);
        const byKey = (a: TupleKey, b: TupleKey): number => (str(a) < str(b) ? -1 : str(a) > str(b) ? 1 : 0);
        const read = (await s.readTuples(id, {}, { pageSize: 100 })).items.map((t) => t.key);
        expect([...read].sort(byKey)).toEqual([tk('doc:0#viewer@user:x'), ...chunk].sort(byKey));
        const changes = (await s.readChanges(id, { pageSize: 100 })).items;
        expect(changes.map((c) => c.tuple_key)).toEqual([tk('doc:0#viewer@user:x'), ...grouped]);
        expect(changes.slice(1).map((c) => [c.operation, c.timestamp])).toEqual(
          grouped.map(() => ['TUPLE_OPERATION_WRITE', r.timestamp]),
        );
        expect((await s.readChanges(id, { pageSize: 100, type: 'group' })).items.map((c) => c.tuple_key)).toEqual([
          chunk[1],
          chunk[4],
        ]);
        const since: TupleKey[] = [];
        for await (const c of s.changesSince(id, 1)) {
          expect([c.revision, c.operation, c.prior]).toEqual([2, 'write', undefined]);
          since.push(c.tuple);
        }
        expect(since).toEqual(grouped);
        expect(await s.firstExpiry(id)).toBe(Date.parse(T));
        // Sent again (a client resuming): nothing changes.
        const again = await s.importTuples(id, [...chunk].reverse());
        expect([again.revision, again.written]).toEqual([2, []]);
        expect(await s.revision(id)).toBe(2);
        // Then chunks with some, none, none stored: each writes exactly its new tuples.
        const next = [
          [chunk[1] as TupleKey, tk('doc:n1#viewer@user:a')],
          [tk('doc:n2#viewer@user:a')],
          [tk('doc:n3#viewer@user:a')],
        ];
        for (const [i, c] of next.entries()) {
          const w = await s.importTuples(id, c);
          expect([w.revision, w.written]).toEqual([3 + i, c.filter((t) => t !== chunk[1])]);
        }
        expect(
          (await s.readChanges(id, { pageSize: 100, type: 'doc' })).items.slice(-3).map((c) => c.tuple_key),
        ).toEqual([tk('doc:n1#viewer@user:a'), tk('doc:n2#viewer@user:a'), tk('doc:n3#viewer@user:a')]);
      });

      it('keeps binary-unsafe strings intact (NUL, non-ASCII, astral)', async () => {
        const odd = ['doc:\u0000a#viewer@user:é', 'doc:a#viewer@user:\u{1F600}', 'doc:a#viewer@user:\uFFFD'];
        await s.writeTuples(id, writes(...odd));
        expect(await allTuples(s, id)).toEqual([
          'doc:\u0000a#viewer@user:é',
          'doc:a#viewer@user:\uFFFD',
          'doc:a#viewer@user:\u{1F600}',
        ]);
        expect(
          (await s.readTuples(id, { object: 'doc:', user: 'user:é' }, { pageSize: 10 })).items.map((t) => str(t.key)),
        ).toEqual([odd[0]]);
      });
    });

    describe('expiring tuples', () => {
      const T = '2030-01-01T00:00:00.000Z';
      const ms = Date.parse(T);
      const expiring = (t: string, at = T, condition?: TupleKey['condition']): TupleKey => ({
        ...tk(t, condition),
        expires_at: at,
      });

      it('stores expires_at with the tuple; Read, scan and the change log show it', async () => {
        await s.writeTuples(id, {
          deletes: [],
          writes: [
            expiring('doc:1#viewer@user:anne'),
            expiring('doc:2#viewer@user:bob', T, { name: 'c', context: { x: 1 } }),
            tk('doc:3#viewer@user:carl'),
          ],
          onDuplicate: 'error',
          onMissing: 'error',
        });
        const read = (await s.readTuples(id, {}, { pageSize: 10 })).items.map((t) => t.key);
        expect(read).toEqual([
          expiring('doc:1#viewer@user:anne'),
          expiring('doc:2#viewer@user:bob', T, { name: 'c', context: { x: 1 } }),
          tk('doc:3#viewer@user:carl'),
        ]);
        expect((await collect((await s.scanTuples(id)).tuples)).map((t) => t.expires_at)).toEqual([T, T, undefined]);
        expect((await s.readChanges(id, { pageSize: 10 })).items.map((c) => c.tuple_key.expires_at)).toEqual([
          T,
          T,
          undefined,
        ]);
        expect(await s.firstExpiry(id)).toBe(ms);
      });

      it('deleteExpired deletes exactly the tuples expired at the instant, as one logged write, earliest first', async () => {
        const later = '2030-01-01T00:00:00.001Z';
        await s.writeTuples(id, {
          deletes: [],
          writes: [
            expiring('doc:1#viewer@user:anne', later),
            expiring('doc:2#viewer@user:bob'),
            tk('doc:3#viewer@user:carl'),
          ],
          onDuplicate: 'error',
          onMissing: 'error',
        });
        const rev = await s.revision(id);
        const none = await s.deleteExpired(id, ms - 1, 10);
        expect([none.deleted.length, none.revision]).toEqual([0, rev]);
        const first = await s.deleteExpired(id, ms, 10);
        expect(first.deleted).toEqual([expiring('doc:2#viewer@user:bob')]);
        expect(first.revision).toBe(rev + 1);
        expect(await s.firstExpiry(id)).toBe(ms + 1);
        const last = (await s.readChanges(id, { pageSize: 10 })).items.at(-1);
        expect([last?.operation, last?.tuple_key]).toEqual([
          'TUPLE_OPERATION_DELETE',
          expiring('doc:2#viewer@user:bob'),
        ]);
        expect((await s.deleteExpired(id, ms + 1, 10)).deleted.map(str)).toEqual(['doc:1#viewer@user:anne']);
        expect(await allTuples(s, id)).toEqual(['doc:3#viewer@user:carl']);
        expect(await s.firstExpiry(id)).toBeUndefined();
      });

      it('a tuple deleted or rewritten without expiry leaves nothing for the sweeper; the limit bounds a batch', async () => {
        await s.writeTuples(id, {
          deletes: [],
          writes: [
            expiring('doc:1#viewer@user:anne'),
            expiring('doc:2#viewer@user:bob'),
            expiring('doc:3#viewer@user:carl'),
          ],
          onDuplicate: 'error',
          onMissing: 'error',
        });
        await s.writeTuples(id, deletes('doc:1#viewer@user:anne'));
        await s.writeTuples(id, writes('doc:1#viewer@user:anne'));
        expect((await s.deleteExpired(id, ms, 1)).deleted.map(str)).toEqual(['doc:2#viewer@user:bob']);
        expect((await s.deleteExpired(id, ms, 1)).deleted.map(str)).toEqual(['doc:3#viewer@user:carl']);
        expect((await s.deleteExpired(id, ms, 1)).deleted).toEqual([]);
        expect(await allTuples(s, id)).toEqual(['doc:1#viewer@user:anne']);
        await rejectsWith(
          s.writeTuples(id, {
            deletes: [],
            writes: [expiring('doc:1#viewer@user:anne')],
            onDuplicate: 'ignore',
            onMissing: 'error',
          }),
          'transaction_conflict',
        );
      });

      it('concurrent sweeps (two storage objects over one datastore where the backend shares one): each expired tuple deleted once, one change each', async () => {
        const keys = Array.from({ length: 30 }, (_, i) => `doc:${i}#viewer@user:anne`);
        await s.writeTuples(id, {
          deletes: [],
          writes: keys.map((k) => expiring(k)),
          onDuplicate: 'error',
          onMissing: 'error',
        });
        const before = await s.revision(id);
        const other = h.second ? await h.second() : s;
        try {
          const sweepers = [s, other, s, other];
          const deleted: string[] = [];
          for (;;) {
            const rounds = await Promise.all(sweepers.map((x) => x.deleteExpired(id, ms, 7)));
            const got = rounds.flatMap((r) => r.deleted.map(str));
            if (got.length === 0) break;
            deleted.push(...got);
          }
          expect(deleted.sort()).toEqual([...keys].sort());
          const log = await collect(s.changesSince(id, before));
          expect(log.map((c) => str(c.tuple)).sort()).toEqual([...keys].sort());
          expect(log.every((c) => c.tuple.expires_at === T)).toBe(true);
          expect(await allTuples(s, id)).toEqual([]);
          expect(await s.firstExpiry(id)).toBeUndefined();
        } finally {
          if (other !== s) await other.close();
        }
      });
    });

    readShapes(
      storageTarget(
        () => s,
        () => id,
      ),
    );

    changeLog(
      () => s,
      () => id,
    );

    describe('checkpoints', () => {
      it('round-trips multi-chunk data, splits chunks over 8 MiB and replaces atomically', async () => {
        expect(await s.readCheckpoint(id)).toBeUndefined();
        const big = new Uint8Array(8 * 1024 * 1024 + 10).map((_, i) => i % 251);
        await s.writeCheckpoint(
          id,
          7,
          (async function* () {
            yield new Uint8Array([1, 2]);
            yield big;
            yield new Uint8Array([3]);
          })(),
        );
        const cp = await s.readCheckpoint(id);
        expect(cp?.revision).toBe(7);
        const chunks = await collect(cp?.chunks ?? []);
        expect(chunks.map((c) => c.byteLength)).toEqual([2, 8 * 1024 * 1024, 10, 1]);
        expect(Buffer.concat(chunks).equals(Buffer.concat([Buffer.from([1, 2]), big, Buffer.from([3])]))).toBe(true);
        await s.writeCheckpoint(id, 9, [new Uint8Array([4]), new Uint8Array([5, 6])]);
        const next = await s.readCheckpoint(id);
        expect(next?.revision).toBe(9);
        expect((await collect(next?.chunks ?? [])).map((c) => [...c])).toEqual([[4], [5, 6]]);
      });

      // Keys the store holds beyond its data without a checkpoint: the head plus one per chunk.
      const MiB8 = 8 * 1024 * 1024;
      const read = async (): Promise<[number | undefined, number[]]> => {
        const cp = await s.readCheckpoint(id);
        return [cp?.revision, (await collect(cp?.chunks ?? [])).map((c) => c.byteLength)];
      };

      it('streams under a new generation: stored chunk by chunk, invisible until the commit', async () => {
        const bare = await s.countStoreKeys(id);
        await s.writeCheckpoint(id, 7, [new Uint8Array([1]), new Uint8Array([2, 3])]);
        expect(await s.countStoreKeys(id)).toBe(bare + 3);
        const w = await s.openCheckpoint(id, 9);
        await w.write(new Uint8Array(MiB8).fill(5)); // a full batch: stored now
        await w.write(new Uint8Array([6])); // buffered until the commit
        expect(await s.countStoreKeys(id)).toBe(bare + 4);
        expect(await read()).toEqual([7, [1, 2]]);
        await w.commit();
        expect(await read()).toEqual([9, [MiB8, 1]]);
        const chunks = await collect((await s.readCheckpoint(id))?.chunks ?? []);
        expect([chunks[0]?.every((b) => b === 5), [...(chunks[1] ?? [])]]).toEqual([true, [6]]);
        expect(await s.countStoreKeys(id)).toBe(bare + 3); // the generation of revision 7 is gone
        await expect(w.write(new Uint8Array([1]))).rejects.toThrow('finished');
      });

      it('abort deletes the chunks stored; an open writer keeps its chunks across another commit', async () => {
        const bare = await s.countStoreKeys(id);
        await s.writeCheckpoint(id, 3, [new Uint8Array([3])]);
        const aborted = await s.openCheckpoint(id, 4);
        await aborted.write(new Uint8Array(MiB8));
        expect(await s.countStoreKeys(id)).toBe(bare + 3);
        await aborted.abort();
        expect(await s.countStoreKeys(id)).toBe(bare + 2);
        expect(await read()).toEqual([3, [1]]);

        const slow = await s.openCheckpoint(id, 5);
        await slow.write(new Uint8Array(MiB8));
        await s.writeCheckpoint(id, 6, [new Uint8Array([6, 6])]);
        expect(await read()).toEqual([6, [2]]);
        expect(await s.countStoreKeys(id)).toBe(bare + 3); // head, the chunk of 6, slow's stored chunk
        await slow.write(new Uint8Array([5]));
        expect(await slow.commit()).toBe(false); // revision 5 never replaces the head of revision 6
        expect(await read()).toEqual([6, [2]]);
        expect(await s.countStoreKeys(id)).toBe(bare + 2); // slow's chunks are gone with it

        const same = await s.openCheckpoint(id, 6);
        await same.write(new Uint8Array([7]));
        expect(await same.commit()).toBe(true); // an equal revision replaces it
        expect(await read()).toEqual([6, [1]]);
        expect(await s.countStoreKeys(id)).toBe(bare + 2);
      });

      it('of two writers, the higher revision stays the head in either commit order', async () => {
        const bare = await s.countStoreKeys(id);
        for (const order of [
          [8, 9],
          [11, 10],
        ]) {
          const [a, b] = await Promise.all(order.map((r) => s.openCheckpoint(id, r)));
          await a?.write(new Uint8Array([order[0] ?? 0]));
          await b?.write(new Uint8Array([order[1] ?? 0, 0]));
          const won = [await a?.commit(), await b?.commit()];
          const high = Math.max(...order);
          expect(won).toEqual(order.map((r, i) => (i === 0 ? true : r === high)));
          expect(await read()).toEqual([high, [high === order[0] ? 1 : 2]]);
          expect(await s.countStoreKeys(id)).toBe(bare + 2);
        }
      });

      it('a writer of a deleted store fails with store_id_not_found and leaves nothing behind', async () => {
        const w = await s.openCheckpoint(id, 1);
        await s.deleteStore(id);
        await rejectsWith(w.write(new Uint8Array(MiB8)), 'store_id_not_found');
        await w.abort();
        await rejectsWith(s.openCheckpoint(id, 2), 'store_id_not_found');
        await s.settled();
        expect(await s.countStoreKeys(id)).toBe(0);
      });
    });
  });
}
