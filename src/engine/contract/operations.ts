// The operator side of the engine's contract (src/engine/contract.ts): the limits it runs with,
// the figures `stats()` reports, and where it logs what no caller waits for.

import type { PermissionIndexLimits } from './permission-indexes.js';
import type { ShadowLimits, ShadowStats } from './shadow.js';

/** A loaded store as `Latch.heldStores` reports it. */
export interface HeldStore {
  readonly storeId: string;
  readonly tuples: number;
  readonly bytes: number;
}

/** Engine limits; every field has the OpenFGA default. */
export interface EngineConfig {
  readonly resolveDepth: number; // 25
  readonly listObjectsMaxResults: number; // 1000
  readonly listObjectsDeadlineMs: number; // 3000
  readonly listUsersMaxResults: number; // 1000
  readonly listUsersDeadlineMs: number; // 3000
  /** A paged (complete) ListObjects / ListUsers must compute its whole answer within this; else 422 (docs/reference/decisions.md D8). */
  readonly listPageDeadlineMs: number; // 30000 (latch extension)
  readonly checkDeadlineMs: number; // 3000
  readonly maxBatchCheckItems: number; // 50
  readonly maxContextualTuples: number; // 100
  readonly maxTuplesPerWrite: number; // 100
  readonly workers: number; // 0 = inline only
  readonly cacheSize: number; // result cache entries, 0 = off
  readonly pollIntervalMs: number; // replication poll of the committed revisions, 0 = events only
  /** Permission index bounds (ring of events, build time, triples, lag); defaults in config.ts. */
  readonly permissionIndex?: Partial<PermissionIndexLimits> | undefined;
  /** Bounds of queries at a past revision (docs/audit.md); defaults in config.ts. */
  readonly history?: Partial<HistoryLimits> | undefined;
  /** Bounds of shadow evaluation (queue, records per store); defaults in config.ts. */
  readonly shadow?: Partial<ShadowLimits> | undefined;
}

/** Bounds of queries at a past revision (docs/audit.md). */
export interface HistoryLimits {
  /** Changes one past view may undo (its memory: ≈ 200 B per change while it is built). */
  readonly maxUndo: number;
  /** Past views kept for reuse (each holds its overlay image and the base it was built over). */
  readonly cachedViews: number;
}

// ---- Operator figures (Latch.stats) ----

/** Replication figures for `stats()`: revisions applied from the log, catch-ups that failed, polls. */
export interface ReplicationStats {
  revisionsApplied: number;
  /** Of those, the revisions applied from the changes their commit event carried (no log read). */
  revisionsCarried: number;
  /**
   * Commit event received → that revision applied to the index from the log (commits of other
   * nodes): this node's own share of the replication lag, free of network and client time.
   */
  readonly applyLag: Histogram;
  catchUpFailures: number;
  polls: number;
  pollFailures: number;
}

/** The pool's scheduling figures, as Piscina reports them (ms, since start). */
export interface PoolStats {
  readonly workers: number;
  /** Tasks waiting for a worker now. */
  readonly queueSize: number;
  readonly completed: number;
  /** Share of the pool's capacity spent running tasks since it started, 0 … 1. */
  readonly utilization: number;
  readonly waitMs: { readonly mean: number; readonly p50: number; readonly p99: number; readonly max: number };
}

/** A fixed-bucket histogram: `counts[i]` observations in (bounds[i-1], bounds[i]], the last slot +Inf. */
export interface Histogram {
  readonly bounds: readonly number[];
  readonly counts: Float64Array;
  readonly sumMs: number;
  readonly count: number;
  /** The latest observation. */
  readonly last: number;
}

export interface EngineStats {
  /** The MINIMIZE_LATENCY Check result cache. */
  readonly cache: {
    readonly hits: number;
    readonly misses: number;
    readonly entries: number;
    readonly capacity: number;
  };
  /** Undefined until the first batch large enough for the pool started it. */
  readonly pool: PoolStats | undefined;
  readonly indexes: {
    readonly stores: number;
    /** Stored tuples across loaded indexes (base entries plus overlay adds, minus overlay deletes). */
    readonly tuples: number;
    /** Shared-memory bytes of the loaded indexes' bases. */
    readonly bytes: number;
    /** Time each store index took to load (checkpoint + change-log tail, or full scan). */
    readonly loads: Histogram;
    /** Index checkpoints written and failed since start (at load, in the background, at close). */
    readonly checkpoints: { readonly written: number; readonly failed: number };
  };
  /** Following the datastore (state/revision-feed.ts): revisions applied from the change log, failures, polls. */
  readonly replication: Readonly<ReplicationStats>;
  /** Bytes allocated in the walker's shared memory (indexes, overlays, scratch). */
  readonly sharedMemoryBytes: number;
  /** Storage commit latency of Write (the tuple batch, change log and revision). */
  readonly writes: Histogram;
  /** Resolution depth of the Checks answered inline (values in hops, not ms). */
  readonly checkDepth: Histogram;
  /** Shadow evaluation on this node (docs/changing-models.md), every store together. */
  readonly shadow: ShadowStats;
  /**
   * Permission index maintenance (docs/permission-indexes.md): event-loop time spent maintaining
   * (ms), the slices it ran in and the longest one (ms), since start.
   */
  readonly permissionIndexes: { readonly busyMs: number; readonly slices: number; readonly longestMs: number };
}

/** Where the engine reports what no caller is waiting for (a failed background checkpoint). */
export type EngineLog = (level: 'warn' | 'error', msg: string, fields: Readonly<Record<string, unknown>>) => void;
