// The impact of a candidate model in the engine's contract (src/engine/contract.ts,
// docs/changing-models.md): its validated input and the lines of its stream.

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
