// Watch: a store's changelog as a live stream. It reads the changelog page by page from the cursor
// it was given, and once caught up waits for the next commit (the storage's commit events, with a
// poll as the fallback for events lost across nodes) or a heartbeat tick. It is pulled: a slow
// consumer only reads later, so the stream holds at most one page, whatever the backlog.
// Example: after a Write of doc:1#viewer@user:anne, a watch of the store yields
// { kind: 'change', change: {tuple_key: …, operation: 'TUPLE_OPERATION_WRITE', …}, cursor: c1 };
// a new watch from c1 yields nothing until the next commit. Throws store_id_not_found before the
// first event for an unknown store, and mid-stream when the store is deleted.

import type { TupleChange } from '../../domain/types.js';
import { AppError } from '../../errors.js';
import type { Storage, StorageEvent } from '../../storage/types.js';
import type { WatchEvent, WatchInput } from '../contract.js';
import type { EngineParts } from './parts.js';
import { storeOf } from './request-steps.js';

export async function* watch(e: EngineParts, input: WatchInput, signal?: AbortSignal): AsyncIterable<WatchEvent> {
  await storeOf(e, input.storeId);
  yield* watchChanges(e.storage, input, signal);
}

/** Changes per storage read: the most the stream holds at once. */
const PAGE = 100;
/** While caught up, the changelog is read again at least this often (events may be lost across nodes). */
const POLL_MS = 1000;

/**
 * Waits for a commit event of one store, a timeout or an abort, whichever comes first; a commit
 * that happened since the last wait counts at once (no event is missed between two waits).
 */
class CommitWaiter {
  #pending = false;
  #wake: (() => void) | undefined;
  #deleted = false;
  readonly #unsubscribe: () => void;

  constructor(
    storage: Storage,
    storeId: string,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.#unsubscribe = storage.subscribe((e: StorageEvent) => {
      if (e.storeId !== storeId) return;
      if (e.kind === 'store' && e.deleted) this.#deleted = true;
      else if (e.kind !== 'tuples') return;
      this.#pending = true;
      this.#wake?.();
    });
  }

  get deleted(): boolean {
    return this.#deleted;
  }

  /** True when woken by a commit, false on timeout or abort. */
  wait(ms: number): Promise<boolean> {
    if (this.#pending || this.signal?.aborted) return Promise.resolve(this.#consume());
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.signal?.removeEventListener('abort', done);
        this.#wake = undefined;
        resolve(this.#consume());
      };
      const timer = setTimeout(done, ms);
      this.signal?.addEventListener('abort', done, { once: true });
      this.#wake = done;
    });
  }

  #consume(): boolean {
    const was = this.#pending;
    this.#pending = false;
    return was;
  }

  close(): void {
    this.#unsubscribe();
    this.#wake?.();
  }
}

/**
 * The stream of `input`'s changes, then live ones, until `signal` aborts or the store is deleted
 * (then store_id_not_found is thrown). The caller checks that the store exists first.
 */
export async function* watchChanges(
  storage: Storage,
  input: WatchInput,
  signal?: AbortSignal,
): AsyncGenerator<WatchEvent> {
  const waiter = new CommitWaiter(storage, input.storeId, signal);
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
      const woken = untilBeat > 0 ? await waiter.wait(Math.min(untilBeat, POLL_MS)) : false;
      if (waiter.deleted) throw new AppError('store_id_not_found', `store ${input.storeId} was deleted`);
      if (!woken && !signal?.aborted && Date.now() - lastBeat >= input.heartbeatMs) {
        // A deletion on another node may come with no event: each heartbeat looks the store up.
        if (!(await storage.getStore(input.storeId)))
          throw new AppError('store_id_not_found', `store ${input.storeId} was deleted`);
        lastBeat = Date.now();
        yield { kind: 'heartbeat', cursor };
      }
    }
  } finally {
    waiter.close();
  }
}
