// Permission indexes in the engine's contract (src/engine/contract.ts, docs/permission-indexes.md):
// what GetIndex describes, the limits, and the events of ReadExpansions, as plain data.

import type { IndexedRelation, PermissionIndexRecord } from '../../domain/types.js';

/** A permission index as GetIndex describes it (docs/permission-indexes.md). */
export interface PermissionIndexInfo {
  readonly record: PermissionIndexRecord;
  readonly status: PermissionIndexStatus;
  /** Why the index FAILED. */
  readonly reason?: string | undefined;
  /** The store revision the index reflects, and when it reached it (ms). */
  readonly revision: number;
  readonly freshness: number;
  readonly updatedAt: number;
  /** Materialised triples now. */
  readonly expansions: number;
  /** Tuple changes that reached the index's relations, and the events they produced. */
  readonly ingestedChanges: number;
  readonly events: number;
}

// ---- Permission indexes (docs/permission-indexes.md) ----

export type PermissionIndexStatus = 'BUILDING' | 'ACTIVE' | 'FAILED';

export interface ExpansionEvent {
  readonly revision: number;
  readonly position: number;
  readonly operation: 'INSERT' | 'DELETE';
  readonly user: string;
  readonly relation: string;
  readonly object: string;
}

/** A point of the event sequence: everything at or before (revision, position) was delivered. */
export interface EventPoint {
  readonly revision: number;
  /** `Infinity`: the whole revision. */
  readonly position: number;
}

export interface PermissionIndexLimits {
  /** Events kept for resumption; a `from` older than the oldest is refused. */
  readonly ringSize: number;
  /** A build that takes longer fails (ms). */
  readonly buildMs: number;
  /** An index that would hold more triples fails. */
  readonly maxTriples: number;
  readonly resolveDepth: number;
  /**
   * Tuple changes a store's indexes may lag behind its tuple index: past it, a local write waits
   * for the maintenance before it is acknowledged (the bound on the lag and on its memory).
   */
  readonly maxLagChanges: number;
  /**
   * Event-loop time per maintenance slice (ms); other work runs between two slices. A slice
   * always takes at least one step (0: one step per slice, which tests use to interleave writes).
   */
  readonly maintainSliceMs: number;
}

export type ExpansionStreamEvent =
  /** `snapshot`: the entry's number in the initial set (its id is not a resume point). */
  | { readonly kind: 'expansion'; readonly event: ExpansionEvent; readonly snapshot?: number | undefined }
  | { readonly kind: 'freshness'; readonly revision: number; readonly at: number }
  | { readonly kind: 'heartbeat' }
  | { readonly kind: 'closed'; readonly reason: string };

export interface ExpansionsInput {
  readonly storeId: string;
  readonly indexId: string;
  /** The model the client expects: it must be the index's. */
  readonly modelId: string;
  /** Resume right after this point; undefined → the whole current set first. */
  readonly from?: EventPoint | undefined;
  readonly heartbeatMs: number;
  /** The stream closes after this long (the client reconnects with `from`). */
  readonly lifetimeMs: number;
}

export interface CreatePermissionIndex {
  readonly storeId: string;
  readonly name: string;
  readonly relations: readonly IndexedRelation[];
  /** Undefined → the store's latest model. */
  readonly modelId?: string | undefined;
}
