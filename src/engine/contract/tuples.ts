// The tuple half of the engine's contract (src/engine/contract.ts): the inputs and answers of
// Write, Read, ReadChanges, delete by filter and Watch, as plain data.

import type {
  Consistency,
  JsonObject,
  PageRequest,
  TupleChange,
  TupleFilter,
  TupleKey,
  TupleWrite,
} from '../../domain/types.js';
import type { CheckTupleKey } from './queries.js';

/** A Write request: the tuple write (deletes, writes, duplicate and missing rules) on a store. */
export interface WriteInput extends TupleWrite {
  readonly storeId: string;
  readonly modelId?: string | undefined;
  /**
   * Guarded write (docs/changing-models.md): every precondition is evaluated against the store's
   * state under its write lock, and the write applies only if all hold; the first that fails, in
   * order, answers 409 write_precondition_failed naming its 0-based index and nothing is written.
   */
  readonly preconditions?: readonly WritePrecondition[] | undefined;
}

/**
 * One precondition of a guarded write. Examples: `{kind: 'check', tupleKey: doc:1#can_share@user:anne,
 * expect: true}` holds when anne may share doc:1; `{kind: 'tuple_absent', tuple: doc:1#owner@user:bob}`
 * holds while that exact tuple is not stored (an expired tuple is absent).
 */
export type WritePrecondition =
  | {
      readonly kind: 'check';
      readonly tupleKey: CheckTupleKey;
      readonly contextualTuples: readonly TupleKey[];
      readonly context?: JsonObject | undefined;
      readonly expect: boolean;
    }
  | { readonly kind: 'tuple_exists' | 'tuple_absent'; readonly tuple: TupleKey };

export interface WriteOutput {
  readonly modelId: string;
  /** The store's revision once this write is applied (the `Latch-Revision` header). */
  readonly revision: number;
  /** Tuples actually written and deleted (ignored duplicates and missing deletes are not counted). */
  readonly written: number;
  readonly deleted: number;
}

export interface ReadInput extends PageRequest {
  readonly storeId: string;
  readonly filter: TupleFilter;
  readonly consistency: Consistency;
  /** Accepted for symmetry with the queries: Read always reads the datastore, fresh by nature. */
  readonly minRevision?: number | undefined;
}

export interface ReadChangesInput extends PageRequest {
  readonly storeId: string;
  readonly type?: string | undefined;
  readonly startTime?: string | undefined;
}

/** What delete-by-filter selects; at least one field is set (the API edge checks it). */
export interface DeleteTuplesFilter {
  /** Every object of this type (`document`). */
  readonly objectType?: string | undefined;
  /** One object (`document:roadmap`); its type equals `objectType` when both are set. */
  readonly object?: string | undefined;
  readonly relation?: string | undefined;
  /** One user string exactly as stored: `user:anne`, `group:eng#member`, `user:*`. */
  readonly user?: string | undefined;
}

export interface DeleteTuplesInput {
  readonly storeId: string;
  readonly filter: DeleteTuplesFilter;
  /** Only report what would go; nothing is written. */
  readonly dryRun: boolean;
  /** At most this many tuples go in this request (1 … MAX_DELETE_BY_FILTER). */
  readonly limit: number;
}

export interface DeleteTuplesOutput {
  /** The tuples deleted (or, on a dry run, that would be), in the store's Read order. */
  readonly tuples: readonly TupleKey[];
  /** More tuples matched than `limit`: another request deletes the next ones. */
  readonly more: boolean;
  /** The store's revision after the request (unchanged on a dry run or when nothing matched). */
  readonly revision: number;
}

// ---- Watch ----

export interface WatchInput {
  readonly storeId: string;
  /** Only changes whose object type equals this. */
  readonly type?: string | undefined;
  /** A storage cursor: the stream starts right after it. Takes precedence over `startTime`. */
  readonly after?: string | undefined;
  /** RFC 3339: the stream starts at the first change at or after this time. */
  readonly startTime?: string | undefined;
  /** A heartbeat after this long without a change (ms). */
  readonly heartbeatMs: number;
}

export type WatchEvent =
  | { readonly kind: 'change'; readonly change: TupleChange; readonly cursor: string }
  /**
   * The first event of every stream, then one after each `heartbeatMs` without a change.
   * `cursor`: where the stream stands; undefined while no change was read since a start at the
   * beginning or at a start time (resume the same way).
   */
  | { readonly kind: 'heartbeat'; readonly cursor: string | undefined };

// ---- bulk import and export (docs/operations.md, "Bulk loading") ----

/** At most this many tuples in one import chunk (one request, one revision). */
export const MAX_IMPORT_CHUNK = 50_000;

/**
 * One chunk of a bulk import: tuples to write, validated like Write's (same codes), applied as
 * one atomic write, one revision, one changelog entry per new tuple. A tuple already stored
 * identically is skipped (so a chunk sent twice is harmless); one stored with another condition
 * or expiry is a 409 conflict, as Write's `on_duplicate: "ignore"`.
 */
export interface ImportTuplesInput {
  readonly storeId: string;
  readonly modelId?: string | undefined;
  /** 1 … MAX_IMPORT_CHUNK tuples, no (object, relation, user) twice. */
  readonly tuples: readonly TupleKey[];
}

export interface ImportTuplesOutput {
  readonly modelId: string;
  /** The store's revision once the chunk is applied (unchanged when every tuple was already stored). */
  readonly revision: number;
  /** Tuples written by this chunk (already stored ones not counted). */
  readonly written: number;
}

export interface ExportTuplesInput {
  readonly storeId: string;
}

/**
 * The store's tuples at one revision, in batches (the store's Read order): `revision` is the
 * revision every batch was read at (the same in each).
 */
export interface ExportBatch {
  readonly revision: number;
  readonly tuples: readonly TupleKey[];
}
