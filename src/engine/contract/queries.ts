// The query half of the engine's contract (src/engine/contract.ts): the inputs and answers of
// Check, BatchCheck, the bulk check on interned strings, ListObjects, ListUsers, Expand and
// ExplainCheck (with its trace), as plain data.

import type { AuthorizationModel, Consistency, JsonObject, TupleKey } from '../../domain/types.js';
import type { AppError } from '../../errors.js';

export interface CheckTupleKey {
  readonly user: string;
  readonly relation: string;
  readonly object: string;
}

/** Fields shared by every query. `modelId` omitted → the store's latest model. */
export interface QueryBase {
  readonly storeId: string;
  readonly modelId?: string | undefined;
  /** Validated like writes (docs/reference/semantics.md §4.2), duplicates accepted; at most 100. */
  readonly contextualTuples: readonly TupleKey[];
  readonly context?: JsonObject | undefined;
  readonly consistency: Consistency;
  /**
   * Latch-Min-Revision: answer from an index that has applied at least this store revision
   * (a `Latch-Revision` of a Write), waiting for it until the query's deadline.
   */
  readonly minRevision?: number | undefined;
  /**
   * Date.now() ms past which the query answers 422 throttled_timeout_error; absent: now plus the
   * configured deadline. A request that runs several queries gives them one (AuthZEN evaluations).
   */
  readonly deadline?: number | undefined;
  /** Evaluate at this point of the store's history instead of now (docs/audit.md); absent → now. */
  readonly at?: PastPoint | undefined;
}

/**
 * A point in a store's history (latch extension, docs/audit.md): a revision (`at_revision`, the
 * `Latch-At-Revision` header), evaluated at its commit time; or an instant (`at_time`, ms since
 * the epoch), evaluated at the revision current then and at that instant. Example: writes at
 * 10:00 (revision 1) and 10:05 (revision 2): `{time: 10:03}` reads revision 1 with tuple expiry
 * judged at 10:03; `{revision: 1}` reads it with expiry judged at 10:00.
 */
export type PastPoint =
  | {
      readonly revision: number;
      /**
       * With a revision, the instant tuple expiry is judged at instead of the revision's commit
       * time: how a recorded decision is replayed (a live answer read revision r at the instant
       * of the request). Not a wire field.
       */
      readonly time?: number | undefined;
    }
  | { readonly time: number };

/** What a query at a past point reports with its answer: the revision it read. */
export interface AtRevision {
  /** Set only for queries with `at`: the revision the answer reflects. */
  readonly atRevision?: number | undefined;
}

/**
 * The state a live answer was computed on, so that the decision log can replay it exactly
 * (docs/audit.md): the index snapshot's revision and the instant tuple expiry was judged at.
 * Example: a Check read revision 41 at 10:03:07.250 → `{revision: 41, instant: <that ms>}`.
 */
export interface Evaluated {
  readonly revision?: number | undefined;
  /** ms since the epoch; 0 when no clock was read (no tuple of the snapshot expires). */
  readonly instant?: number | undefined;
}

export interface CheckInput extends QueryBase {
  readonly tupleKey: CheckTupleKey;
}

export interface CheckResult extends AtRevision, Evaluated {
  readonly allowed: boolean;
  /** The resolved model id (for the Openfga-Authorization-Model-Id header). */
  readonly modelId: string;
}

export interface BatchCheckItem {
  readonly correlationId: string;
  readonly tupleKey: CheckTupleKey;
  readonly contextualTuples: readonly TupleKey[];
  readonly context?: JsonObject | undefined;
}

export interface BatchCheckInput {
  readonly storeId: string;
  readonly modelId?: string | undefined;
  readonly checks: readonly BatchCheckItem[];
  readonly consistency: Consistency;
  /** As QueryBase.minRevision. */
  readonly minRevision?: number | undefined;
  /** As QueryBase.deadline. */
  readonly deadline?: number | undefined;
  /** As QueryBase.at: every item is evaluated at this point. */
  readonly at?: PastPoint | undefined;
}

export type BatchCheckOutcome = { readonly allowed: boolean } | { readonly error: AppError };

export interface BatchCheckResult extends AtRevision, Evaluated {
  readonly modelId: string;
  /** correlationId → outcome; one entry per input item. */
  readonly results: ReadonlyMap<string, BatchCheckOutcome>;
}

/**
 * A caller-owned table of strings that `checkIds` triples index into (a channel connection's
 * dictionary). Strings are only ever appended: index `i` names the same string for the table's
 * life, so the engine may cache what it resolved an index to (per table, model and index).
 */
export interface StringTable {
  readonly strings: readonly string[];
}

/**
 * Many checks given as (object, relation, user) indices into `table`, 3 u32 per check. Each check
 * is validated and answered exactly as a Check request with that tuple key would be; `context`
 * applies to every check; contextual tuples are not part of this form.
 */
export interface CheckIdsInput {
  readonly storeId: string;
  readonly modelId?: string | undefined;
  readonly consistency: Consistency;
  /** As QueryBase.minRevision. */
  readonly minRevision?: number | undefined;
  readonly context?: JsonObject | undefined;
  readonly table: StringTable;
  /** Check i is (triples[3i], triples[3i+1], triples[3i+2]) = (object, relation, user). */
  readonly triples: Uint32Array;
  /**
   * Checks already answered by the caller (its own validation): `outcomes[i] === CHECK_ERROR`
   * on input skips check i. Every other byte is overwritten.
   */
  readonly outcomes: Uint8Array;
  /** Errors of the checks the caller failed; the engine adds its own. */
  readonly errors: Map<number, AppError>;
}

