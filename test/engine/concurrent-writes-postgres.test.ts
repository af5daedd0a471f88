// Several writes of one store in flight on one node over PostgreSQL (Storage.ordersWrites): the
// node does not queue them, the database's row lock orders them, and every acknowledged write is
// visible to a MINIMIZE_LATENCY query on the same node the moment it is acknowledged, with the
// store's revisions contiguous and the index equal to the tuples in the database.
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import { LatchService } from '../../src/engine/service.js';
import { openPostgresStorage } from '../../src/storage/postgres/index.js';
import type { Storage, TupleWrite, WriteResult } from '../../src/storage/types.js';
import { databasePerFile } from '../support/postgres.js';
import { checkOf, config, MODEL, tk } from '../support/pg-node.js';

const pgdb = databasePerFile();
const run = pgdb.run;
const WRITES = 120;

/** Counts the storage writes in flight at once (the most seen). */
function countingWrites(storage: Storage): { max: () => number } {
  let now = 0;
  let max = 0;
  const write = storage.writeTuples.bind(storage);
  storage.writeTuples = async (storeId: string, w: TupleWrite): Promise<WriteResult> => {
    max = Math.max(max, ++now);
    try {
      return await write(storeId, w);
    } finally {
      now--;
    }
  };
  return { max: () => max };
}

describe.runIf(run)('concurrent writes of one store on PostgreSQL', () => {
  it('are not queued by the node, and each is visible on the node when acknowledged', async () => {
    const storage = await openPostgresStorage({ url: pgdb.url, poolSize: 8 });
    expect(storage.ordersWrites).toBe(true);
    const inFlight = countingWrites(storage);
    const node = new LatchService(storage, config, () => undefined);
    try {
      const store = (await node.createStore('concurrent')).id;
      await node.writeModel(store, MODEL);
      const revisions = await Promise.all(
        Array.from({ length: WRITES }, async (_, i) => {
          const key = tk(`doc:${i}`, 'user:anne');
          const { revision } = await node.write({
            storeId: store,
            writes: [key],
            deletes: [],
            onDuplicate: 'error',
            onMissing: 'error',
          });
          // Read-your-write on this node, with no wait asked for.
          expect((await node.check(checkOf(store, key))).allowed).toBe(true);
          return revision;
        }),
      );
      expect(inFlight.max()).toBeGreaterThan(1);
      expect([...revisions].sort((x, y) => x - y)).toEqual(Array.from({ length: WRITES }, (_, i) => i + 1));
      expect(await storage.revision(store)).toBe(WRITES);
      for (let i = 0; i < WRITES; i++)
        expect((await node.check(checkOf(store, tk(`doc:${i}`, 'user:anne')))).allowed).toBe(true);
    } finally {
      await node.close();
    }
  });

  it('the same tuple written twice at once: one write wins, the other is refused, nothing half-written', async () => {
    const storage = await openPostgresStorage({ url: pgdb.url, poolSize: 4 });
    const node = new LatchService(storage, config, () => undefined);
    try {
      const store = (await node.createStore('duplicate')).id;
      await node.writeModel(store, MODEL);
      const both = await Promise.allSettled(
        ['user:anne', 'user:anne'].map((user, i) =>
          node.write({
            storeId: store,
            writes: [tk('doc:same', user), tk(`doc:own-${i}`, user)],
            deletes: [],
            onDuplicate: 'error',
            onMissing: 'error',
          }),
        ),
      );
      const won = both.filter((r) => r.status === 'fulfilled');
      const lost = both.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(lost[0]?.reason).toBeInstanceOf(AppError);
      expect((lost[0]?.reason as AppError).code).toBe('write_failed_due_to_invalid_input');
      expect(await storage.revision(store)).toBe(1);
      const own = await Promise.all(
        [0, 1].map(async (i) => (await node.check(checkOf(store, tk(`doc:own-${i}`, 'user:anne')))).allowed),
      );
      expect(own.filter(Boolean)).toHaveLength(1);
    } finally {
      await node.close();
    }
  });
});
