// The preload: loads every store's index when the engine opens. A failure (the datastore
// unreachable, a pool exhausted) never rejects: it is logged and retried with backoff
// (config.ts PRELOAD_RETRY_MS) until it succeeds or the engine closes; meanwhile queries on a
// store not loaded yet try the load themselves and get its error (503 `unavailable` when the
// datastore is down), and readiness waits. Under placement (`preload: false`) nothing is
// preloaded: the placement node holds and releases stores one by one (Latch.holdStore).

import { AppError } from '../../errors.js';
import type { Storage } from '../../storage/types.js';
import { PRELOAD_RETRY_MS } from '../config.js';
import type { EngineLog } from '../contract.js';
import type { StoreIndexes } from './store-indexes.js';

export class Preload {
  /** Resolves when every store's index is loaded, or at close. */
  readonly done: Promise<void>;
  private closing = false;
  /** Ends the backoff wait at once (close). */
  private wake: (() => void) | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly indexes: StoreIndexes,
    /** Called once a store's index is loaded (starts its permission indexes). */
    private readonly loaded: (storeId: string) => Promise<void>,
    private readonly log: EngineLog,
    /** False: nothing is preloaded (placement decides which stores this node loads). */
    all = true,
  ) {
    this.done = all ? this.run() : Promise.resolve();
  }

  /** Stops retrying; `done` resolves soon after. */
  async close(): Promise<void> {
    this.closing = true;
    this.wake?.();
    await this.done.catch(() => undefined);
  }

  private async run(): Promise<void> {
    let after: string | undefined;
    do {
      const page = await this.retrying('store list', () => this.storage.listStores({ pageSize: 100, after }));
      if (!page) return;
      for (const s of page.items) {
        const loaded = await this.retrying(`store ${s.id}`, () =>
          this.indexes.get(s.id).catch((err: unknown) => {
            if (err instanceof AppError && err.code === 'store_id_not_found') return undefined; // deleted meanwhile
            throw err;
          }),
        );
        if (loaded === null) return;
        if (loaded !== undefined) await this.loaded(s.id);
      }
      after = page.next;
    } while (after);
  }

  /** `fn`'s result, retried with backoff after each failure; null once the engine closes. */
  private async retrying<T>(what: string, fn: () => Promise<T>): Promise<T | null> {
    for (let wait: number = PRELOAD_RETRY_MS.first; ; wait = Math.min(PRELOAD_RETRY_MS.max, wait * 2)) {
      if (this.closing) return null;
      try {
        return await fn();
      } catch (err) {
        if (this.closing) return null;
        this.log('warn', 'index load failed; retrying', {
          what,
          retry_in_ms: wait,
          cause: err instanceof Error ? err.message : String(err),
        });
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wake = undefined;
      }
    }
  }
}
