// The bounds of a permission index (configurable through the service's `permissionIndex` option):
// its event ring, its build's time and size, the Check depth, and how far it may lag its store.

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
}

export const DEFAULT_LIMITS: PermissionIndexLimits = {
  ringSize: 100_000,
  maxLagChanges: 100_000,
  buildMs: 600_000,
  maxTriples: 50_000_000,
  resolveDepth: 25,
};
