// The query of the per-store record logs (the store log, src/storage/auth/logs.ts, and the
// decision log, src/storage/decisions.ts): one store's records in a time range, a page at a time,
// in either order, continuing from the position the previous page ended at.

export interface TimeScan {
  readonly storeId: string;
  /** Unix ms, inclusive. */
  readonly startMs: number;
  /** Unix ms, exclusive. */
  readonly endMs: number;
  /** Exclusive position (the log's own cursor) to continue after (ascending) or before (descending). */
  readonly after?: string | undefined;
  readonly descending: boolean;
  readonly limit: number;
}
