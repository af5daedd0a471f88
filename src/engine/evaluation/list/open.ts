// Wiring of the indexed ListObjects walk (./list-objects.ts) to a confirmer: the inline wasm
// walker (`WalkerSession`), the same walker that answers Check, so a listed object is one Check
// allows. The reference checker confirms only when asked (`confirm: 'reference'`: tests and
// benchmarks); a walk too deep for the walker's scratch fails the request as Check would. Used by
// the ListObjects / StreamedListObjects command (commands/list-objects.ts) and the benchmarks.
//
// Example: openObjectWalk({snapshot, model, contextual: [], resolveDepth: 25, deadline},
//   {type: 'doc', relation: 'viewer', user: 'user:anne'}) yields 'doc:1', 'doc:7', … as confirmed.

import { nextTurn } from '../../../domain/turn.js';
import type { IndexSnapshot } from '../../../index/store-index.js';
import { listObjectsOnIndex, type ListQuery, type ListWalkBase } from './list-objects.js';
import { referenceConfirmer, RequestNodeIds, requestNodes } from './confirm.js';
import { WalkerSession } from '../walker/session.js';

export interface ObjectWalkInput extends ListWalkBase {
  /** 'reference' confirms with the reference checker (benchmarks and tests); default: the walker. */
  readonly confirm?: 'walker' | 'reference' | undefined;
}

/** The lazy, deduplicated walk of confirmed objects (see listObjectsOnIndex for its contract). */
export function openObjectWalk(inp: ObjectWalkInput, q: ListQuery): Generator<string, void> {
  if (inp.confirm !== 'reference') {
    const item = {
      object: requestNodes(q.user, [])[0] ?? q.user,
      relation: q.relation,
      user: q.user,
      contextualTuples: inp.contextual,
      context: inp.context,
    };
    const session = new WalkerSession(
      inp.snapshot,
      inp.model,
      item,
      inp.resolveDepth,
      inp.deadline,
      inp.now ?? Date.now(),
    );
    return listObjectsOnIndex({ ...inp, ids: session.ids, confirmer: session }, q);
  }
  const ids = new RequestNodeIds(inp.snapshot, requestNodes(q.user, inp.contextual));
  return listObjectsOnIndex({ ...inp, ids, confirmer: referenceConfirmer(inp, q.user, ids) }, q);
}

/** Work between two event-loop turns of a streamed walk. */
const SLICE_MS = 5;
/** The most objects one batch of a streamed walk holds (a stalled consumer holds one batch). */
export const STREAM_BATCH = 8192;

/**
 * Streams a walk against its pinned snapshot in batches: the objects confirmed in ≈ 5 ms of work
 * (at most STREAM_BATCH) flow to the consumer as one array, and between batches the event loop
 * runs other requests. The snapshot is pinned for the whole stream and unpinned exactly once when
 * the walk ends or fails, the consumer stops early (`return()`), the signal aborts, or the
 * deadline passes while the consumer is stalled (a timer: after its deadline the stream never
 * reads the snapshot again). Each batch is a new array the consumer may keep.
 */
export async function* streamWalkBatches(
  walk: Generator<string, void>,
  snapshot: IndexSnapshot,
  deadline: number,
  signal?: AbortSignal,
): AsyncGenerator<readonly string[], void> {
  snapshot.pin();
  let pinned = true;
  const unpin = (): void => {
    if (!pinned) return;
    pinned = false;
    snapshot.unpin();
  };
  const timer = setTimeout(unpin, Math.max(0, deadline - Date.now()) + 50);
  timer.unref();
  try {
    for (;;) {
      if (signal?.aborted || !pinned || Date.now() > deadline) return;
      const sliceEnd = performance.now() + SLICE_MS;
      const batch: string[] = [];
      let done = false;
      // The clock is read every 8 objects: a walk settles an object in well under a microsecond.
      while (batch.length < STREAM_BATCH) {
        const next = walk.next();
        if (next.done) {
          done = true;
          break;
        }
        batch.push(next.value);
        if ((batch.length & 7) === 0 && performance.now() > sliceEnd) break;
      }
      if (batch.length > 0) yield batch;
      if (done) return;
      await nextTurn();
    }
  } finally {
    clearTimeout(timer);
    unpin();
    walk.return(undefined);
  }
}

/**
 * `streamWalkBatches` an object at a time; a consumer that comes back after the deadline or the
 * abort gets no more of the batch at hand (the stream ends as it would between batches).
 */
export async function* streamWalk(
  walk: Generator<string, void>,
  snapshot: IndexSnapshot,
  deadline: number,
  signal?: AbortSignal,
): AsyncGenerator<string, void> {
  for await (const batch of streamWalkBatches(walk, snapshot, deadline, signal))
    for (const object of batch) {
      if (signal?.aborted || Date.now() > deadline) return;
      yield object;
    }
}
