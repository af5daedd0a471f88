// Changing a model in the engine's contract (src/engine/contract.ts, docs/changing-models.md):
// the impact of a candidate model (its validated input and the lines of its stream) and the steps
// of a relation migration.

import type { AuthorizationModelInput, TupleKey } from '../../domain/types.js';

// ---- the impact of a candidate model (docs/changing-models.md) ----
// Its validated input and the lines of
// its stream, each a plain JSON object with a `kind`, in this order: the structural lines (types,
// relations, conditions, context-dependent relations), the stored tuples the candidate no longer
// accepts, the access pairs (with progress lines), the assertions whose result changes, the summary.
// Example: `{kind:'gained', object:'document:1', relation:'viewer', user:'user:anne'}`.

export interface ImpactInput {
  readonly storeId: string;
  /** The candidate, shape-checked as a WriteAuthorizationModel body; validated by the service. */
  readonly candidate: AuthorizationModelInput;
  /** The model compared against; the store's latest when absent. */
  readonly baseModelId?: string | undefined;
  /** How many rejected tuples of each reason are listed (the count is always complete). */
  readonly sampleSize: number;
  /** Also run the base model's stored assertions against the candidate (`assertion` lines). */
  readonly assertions: boolean;
}

/** Why a stored tuple the base model reads is read differently under the candidate. */
export type RejectReason =
  | 'type_removed'
  | 'relation_removed'
  | 'restriction_removed'
  | 'condition_removed'
  | 'condition_required'
  | 'condition_changed';

export type RelationStatus = 'added' | 'removed' | 'changed' | 'unchanged';

/** One relation of either model, as the summary reports it. */
export interface RelationSummary {
  readonly object_type: string;
  readonly relation: string;
  /** Its own definition: added, removed, changed, or the same in both models. */
  readonly status: RelationStatus;
  /**
   * False when the relation and everything it reads (relations, restrictions, conditions) is the
   * same in both models: its answers cannot differ, so it was not evaluated.
   */
  readonly evaluated: boolean;
  /** Some tuple it reads may carry a condition: its answers depend on the request context. */
  readonly context_dependent: boolean;
  objects: number;
  gained: number;
  lost: number;
  undetermined: number;
}

export interface EvalError {
  readonly code: string;
  readonly message: string;
}

/** An assertion's outcome under one model. */
export type AssertionOutcome = { readonly allowed: boolean } | { readonly error: EvalError };

export type ImpactLine =
  | { readonly kind: 'type_added' | 'type_removed'; readonly type: string }
  | {
      readonly kind: 'relation_added' | 'relation_removed' | 'relation_changed';
      readonly object_type: string;
      readonly relation: string;
      readonly before?: string | undefined;
      readonly after?: string | undefined;
    }
  | { readonly kind: 'condition_added' | 'condition_removed' | 'condition_changed'; readonly condition: string }
  | {
      readonly kind: 'context_dependent';
      readonly object_type: string;
      readonly relation: string;
      /** The models in which the relation reads conditioned tuples. */
      readonly models: readonly ('base' | 'candidate')[];
    }
  | {
      readonly kind: 'rejected_tuples';
      readonly reason: RejectReason;
      readonly count: number;
      readonly sample: readonly TupleKey[];
    }
  | { readonly kind: 'progress'; readonly evaluated: number; readonly total: number }
  | {
      readonly kind: 'gained' | 'lost';
      readonly object: string;
      readonly relation: string;
      /** `user:anne` or a wildcard `user:*`; usersets are expanded to their members. */
      readonly user: string;
    }
  | {
      /** ListUsers fails under one model or both (a condition needs context, the depth limit). */
      readonly kind: 'undetermined';
      readonly object: string;
      readonly relation: string;
      readonly user_type: string;
      readonly base?: EvalError | undefined;
      readonly candidate?: EvalError | undefined;
    }
  | {
      readonly kind: 'assertion';
      readonly tuple_key: { readonly user: string; readonly relation: string; readonly object: string };
      readonly expectation: boolean;
      readonly base: AssertionOutcome;
      readonly candidate: AssertionOutcome;
      /** The candidate's answer equals the expectation. */
      readonly passes: boolean;
    }
  | {
      readonly kind: 'summary';
      readonly base_authorization_model_id: string;
      readonly revision: number;
      readonly gained: number;
      readonly lost: number;
      readonly undetermined: number;
      readonly rejected_tuples: number;
      readonly assertions_run: number;
      readonly assertions_changed: number;
      readonly relations: readonly RelationSummary[];
    };

/** What the service answers once the candidate validated and the base model resolved. */
export interface ImpactStream {
  readonly baseModelId: string;
  readonly lines: AsyncIterable<ImpactLine>;
}

/** One relation copied to another of the same object type: `document#reader=document#viewer`. */
export interface RelationMap {
  readonly objectType: string;
  readonly from: string;
  readonly to: string;
}

/**
 * One bounded step of a relation migration (docs/changing-models.md, "Migrating data"). Example:
 * maps [document#reader→viewer], mode 'copy', no cursor → copies up to `limit` reader tuples as
 * viewer tuples and answers a cursor; steps repeat until `done`, then later steps carry the
 * changes made to reader meanwhile; mode 'finish' (the latest model has viewer, not reader)
 * completes the copy and the carry, then deletes the reader tuples.
 */
export interface MigrateInput {
  readonly storeId: string;
  readonly maps: readonly RelationMap[];
  readonly mode: 'dry_run' | 'copy' | 'finish';
  /** The model the copies must fit, not written (validated as a model write); else `modelId`. */
  readonly candidate?: AuthorizationModelInput | undefined;
  /** The model the copies must fit when no candidate is given; absent → the latest. */
  readonly modelId?: string | undefined;
  /** The previous step's cursor; absent → from the start. */
  readonly cursor?: string | undefined;
  /** The most tuples (or carried changes) this step handles, in writes of at most 100. */
  readonly limit: number;
}

export interface MigrateOutput {
  /** Tuples of the old relations seen by this step's scan (a dry run's count). */
  readonly matching: number;
  /** Copies written (ignored duplicates, copies already present, not counted). */
  readonly copied: number;
  /** Changes to the old relations carried over to the new ones. */
  readonly carried: number;
  /** Old tuples deleted (finish). */
  readonly deleted: number;
  /** Dry run: tuples the target model does not accept as copies, and the first few. */
  readonly rejected: number;
  readonly rejectedSample: readonly TupleKey[];
  /** Pass it to the next step; it survives restarts of the server (it names store revisions). */
  readonly cursor: string;
  /** Nothing left: the copy is complete and carried up to `revision` (finish: old tuples gone). */
  readonly done: boolean;
  /** The phase the cursor resumes in. */
  readonly phase: 'copy' | 'carry' | 'delete' | 'done';
  /** The store revision this step left. */
  readonly revision: number;
}
