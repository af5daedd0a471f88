// Check: the contextual-tuple limit, then the warm path (model and index at hand: answered
// without a promise) or the store, its index at the asked freshness and the model; then ONE index
// snapshot, the result cache, the key validated against the model with Check's codes, and the
// walker at ONE instant of the injected clock (tuple expiry). Past `checkDeadlineMs` a Check
// answers 422 throttled_timeout_error (docs/reference/decisions.md D8). A sampled answer is queued
// for shadow evaluation after it is known (commands/shadow.ts).

import type { Consistency } from '../../domain/types.js';
import type { IndexSnapshot } from '../../index/store-index.js';
import type { CompiledModel } from '../../model/types.js';
import type { CheckInput, CheckResult, QueryBase } from '../contract.js';
import { ResultCache } from '../state/result-cache.js';
import type { EngineParts } from './parts.js';
import { pastCheck } from './past-queries.js';
import { assertContextualLimit, freshIndex, storeOf } from './request-steps.js';
import { offerCheck } from './shadow.js';
import { checkItem } from './validate-request.js';

export { checkItem } from './validate-request.js';

export async function check(e: EngineParts, input: CheckInput): Promise<CheckResult> {
  assertContextualLimit(e, input.contextualTuples.length);
  if (input.at) return pastCheck(e, input, input.at);
  // The warm case answers without awaiting the model and the index (two promise turns, about a
  // third of an embedded Check); checkWarm declines whenever something must be loaded or awaited.
  const warm = checkWarm(e, input);
  if (warm) return warm;
  if (!e.indexes.has(input.storeId)) await storeOf(e, input.storeId);
  const deadline = input.deadline ?? Date.now() + e.config.checkDeadlineMs;
  const index = await freshIndex(e, input, deadline);
  const model = await e.models.resolve(input.storeId, input.modelId);
  return checkOn(e, model, index.snapshot(), input, deadline);
}

/** Check answered synchronously on a warm store and model; undefined → call `check`. */
export function checkSync(e: EngineParts, input: CheckInput): CheckResult | undefined {
  assertContextualLimit(e, input.contextualTuples.length);
  if (input.at) return undefined;
  return checkWarm(e, input);
}

/**
 * Check without a promise when the model and the store's index are already at hand (the warm
 * case); undefined when either would have to be loaded. Same answers and errors as `check`.
 */
function checkWarm(e: EngineParts, input: CheckInput): CheckResult | undefined {
  // HIGHER_CONSISTENCY reads the committed revision from storage: never synchronous.
  if (input.consistency === 'HIGHER_CONSISTENCY') return undefined;
  const model = e.models.peek(input.storeId, input.modelId);
  const index = model && e.indexes.peek(input.storeId);
  if (!index || (input.minRevision !== undefined && index.currentRevision < input.minRevision)) return undefined;
  return checkOn(e, model, index.snapshot(), input, input.deadline);
}

/**
 * `deadline` undefined: the Check started now (the synchronous path) and has `checkDeadlineMs`
 * from the walker's first clock read (`checkStarting`): a cache hit or a walk too short for the
 * walker to read the clock reads none for it (Date.now() is ≈ 5 % of a direct embedded Check).
 */
function checkOn(
  e: EngineParts,
  model: CompiledModel,
  snapshot: IndexSnapshot,
  input: CheckInput,
  deadline: number | undefined,
): CheckResult {
  const k = input.tupleKey;
  // The request's instant: the clock is read only for a snapshot with expiring tuples (≈ 70 ns otherwise saved).
  const now = e.checker.instant(snapshot);
  const scope = cacheScope(e, input.consistency, input, snapshot, model, now);
  let allowed = scope === 0 ? undefined : e.results.get(scope, k);
  if (allowed === undefined) {
    const item = checkItem(model, k, input);
    const outcome =
      deadline === undefined
        ? e.checker.checkStarting(snapshot, model, item, e.config.checkDeadlineMs, now)
        : e.checker.checkInline(snapshot, model, item, deadline, now);
    if ('error' in outcome) throw outcome.error;
    allowed = outcome.allowed;
    if (scope !== 0) e.results.set(scope, k, allowed);
  }
  offerCheck(e, 'check', input.storeId, model.id, snapshot, now, input, allowed);
  return { allowed, modelId: model.id, revision: snapshot.revision, instant: now };
}

/**
 * The result-cache decision, the one for every Check however it arrives (Check over HTTP or the
 * channel, BatchCheck items, the channel's check groups): the scope to read and fill, or 0. A
 * request may use the cache unless it asks for HIGHER_CONSISTENCY or carries contextual tuples
 * or a context. A hit skips validation: only keys that passed it for this model are cached.
 * With the cache off (capacity 0) nothing is looked up: hashing the key would cost ≈ 10 % of an
 * embedded Check. A store with expiring tuples adds the expiry epoch at the request's instant
 * `now` to the scope, so no cached answer outlives the expiry of a tuple it may depend on.
 */
export function cacheScope(
  e: EngineParts,
  consistency: Consistency,
  q: Pick<QueryBase, 'context' | 'contextualTuples'>,
  snapshot: IndexSnapshot,
  model: CompiledModel,
  now: number,
): number {
  const cacheable =
    consistency !== 'HIGHER_CONSISTENCY' && q.contextualTuples.length === 0 && !q.context && e.results.capacity > 0;
  return cacheable ? ResultCache.scope(snapshot, model, snapshot.expiryEpoch(now)) : 0;
}
