// ReadExpansions as a pulled stream of one permission index: without `from`, the whole current
// set (INSERTs at the index's revision) and a freshness event that marks where it ends; then the
// ring's events after that point as they come, a freshness event as soon as the events of a
// revision the index has applied are all delivered (and when the index moves on without events),
// heartbeats while nothing happens, and a `closed` event with the reason when the stream ends (index or store deleted, index failed, stream lifetime reached, server stopping).
// A consumer that falls behind the ring is closed too: it resumes with `from` or restarts.

import { AppError } from '../../errors.js';
import type { PermissionIndex } from './permission-index.js';
import type { EventPoint, ExpansionEvent, ExpansionStreamEvent, ExpansionsInput } from '../contract.js';

/** Events taken from the ring at once: the most the stream holds. */
const PAGE = 256;

/** Wakes on the index's next change, a timeout or an abort. */
function changed(pi: PermissionIndex, ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (woken: boolean): void => {
      clearTimeout(timer);
      off();
      signal?.removeEventListener('abort', onAbort);
      resolve(woken);
    };
    const onAbort = (): void => done(false);
    const timer = setTimeout(() => done(false), ms);
    const off = pi.listen(() => done(true));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export const tooOld = (): AppError =>
  new AppError(
    'validation_error',
    'invalid from: the index no longer holds the events after it; restart without from to receive the full current set',
  );

/**
 * The stream. Throws (before the first event) 400 for a model mismatch or a `from` older than
 * the ring. `stillDefined` is asked at each heartbeat (a deletion on another node).
 */
export async function* expansionStream(
  pi: PermissionIndex,
  input: ExpansionsInput,
  stillDefined: () => Promise<boolean>,
  signal?: AbortSignal,
): AsyncGenerator<ExpansionStreamEvent> {
  if (input.modelId !== pi.record.modelId) {
    throw new AppError(
      'validation_error',
      `the permission index ${pi.record.id} is assigned to authorization model ${pi.record.modelId}, not ${input.modelId}; create a new index for another model`,
    );
  }
  if (input.from && pi.status === 'ACTIVE' && pi.eventsAfter(input.from, 0) === undefined) throw tooOld();
  const endAt = Date.now() + input.lifetimeMs;
  const closed = (): string | undefined => {
    if (pi.deleted) return 'index deleted';
    if (pi.status === 'FAILED') return `index failed: ${pi.reason ?? ''}`;
    if (signal?.aborted) return 'server stopping';
    if (Date.now() >= endAt) return 'stream lifetime reached; reconnect with from';
    return undefined;
  };
  yield { kind: 'heartbeat' };
  // The initial set is taken between two revisions: never while one is half applied.
  while ((pi.status === 'BUILDING' || (!input.from && pi.applying !== undefined)) && closed() === undefined) {
    if (!(await changed(pi, input.heartbeatMs, signal))) yield { kind: 'heartbeat' };
  }
  let at: EventPoint;
  if (input.from) at = input.from;
  else if (closed() === undefined) {
    // The set at this revision, read from the live maps (no per-stream copy: a stream that stops
    // reading holds an iterator, not the set).
    const snapshot = pi.openSnapshot();
    const reachedAt = pi.freshness;
    at = { revision: snapshot.revision, position: Infinity };
    try {
      let i = 0;
      for (const [user, relation, object] of snapshot.triples()) {
        yield {
          kind: 'expansion',
          event: { revision: at.revision, position: i, operation: 'INSERT', user, relation, object },
          snapshot: i++,
        };
        if (closed() !== undefined) break;
      }
    } finally {
      snapshot.close();
    }
    yield { kind: 'freshness', revision: at.revision, at: reachedAt };
  } else at = { revision: 0, position: Infinity };
  let told = at.revision;
  for (;;) {
    const reason = closed();
    if (reason !== undefined) {
      yield { kind: 'closed', reason };
      return;
    }
    // One event past the page: it tells whether the page's last revision is complete.
    const events = pi.eventsAfter(at, PAGE + 1);
    if (events === undefined) {
      yield { kind: 'closed', reason: 'the consumer fell behind the events the index keeps; restart without from' };
      return;
    }
    const n = Math.min(events.length, PAGE);
    for (let i = 0; i < n; i++) {
      const event = events[i] as ExpansionEvent;
      yield { kind: 'expansion', event };
      at = event;
      // A revision's last event delivered: its freshness at once, not after the whole backlog.
      const next = i + 1 < events.length ? (events[i + 1] as ExpansionEvent).revision : pi.revision + 1;
      if (next > event.revision && event.revision <= pi.revision && event.revision > told) {
        told = event.revision;
        at = { revision: event.revision, position: Infinity };
        yield { kind: 'freshness', revision: event.revision, at: pi.appliedAt(event.revision) };
      }
    }
    if (events.length > PAGE) continue;
    if (pi.revision > told && pi.revision >= at.revision) {
      at = { revision: pi.revision, position: Infinity };
      told = pi.revision;
      yield { kind: 'freshness', revision: pi.revision, at: pi.freshness };
      continue;
    }
    if (
      !(await changed(pi, Math.min(input.heartbeatMs, Math.max(1, endAt - Date.now())), signal)) &&
      closed() === undefined
    ) {
      if (!(await stillDefined())) continue;
      yield { kind: 'heartbeat' };
    }
  }
}
