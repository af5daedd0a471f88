// Index checkpoints at load (src/engine/indexes.ts): a load that had to scan the tuples or replay a
// long change-log tail writes one before it serves, so the next start reads the image instead.
import { describe, expect, it } from 'vitest';
import { Indexes } from '../../src/engine/indexes.js';
import { openStorage } from '../../src/storage/index.js';
import type { TupleKey } from '../../src/domain/types.js';

const viewer = (i: number): TupleKey => ({ user: `user:u${i}`, relation: 'viewer', object: `doc:d${i % 50}` });
const plain = { onDuplicate: 'error', onMissing: 'error', deletes: [] } as const;

describe('checkpoints written at load', () => {
  it('a scan is followed by a checkpoint; the next load starts from it and writes none', async () => {
    const storage = await openStorage({});
    const store = await storage.createStore('s');
    await storage.writeTuples(store.id, { ...plain, writes: Array.from({ length: 100 }, (_, i) => viewer(i)) });

    const first = new Indexes(storage);
    expect((await first.get(store.id)).loaded).toEqual({ fromCheckpoint: false, tailChanges: 0 });
    expect(first.checkpoints).toEqual({ written: 1, failed: 0 });
    expect((await storage.readCheckpoint(store.id))?.revision).toBe(1);

    await storage.writeTuples(store.id, { ...plain, writes: [viewer(100)] });
    const second = new Indexes(storage);
    expect((await second.get(store.id)).loaded).toEqual({ fromCheckpoint: true, tailChanges: 1 });
    expect(second.checkpoints).toEqual({ written: 0, failed: 0 });
    await first.close();
    await second.close();
    await storage.close();
  });

  it('an empty store is not checkpointed at load; a long tail is', async () => {
    const storage = await openStorage({});
    const store = await storage.createStore('s');
    const empty = new Indexes(storage);
    await empty.get(store.id);
    expect(empty.checkpoints.written).toBe(0);

    // 10,000 logged changes after the image (LONG_TAIL): the load replays them, then checkpoints.
    await storage.writeTuples(store.id, { ...plain, writes: [viewer(0)] });
    await new Indexes(storage).get(store.id); // scan → image at revision 2
    for (let b = 0; b < 100; b++) {
      await storage.writeTuples(store.id, { ...plain, writes: Array.from({ length: 100 }, (_, i) => ({ user: `user:b${b}x${i}`, relation: 'viewer', object: 'doc:t' })) });
    }
    const replay = new Indexes(storage);
    expect((await replay.get(store.id)).loaded).toEqual({ fromCheckpoint: true, tailChanges: 10_000 });
    expect(replay.checkpoints.written).toBe(1);
    expect((await new Indexes(storage).get(store.id)).loaded).toEqual({ fromCheckpoint: true, tailChanges: 0 });
    await storage.close();
  });
});
