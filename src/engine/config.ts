// The one set of engine defaults: the limits of EngineConfig (OpenFGA's where it has one) and the
// bounds of permission indexes. Everything that needs a default reads it here.
import type { EngineConfig, HistoryLimits, PermissionIndexLimits, ShadowLimits } from './contract.js';

/** Every EngineConfig field; the limits are OpenFGA's defaults, `listPageDeadlineMs` latch's own. */
export const DEFAULT_ENGINE_CONFIG: EngineConfig = {
  resolveDepth: 25,
  listObjectsMaxResults: 1000,
  listObjectsDeadlineMs: 3000,
  listUsersMaxResults: 1000,
  listUsersDeadlineMs: 3000,
  listPageDeadlineMs: 30_000,
  checkDeadlineMs: 3000,
  maxBatchCheckItems: 50,
  maxContextualTuples: 100,
  maxTuplesPerWrite: 100,
  workers: 2,
  cacheSize: 100_000,
  pollIntervalMs: 1000,
};

/** Permission index bounds unless `EngineConfig.permissionIndex` overrides one. */
export const DEFAULT_PERMISSION_INDEX_LIMITS: PermissionIndexLimits = {
  ringSize: 100_000,
  maxLagChanges: 100_000,
  maintainSliceMs: 5,
  buildMs: 600_000,
  maxTriples: 50_000_000,
  resolveDepth: 25,
};

/** Bounds of queries at a past revision unless `EngineConfig.history` overrides one. */
export const DEFAULT_HISTORY_LIMITS: HistoryLimits = { maxUndo: 250_000, cachedViews: 4 };

/** Shadow evaluation bounds unless `EngineConfig.shadow` overrides one. */
export const DEFAULT_SHADOW_LIMITS: ShadowLimits = { queueSize: 1024, records: 100 };

/** Milliseconds between two background passes of the expiry sweeper (LatchOptions.expirySweepMs). */
export const DEFAULT_EXPIRY_SWEEP_MS = 1000;

/** Tuples deleted per write by the expiry sweeper. */
export const EXPIRY_SWEEP_BATCH = 500;

/** The preload's backoff after a failed store load: from the first wait, doubling to the last. */
export const PRELOAD_RETRY_MS = { first: 250, max: 5000 } as const;
