// Idle Watch streams share the node's revision feed (src/engine/watch-feed.ts): however many
// streams wait on a store and however long they wait, the datastore sees one revision read per
// poll, and the changelog is read again only when the store changed.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WatchFeed } from '../../src/engine/state/watch-feed.js';
import { watchChanges } from '../../src/engine/commands/watch.js';
import type { WatchEvent } from '../../src/engine/contract.js';
import { openMemoryStorage } from '../../src/storage/memory.js';
import type { Storage } from '../../src/storage/types.js';

const N = 200;
let storage: Storage;
let store = '';
const calls = { readChanges: 0, revisions: 0 };

beforeAll(async () => {
  storage = await openMemoryStorage();
  store = (await storage.createStore('feed')).id;
  const readChanges = storage.readChanges.bind(storage);
  const revisions = storage.revisions!.bind(storage);
  storage.readChanges = (...a) => (calls.readChanges++, readChanges(...a));
  storage.revisions = (...a) => (calls.revisions++, revisions(...a));
});
afterAll(() => storage.close());

describe('the revision feed', () => {
  it('attack: 200 idle Watch streams do not each poll the datastore', async () => {
    const feed = new WatchFeed(storage, 10); // a fast poll: many polls in little time
    const abort = new AbortController();
    const streams = Array.from({ length: N }, () =>
      watchChanges(storage, feed, { storeId: store, heartbeatMs: 60_000 }, abort.signal)[Symbol.asyncIterator](),
    );
    for (const s of streams) expect((await s.next()).value).toMatchObject({ kind: 'heartbeat' });
    // Each stream reads the changelog, finds nothing and waits on the feed.
    const waiting = streams.map((s) => s.next());
    await vi.waitFor(() => expect(feed.polls).toBeGreaterThanOrEqual(20), { timeout: 30_000 });
    // One revision read per poll for all streams; the changelog read at most twice per stream
    // (its first read, and once more after the feed's first poll), not once per poll.
    expect(calls.revisions).toBe(feed.polls);
    expect(calls.readChanges).toBeLessThanOrEqual(2 * N);
    const before = calls.readChanges;
    await storage.writeTuples(store, {
      writes: [{ object: 'doc:1', relation: 'viewer', user: 'user:anne' }],
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
    const events = (await Promise.all(waiting)).map((r) => r.value as WatchEvent);
    expect(events.every((e) => e.kind === 'change')).toBe(true);
    expect(calls.readChanges - before).toBeLessThanOrEqual(N);
    abort.abort();
    await Promise.all(streams.map((s) => s.return(undefined)));
  });
});
