// The parts every command works with, built once by the wiring (../wiring.ts): the datastore,
// the state of this node (per-store indexes, the revision feed, the store writer, the caches), the
// evaluators and the permission indexes. Commands receive them as one read-only record.

import type { ThreadBoard } from '../../index/thread-board.js';
import type { Storage } from '../../storage/types.js';
import type { EngineConfig } from '../contract.js';
import type { WalkerChecker } from '../evaluation/walker/checker.js';
import type { PermissionIndexes } from '../permission-index/manager.js';
import type { RevisionFeed } from '../state/revision-feed.js';
import type { ListingCache } from '../state/listing-cache.js';
import type { ModelCache } from '../state/model-cache.js';
import type { PastViews } from '../state/past-views.js';
import type { ResultCache } from '../state/result-cache.js';
import type { ShadowQueue } from '../state/shadow-queue.js';
import type { ShadowRecords } from '../state/shadow-records.js';
import type { ShadowSettings } from '../state/shadow-settings.js';
import type { StoreIndexes } from '../state/store-indexes.js';
import type { StoreWriter } from '../state/store-writer.js';
import type { WatchFeed } from '../state/watch-feed.js';

export interface EngineParts {
  readonly storage: Storage;
  /** The HTTP threads' board, when threads answer Check from the shared index (`threadModel`). */
  readonly board?: ThreadBoard | undefined;
  readonly config: EngineConfig;
  /** The clock of tuple expiry (ms since the epoch); tests inject one. */
  readonly clock: () => number;
  readonly models: ModelCache;
  readonly indexes: StoreIndexes;
  readonly feed: RevisionFeed;
  /** Wakes idle Watch streams: one storage subscription and one poll for all of them. */
  readonly watchFeed: WatchFeed;
  /** The one write path of tuples. */
  readonly writer: StoreWriter;
  /** The MINIMIZE_LATENCY Check result cache. */
  readonly results: ResultCache;
  /** Complete answers of paged listings. */
  readonly listings: ListingCache;
  /** The sorted positions of the last users paged through by Read by user (./read.ts). */
  readonly userLists: ListingCache;
  /** The wasm walker, inline and on the worker pool. */
  readonly checker: WalkerChecker;
  readonly permissionIndexes: PermissionIndexes;
  /** The cached views of past revisions, for queries with `at` (docs/audit.md). */
  readonly pastViews: PastViews;
  /** Shadow evaluation (docs/changing-models.md): each store's setting on this node, the sampled requests' queue, the figures. */
  readonly shadowSettings: ShadowSettings;
  readonly shadow: ShadowQueue;
  readonly shadowRecords: ShadowRecords;
}
