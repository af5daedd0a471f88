// The node's revision feed for Watch streams: one storage subscription and one poll for all of
// them, instead of one changelog read per stream per second. A stream registers for its store and
// waits; it is woken by the storage's commit events (this node's writes, other nodes' through the
// datastore's notifications) and by a poll, while any stream watches, that reads every watched
// store's revision in one round trip (`Storage.revisions`) and wakes the streams of a store whose
// revision moved (events may be lost across nodes) or that was deleted. 2,000 idle streams on
// PostgreSQL cost one query per poll, not 2,000.

import type { Storage, StorageEvent } from '../../storage/types.js';

/** How often the watched stores' revisions are read while any stream waits (ms). */
const FEED_POLL_MS = 1000;

/** One stream's registration: `wait` for a change of its store; `deleted` once the store is gone. */
class FeedWaiter {
  #pending = false;
  #wake: (() => void) | undefined;
  deleted = false;

  constructor(
    readonly storeId: string,
    private readonly signal: AbortSignal | undefined,
    readonly close: () => void,
  ) {}

  /** Called by the feed: the store changed (or was deleted). */
  notify(): void {
    this.#pending = true;
    this.#wake?.();
  }

  /** True when woken by a change since the last wait, false on timeout or abort. */
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
}

interface Watched {
  readonly waiters: Set<FeedWaiter>;
  /** The revision last read or heard of; undefined until the first poll. */
  revision: number | undefined;
}

export class WatchFeed {
  readonly #stores = new Map<string, Watched>();
  #unsubscribe: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #polling = false;
  /** Revision reads made by the poll (tests, stats). */
  polls = 0;

  constructor(
    private readonly storage: Storage,
    private readonly pollMs = FEED_POLL_MS,
  ) {}

  /** Registers a stream of `storeId`; its `close()` unregisters it. */
  register(storeId: string, signal: AbortSignal | undefined): FeedWaiter {
    let w = this.#stores.get(storeId);
    if (!w) this.#stores.set(storeId, (w = { waiters: new Set(), revision: undefined }));
    const watched = w;
    const waiter: FeedWaiter = new FeedWaiter(storeId, signal, () => {
      watched.waiters.delete(waiter);
      if (watched.waiters.size === 0 && this.#stores.get(storeId) === watched) this.#stores.delete(storeId);
      if (this.#stores.size === 0) this.#stop();
    });
    watched.waiters.add(waiter);
    this.#start();
    return waiter;
  }

  #start(): void {
    this.#unsubscribe ??= this.storage.subscribe((e) => this.#onEvent(e));
    this.#timer ??= setInterval(() => void this.poll(), this.pollMs).unref();
  }

  #stop(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #onEvent(e: StorageEvent): void {
    const w = this.#stores.get(e.storeId);
    if (!w) return;
    if (e.kind === 'tuples') {
      w.revision = Math.max(w.revision ?? 0, e.revision);
      for (const x of w.waiters) x.notify();
    } else if (e.kind === 'store' && e.deleted) this.#deleted(w);
  }

  #deleted(w: Watched): void {
    for (const x of w.waiters) {
      x.deleted = true;
      x.notify();
    }
  }

  /** Reads every watched store's revision once and wakes the streams of stores that moved or went. */
  async poll(): Promise<void> {
    if (this.#polling || this.#stores.size === 0) return;
    this.#polling = true;
    try {
      const ids = [...this.#stores.keys()];
      this.polls++;
      const revisions = this.storage.revisions
        ? await this.storage.revisions(ids)
        : new Map(await Promise.all(ids.map(async (id) => [id, await this.#one(id)] as const)));
      for (const [id, revision] of revisions) {
        const w = this.#stores.get(id);
        if (!w) continue;
        if (revision === undefined) this.#deleted(w);
        else if (w.revision === undefined || revision > w.revision) {
          // The first read wakes too: a commit whose event was lost may predate it.
          w.revision = revision;
          for (const x of w.waiters) x.notify();
        }
      }
    } catch {
      // The datastore is unreachable: the next poll tries again; streams keep waiting.
    } finally {
      this.#polling = false;
    }
  }

  /** A store's revision, undefined when it is gone (datastores without `revisions`). */
  async #one(id: string): Promise<number | undefined> {
    const [revision, store] = await Promise.all([this.storage.revision(id), this.storage.getStore(id)]);
    return store ? revision : undefined;
  }
}
