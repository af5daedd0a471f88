// BatchCheck: every item's contextual-tuple limit, the store, its index at the asked freshness
// and the model; then ONE snapshot and ONE instant for the whole batch (every item sees the same
// tuples expired), each item's cached answer or validation, and the walker on the items that run
// (inline or on the pool). One deadline for the whole batch: the items it cuts short answer
// throttled_timeout_error. Each answered item may be sampled for shadow evaluation (commands/shadow.ts).

import { toAppError } from '../../errors.js';
import type { BatchCheckInput, BatchCheckOutcome, BatchCheckResult } from '../contract.js';
import type { CheckItem } from '../evaluation/walker/checker.js';
import { cacheScope, checkItem } from './check.js';
import type { EngineParts } from './parts.js';
import { pastBatchCheck } from './past-queries.js';
import { assertContextualLimit, assertKnownStore, freshIndex } from './request-steps.js';
import { offerCheck } from './shadow.js';

const ALLOWED_ITEM: BatchCheckOutcome = Object.freeze({ allowed: true });
const DENIED_ITEM: BatchCheckOutcome = Object.freeze({ allowed: false });

export async function batchCheck(e: EngineParts, input: BatchCheckInput): Promise<BatchCheckResult> {
  for (const c of input.checks) assertContextualLimit(e, c.contextualTuples.length);
  await assertKnownStore(e, input.storeId);
  if (input.at) return pastBatchCheck(e, input, input.at);
  const deadline = input.deadline ?? Date.now() + e.config.checkDeadlineMs;
  const index = await freshIndex(e, input, deadline);
  const model = await e.models.resolve(input.storeId, input.modelId);
  const snapshot = index.snapshot();
  const now = e.checker.instant(snapshot);
  // Per item: its cached answer, its validation failure, or its position among the checks that run.
  const slots: (BatchCheckOutcome | number)[] = [];
  const valid: CheckItem[] = [];
  const scopes: number[] = [];
  for (const c of input.checks) {
    const scope = cacheScope(e, input.consistency, c, snapshot, model, now);
    const cached = scope === 0 ? undefined : e.results.get(scope, c.tupleKey);
    if (cached !== undefined) {
      slots.push(cached ? ALLOWED_ITEM : DENIED_ITEM);
      continue;
    }
    try {
      valid.push(checkItem(model, c.tupleKey, c));
      scopes.push(scope);
      slots.push(valid.length - 1);
    } catch (err) {
      slots.push({ error: toAppError(err) });
    }
  }
  const outcomes = valid.length > 0 ? await e.checker.check(snapshot, model, valid, deadline, now) : [];
  for (let i = 0; i < valid.length; i++) {
    const o = outcomes[i];
    const scope = scopes[i] as number;
    if (scope !== 0 && o && 'allowed' in o) e.results.set(scope, valid[i] as CheckItem, o.allowed);
  }
  // In the caller's order.
  const results = new Map<string, BatchCheckOutcome>();
  input.checks.forEach((c, i) => {
    const slot = slots[i] as BatchCheckOutcome | number;
    const outcome = typeof slot === 'number' ? outcomes[slot] : slot;
    if (!outcome) return;
    results.set(c.correlationId, outcome);
    if ('allowed' in outcome) offerCheck(e, 'batch-check', input.storeId, model.id, snapshot, now, c, outcome.allowed);
  });
  return { modelId: model.id, results, revision: snapshot.revision, instant: now };
}
