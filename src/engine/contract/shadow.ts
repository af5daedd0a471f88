// Shadow evaluation in the engine's contract (src/engine/contract.ts, docs/changing-models.md):
// the setting's input, the bounds, the figures for the metrics, and the report's disagreements.

import type { JsonObject, ShadowSetting, TupleKey } from '../../domain/types.js';
import type { CheckTupleKey } from './queries.js';

/** Bounds of shadow evaluation (docs/changing-models.md). */
export interface ShadowLimits {
  /** Sampled requests waiting for their shadow evaluation on this node; more are dropped and counted. */
  readonly queueSize: number;
  /** Disagreements kept per store (the newest). */
  readonly records: number;
}

/** The operations evaluated under a shadow model. */
export type ShadowOperation = 'check' | 'batch-check' | 'list-objects';

export interface ShadowStats {
  readonly evaluated: Readonly<Record<ShadowOperation, number>>;
  readonly disagreements: Readonly<Record<ShadowOperation, number>>;
  /** Sampled requests dropped because the queue was full. */
  readonly dropped: number;
  /** Shadow evaluations that failed inside latch (not an error answer of the request). */
  readonly failed: number;
  /** Sampled requests waiting now. */
  readonly queued: number;
}

export interface ShadowInput {
  readonly storeId: string;
  readonly modelId: string;
  /** In [0, 1]: 0 evaluates nothing, 1 every request. */
  readonly sampling: number;
}

/** One request's answer under one model: a Check's, or a ListObjects' object count, or an error. */
export type ShadowAnswer =
  | { readonly allowed: boolean }
  | { readonly objects: number }
  | { readonly error: { readonly code: string; readonly message: string } };

/** The request of a disagreement: a Check's tuple key, or ListObjects' type, relation and user. */
export interface ShadowRequest {
  readonly tupleKey?: CheckTupleKey | undefined;
  readonly type?: string | undefined;
  readonly relation?: string | undefined;
  readonly user?: string | undefined;
  readonly contextualTuples: readonly TupleKey[];
  readonly context?: JsonObject | undefined;
}

/**
 * One disagreement. Example: Check `doc:1#viewer@user:anne` at revision 7 answered
 * `{allowed: true}` under the request's model and `{allowed: false}` under the shadow.
 */
export interface ShadowDisagreement {
  readonly operation: ShadowOperation;
  /** RFC 3339: when the request was answered. */
  readonly time: string;
  /** The store revision both answers were computed at. */
  readonly revision: number;
  readonly modelId: string;
  readonly shadowModelId: string;
  readonly request: ShadowRequest;
  readonly answer: ShadowAnswer;
  readonly shadowAnswer: ShadowAnswer;
  /** ListObjects: objects only in the request's answer (lost under the shadow) and only under the shadow (gained), the first 100 of each. */
  readonly lost?: readonly string[] | undefined;
  readonly gained?: readonly string[] | undefined;
}

export interface ShadowReport {
  /** The current setting; undefined once cleared (the figures of the last shadow stay). */
  readonly setting: ShadowSetting | undefined;
  /** The shadow model the figures are about (the last one set on this node), and since when. */
  readonly shadowModelId: string | undefined;
  readonly since: string | undefined;
  readonly evaluated: number;
  readonly disagreements: number;
  readonly dropped: number;
  /** The newest disagreements, newest first (at most `ShadowLimits.records`). */
  readonly records: readonly ShadowDisagreement[];
}
