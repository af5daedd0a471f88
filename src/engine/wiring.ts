// The composition root: builds the engine's parts once (state, evaluators, permission indexes),
// ties their notifications together, starts the preload and the expiry sweeper, and closes it all
// in dependency order. The facade (./service.ts) holds what this returns; commands receive
// `parts`.

import type { ThreadBoard } from '../index/thread-board.js';
import type { Storage, PostgresOpenOptions } from '../storage/types.js';
import { logger } from '../log.js';
import type { EngineParts } from './commands/parts.js';
import {
  DEFAULT_EXPIRY_SWEEP_MS,
  DEFAULT_HISTORY_LIMITS,
  DEFAULT_PERMISSION_INDEX_LIMITS,
  DEFAULT_SHADOW_LIMITS,
} from './config.js';
import { evaluateShadow } from './commands/shadow-evaluation.js';
import type { EngineConfig, EngineLog } from './contract.js';
import { createWalkerChecker } from './evaluation/walker/checker.js';
import { PermissionIndexes } from './permission-index/manager.js';
import { ExpirySweeper } from './state/expiry-sweeper.js';
import { RevisionFeed } from './state/revision-feed.js';
import { WatchFeed } from './state/watch-feed.js';
import { ListingCache } from './state/listing-cache.js';
import { USER_LISTS } from './commands/read.js';
import { ModelCache } from './state/model-cache.js';
import { PastViews } from './state/past-views.js';
import { Preload } from './state/preload.js';
import { ResultCache } from './state/result-cache.js';
import { StoreIndexes } from './state/store-indexes.js';
import { StoreWriter } from './state/store-writer.js';
import { ShadowQueue } from './state/shadow-queue.js';
import { ShadowRecords } from './state/shadow-records.js';
import { ShadowSettings } from './state/shadow-settings.js';
import { PriorityLane } from '../domain/turn.js';

export interface LatchOptions {
  /** LevelDB directory; omitted → in-memory store. */
  readonly path?: string | undefined;
  /** PostgreSQL instead (docs/configuration.md); takes precedence over `path`. */
  readonly postgres?: PostgresOpenOptions | undefined;
  /** An already opened storage (the service closes it); takes precedence over both. */
  readonly storage?: Storage | undefined;
  readonly config?: Partial<EngineConfig> | undefined;
  /** Where failures no caller waits for are reported (background checkpoints); default: the process logger. */
  readonly log?: EngineLog | undefined;
  /**
   * The clock of tuple expiry in ms since the epoch (default `Date.now`): what "now" is for
   * `expires_at` on writes, on every query path and for the sweeper. Tests inject one.
   */
  readonly clock?: (() => number) | undefined;
  /** Milliseconds between two background passes of the expiry sweeper (default 1,000; 0: only `sweepExpired()`). */
  readonly expirySweepMs?: number | undefined;
  /** Load every store's index at open (default true); false under placement (`holdStore` per store). */
  readonly preload?: boolean | undefined;
  /**
   * The HTTP threads' board (`--http-threads` above 1): each loaded store is published on it and
   * the threads answer Check from it. Open it after `shareNodeTables(true)`.
   */
  readonly board?: ThreadBoard | undefined;
}

/** The wired engine: the parts commands use, and the background work the facade starts and stops. */
export interface Engine {
  readonly parts: EngineParts;
  readonly preload: Preload;
  readonly sweeper: ExpirySweeper;
}

/** Without a configured log: the process logger (src/log.ts). */
const processLog: EngineLog = (level, msg, fields) => logger.log(level, msg, fields);

export function wireEngine(
  storage: Storage,
  config: EngineConfig,
  log: EngineLog | undefined,
  options: Pick<LatchOptions, 'clock' | 'expirySweepMs' | 'preload' | 'board'>,
): Engine {
  const clock = options.clock ?? Date.now;
  const engineLog = log ?? processLog;
  const models = new ModelCache(storage);
  const board = options.board;
  // Import chunks' planning goes before their validation and background merges (PriorityLane).
  const importLane = new PriorityLane();
  const indexes = new StoreIndexes(storage, { log, board, index: { backgroundTurn: importLane.turn } });
  const feed = new RevisionFeed(storage, indexes, models, { pollIntervalMs: config.pollIntervalMs, log: engineLog });
  const permissionIndexes = new PermissionIndexes(
    storage,
    indexes,
    models,
    { ...DEFAULT_PERMISSION_INDEX_LIMITS, resolveDepth: config.resolveDepth, ...config.permissionIndex },
    engineLog,
  );
  feed.observer = permissionIndexes;
  indexes.onLoaded = (storeId, index) => feed.loaded(storeId, index);
  const writer = new StoreWriter(storage, indexes, feed, importLane);
  const shadowLimits = { ...DEFAULT_SHADOW_LIMITS, ...config.shadow };
  const shadowSettings = new ShadowSettings(storage, config.pollIntervalMs, engineLog);
  const shadowRecords = new ShadowRecords(shadowLimits.records);
  if (board) {
    // HTTP threads answer a store's Checks from the board unless the main thread must see them:
    // a shadow model samples them (its queue is here); "latest" moves are announced to them.
    models.onLatestMoved = (storeId) => board.modelsMoved(storeId);
    shadowSettings.onChange = (storeId, s) => board.forward(storeId, s !== undefined && s.sampling > 0);
    board.onAttach = (storeId) => void shadowSettings.reload(storeId);
  }
  const parts: EngineParts = {
    storage,
    config,
    clock,
    models,
    indexes,
    feed,
    watchFeed: new WatchFeed(storage),
    writer,
    results: new ResultCache(config.cacheSize),
    listings: new ListingCache(),
    userLists: new ListingCache(USER_LISTS),
    checker: createWalkerChecker({ workers: config.workers, resolveDepth: config.resolveDepth, now: clock }),
    permissionIndexes,
    pastViews: new PastViews(storage, indexes, feed, { ...DEFAULT_HISTORY_LIMITS, ...config.history }),
    shadowSettings,
    shadow: new ShadowQueue(shadowSettings, shadowRecords, shadowLimits.queueSize),
    shadowRecords,
    board,
  };
  parts.shadow.runner = (job) => evaluateShadow(parts, job);
  const preload = new Preload(
    storage,
    indexes,
    startPermissionIndexes(permissionIndexes, engineLog),
    engineLog,
    options.preload !== false,
  );
  const sweeper = new ExpirySweeper({
    storage,
    indexes,
    writer,
    now: clock,
    onError: (err) => engineLog('error', 'expiry sweep failed', { error: String(err) }),
  });
  sweeper.start(options.expirySweepMs ?? DEFAULT_EXPIRY_SWEEP_MS);
  return { parts, preload, sweeper };
}

/** After a store's index is loaded: its permission indexes start (a failure is logged, not thrown). */
function startPermissionIndexes(pis: PermissionIndexes, log: EngineLog): (storeId: string) => Promise<void> {
  return (storeId) =>
    pis
      .loadStore(storeId)
      .catch((err: unknown) =>
        log('warn', 'permission indexes not started', { store_id: storeId, cause: String(err) }),
      );
}

/** Stops the background work, lets queued writes and catch-ups settle, then closes each part and the storage. */
export async function closeEngine({ parts: e, preload, sweeper }: Engine): Promise<void> {
  await sweeper.stop();
  e.shadowSettings.close();
  e.shadow.close();
  await preload.close();
  await e.writer.settled();
  e.feed.close();
  await e.feed.settled();
  await e.permissionIndexes.close();
  await e.checker.close();
  await e.indexes.close();
  await e.storage.close();
}
