// Index checkpoints written in the background (src/engine/indexes.ts): after a load that had to
// scan the tuples, after CHECKPOINT_EVERY written changes, and never twice at once for a store.
// A checkpoint taken while writes continue holds exactly the index of its revision.
import { describe, expect, it } from 'vitest';
import { CHECKPOINT_EVERY, Indexes } from '../../src/engine/indexes.js';
import { openStorage } from '../../src/storage/index.js';
import type { TupleKey } from '../../src/domain/types.js';

const viewer = (i: number): TupleKey => ({ user: `user:u${i}`, relation: 'viewer', object: `doc:d${i % 50}` });
const plain = { onDuplicate: 'error', onMissing: 'error' } as const;

describe('background checkpoints', () => {
  it('a load from a scan is followed by a checkpoint; the next load starts from it', async () => {
    const storage = await openStorage({});
    const store = await storage.createStore('s');
    await storage.writeTuples(store.id, { ...plain, deletes: [], writes: Array.from({ length: 100 }, (_, i) => viewer(i)) });

    const first = new Indexes(storage);
    const a = await first.get(store.id);
    expect(a.loaded).toEqual({ fromCheckpoint: false, tailChanges: 0 });
    await first.idle();
    expect(first.checkpoints).toEqual({ written: 1, failed: 0 });
    const cp = await storage.readCheckpoint(store.id);
    expect(cp?.revision).toBe(1);

    const second = new Indexes(storage);
    const b = await second.get(store.id);
    expect(b.loaded).toEqual({ fromCheckpoint: true, tailChanges: 0 });
    await second.idle();
    expect(second.checkpoints).toEqual({ written: 0, failed: 0 });
    await first.close();
    await second.close();
    await storage.close();
  });

  it('CHECKPOINT_EVERY written changes trigger one; writes racing it leave the image at its revision', async () => {
    const storage = await openStorage({});
    const store = await storage.createStore('s');
    const indexes = new Indexes(storage);
    const index = await indexes.get(store.id);
    await indexes.idle(); // the empty store's first checkpoint
    const before = indexes.checkpoints.written;

    const res = await storage.writeTuples(store.id, { ...plain, deletes: [], writes: [viewer(1)] });
    index.apply(res);
    indexes.noteChanges(store.id, CHECKPOINT_EVERY - 1);
    indexes.noteChanges(store.id, 1);
    indexes.noteChanges(store.id, CHECKPOINT_EVERY); // already running: not a second one
    // A write lands while the checkpoint is under way; it belongs to the log tail, not the image.
    const later = await storage.writeTuples(store.id, { ...plain, deletes: [], writes: [viewer(2)] });
    index.apply(later);
    await indexes.idle();
    expect(indexes.checkpoints.written).toBe(before + 1);

    const reloaded = await new Indexes(storage).get(store.id);
    expect(reloaded.loaded.fromCheckpoint).toBe(true);
    const cp = await storage.readCheckpoint(store.id);
    // The image holds every change up to its revision and the tail holds exactly the rest.
    expect(cp?.revision).toBeGreaterThanOrEqual(res.revision);
    expect(reloaded.loaded.tailChanges).toBe(later.revision - (cp?.revision ?? 0));
    await indexes.close();
    await storage.close();
  });
});