export const CHECK_DENIED = 0;
export const CHECK_ALLOWED = 1;
export const CHECK_ERROR = 2;

/**
 * Filled in by StreamedListObjects once it has chosen its model, snapshot and instant (before
 * the first object): what the decision log records of a stream. Example: a stream read at
 * revision 41 → `{modelId: "01J…", revision: 41, instant: <ms>}`.
 */
export interface StreamEvaluated {
  modelId: string;
  revision: number;
  instant: number;
}

export interface CheckIdsResult extends Evaluated {
  readonly modelId: string;
}

/**
 * A complete listing in pages (docs/reference/decisions.md D15 extension): at most `size` results (1..1000) after the cursor
 * `after` (the `next` of the previous page), in ascending order of their string form, each
 * accessible in the store's state when the page is served (evaluation/list/pages.ts).
 */
export interface ListPageRequest {
  readonly size: number;
  readonly after?: string | undefined;
}

export interface ListObjectsInput extends QueryBase {
  readonly type: string;
  readonly relation: string;
  readonly user: string;
  /** Absent: OpenFGA's behaviour (unordered, at most listObjectsMaxResults, partial at the deadline). */
  readonly page?: ListPageRequest | undefined;
}

export interface ListObjectsResult extends AtRevision, Evaluated {
  readonly objects: string[];
  readonly modelId: string;
  /** Paged requests only: the cursor after this page's last object; absent when it was the last page. */
  readonly next?: string | undefined;
}

export interface UserFilter {
  readonly type: string;
  readonly relation?: string | undefined;
}

export interface ListUsersInput extends QueryBase {
  readonly object: { readonly type: string; readonly id: string };
  readonly relation: string;
  readonly userFilters: readonly UserFilter[];
  /** Absent: OpenFGA's behaviour. Cursors are users' string forms (`user:anne`, `team:x#member`, `user:*`). */
  readonly page?: ListPageRequest | undefined;
}

/** Exactly one key set, as OpenFGA returns it. */
export type ListedUser =
  | { readonly object: { readonly type: string; readonly id: string } }
  | { readonly userset: { readonly type: string; readonly id: string; readonly relation: string } }
  | { readonly wildcard: { readonly type: string } };

export interface ListUsersResult extends AtRevision, Evaluated {
  readonly users: ListedUser[];
  /** Paged requests only: `users` as `user:anne`, `user:*`, `team:x#member` strings, in the same order. */
  readonly userKeys?: readonly string[] | undefined;
  readonly modelId: string;
  /** Paged requests only: the cursor after this page's last user; absent when it was the last page. */
  readonly next?: string | undefined;
}

export interface ExpandInput extends Omit<QueryBase, 'context'> {
  readonly object: string;
  readonly relation: string;
}

/** Expand's tree, exactly the JSON shape of docs/reference/semantics.md §6.4. */
export interface UsersetTreeNode {
  readonly name: string;
  readonly leaf?: {
    readonly users?: { readonly users: string[] };
    readonly computed?: { readonly userset: string };
    readonly tupleToUserset?: { readonly tupleset: string; readonly computed: { readonly userset: string }[] };
  };
  readonly union?: { readonly nodes: UsersetTreeNode[] };
  readonly intersection?: { readonly nodes: UsersetTreeNode[] };
  readonly difference?: { readonly base: UsersetTreeNode; readonly subtract: UsersetTreeNode };
}

/**
 * A Check explained by the reference evaluator (debugging extension, docs/playground.md): the
 * answer and the trace of every relation, rewrite and tuple it looked at.
 */
export interface CheckExplanation extends AtRevision {
  readonly allowed: boolean;
  readonly modelId: string;
  readonly tree: TraceNode;
  /** Trace nodes left out past the trace's size limit (0 when the trace is complete). */
  readonly truncated: number;
}

export interface ExpandResult extends AtRevision {
  readonly tree: { readonly root: UsersetTreeNode };
  readonly modelId: string;
}

// ---- ExplainCheck trace ----

export type TraceKind =
  'relation' | 'direct' | 'computed' | 'ttu' | 'union' | 'intersection' | 'exclusion' | 'tuple' | 'pruned' | 'cycle';

export type TraceOutcome = 'allowed' | 'denied' | 'cycle' | 'error';

export interface TraceNode {
  kind: TraceKind;
  /** `object#relation` for a relation, the rewrite in DSL words for an operator, `object#relation@user` for a tuple. */
  label: string;
  outcome: TraceOutcome;
  error?: string;
  children?: TraceNode[];
}

/**
 * What an HTTP thread needs to answer Check on a model from the shared index (`--http-threads`):
 * the model (compiled again on the thread), its walker program in shared memory (kept while the
 * store is on the threads' board) and the store's names as the program interned them.
 */
export interface ThreadModel {
  readonly modelId: string;
  readonly json: AuthorizationModel;
  /** Address of the program header, its name stride, and its subject kinds (key → kind index). */
  readonly program: number;
  readonly stride: number;
  readonly kinds: readonly (readonly [number, number])[];
  /** Name id → name (types, relations, conditions) at least as far as the program uses them. */
  readonly names: readonly string[];
}
