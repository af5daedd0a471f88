// Watch: a store's changelog as a live stream. It reads the changelog page by page from the cursor
// it was given, and once caught up waits for the next commit (the node's revision feed,
// ../state/watch-feed.ts: commit events and one shared poll) or a heartbeat tick. It is pulled: a slow
// consumer only reads later, so the stream holds at most one page, whatever the backlog.
// Example: after a Write of doc:1#viewer@user:anne, a watch of the store yields
// { kind: 'change', change: {tuple_key: …, operation: 'TUPLE_OPERATION_WRITE', …}, cursor: c1 };
// a new watch from c1 yields nothing until the next commit.

import type { TupleChange } from '../../domain/types.js';
import { AppError } from '../../errors.js';
import type { Storage } from '../../storage/types.js';
import type { WatchEvent, WatchInput } from '../contract.js';
import type { WatchFeed } from '../state/watch-feed.js';
import type { EngineParts } from './parts.js';
import { storeOf } from './request-steps.js';

export async function* watch(e: EngineParts, input: WatchInput, signal?: AbortSignal): AsyncIterable<WatchEvent> {
  await storeOf(e, input.storeId);
  yield* watchChanges(e.storage, e.watchFeed, input, signal);
}

/** Changes per storage read: the most the stream holds at once. */
const PAGE = 100;

/**
 * The stream of `input`'s changes, then live ones, until `signal` aborts or the store is deleted
 * (then store_id_not_found is thrown). The caller checks that the store exists first.
 */
export async function* watchChanges(
  storage: Storage,
  feed: WatchFeed,
  input: WatchInput,
  signal?: AbortSignal,
): AsyncGenerator<WatchEvent> {
  const waiter = feed.register(input.storeId, signal);
  let cursor = input.after;
  let lastBeat = Date.now();
  try {
    // The stream opens with a heartbeat, so that a transport can answer at once (status and
    // headers) even when nothing has changed yet.
    yield { kind: 'heartbeat', cursor };
    while (!signal?.aborted) {
      const page = await storage.readChanges(input.storeId, {
        pageSize: PAGE,
        type: input.type,
        after: cursor,
        startTime: cursor === undefined ? input.startTime : undefined,
      });
      for (let i = 0; i < page.items.length; i++) {
        const c = page.cursors[i] as string;
        cursor = c;
        yield { kind: 'change', change: page.items[i] as TupleChange, cursor: c };
        if (signal?.aborted) return;
      }
      if (page.items.length > 0) {
        lastBeat = Date.now();
        if (page.items.length === PAGE) continue; // more may be there: read on before waiting
      }
      if (waiter.deleted) throw new AppError('store_id_not_found', `store ${input.storeId} was deleted`);
      const untilBeat = lastBeat + input.heartbeatMs - Date.now();
      // Caught up: the feed wakes the stream when the store changes (../state/watch-feed.ts); the
      // changelog is read again only then, never on a timer of its own.
      const woken = untilBeat > 0 ? await waiter.wait(untilBeat) : false;
      if (waiter.deleted) throw new AppError('store_id_not_found', `store ${input.storeId} was deleted`);
      if (!woken && !signal?.aborted && Date.now() - lastBeat >= input.heartbeatMs) {
        lastBeat = Date.now();
        yield { kind: 'heartbeat', cursor };
      }
    }
  } finally {
    waiter.close();
  }
}
