// The preconditions of a guarded Write (docs/changing-models.md, "Guarded writes"): validated
// against the write's model before any lock is taken (a bad key is 400, as in Check), then
// evaluated synchronously on one index snapshot while the store's writes wait (state/store-writer.ts
// guardedWrite). The first that does not hold, in order, fails the write with 409
// write_precondition_failed and its 0-based index (`precondition_index` in the error body).

import type { IndexSnapshot } from '../../index/store-index.js';
import type { CompiledModel } from '../../model/types.js';
import type { CheckItem } from '../evaluation/walker/checker.js';
import type { TupleKey } from '../../domain/types.js';
import { AppError } from '../../errors.js';
import type { WritePrecondition } from '../contract.js';
import type { EngineParts } from './parts.js';
import { checkItem } from './validate-request.js';

/** A precondition ready to evaluate: a validated Check item, or a tuple to look up. */
type Prepared =
  | { readonly kind: 'check'; readonly item: CheckItem; readonly expect: boolean }
  | { readonly kind: 'tuple_exists' | 'tuple_absent'; readonly tuple: TupleKey };

/** Validates every precondition against `model` (Check's 400 codes for a bad key or context). */
export function preparePreconditions(model: CompiledModel, list: readonly WritePrecondition[]): readonly Prepared[] {
  return list.map((p) =>
    p.kind === 'check' ? { kind: 'check', item: checkItem(model, p.tupleKey, p), expect: p.expect } : p,
  );
}

/**
 * Throws write_precondition_failed for the first precondition that does not hold on `snapshot`
 * at the clock's now; a Check past `deadline` throws throttled_timeout_error (nothing written).
 */
export function assertPreconditions(
  e: EngineParts,
  model: CompiledModel,
  snapshot: IndexSnapshot,
  list: readonly Prepared[],
  deadline: number,
): void {
  const now = e.checker.instant(snapshot);
  list.forEach((p, i) => {
    if (p.kind === 'check') {
      const outcome = e.checker.checkInline(snapshot, model, p.item, deadline, now);
      if ('error' in outcome) throw outcome.error;
      if (outcome.allowed !== p.expect)
        throw failed(i, `check ${show(p.item)} is ${String(outcome.allowed)}, expected ${String(p.expect)}`);
      return;
    }
    const stored = exists(snapshot, p.tuple, e.clock());
    if (stored !== (p.kind === 'tuple_exists'))
      throw failed(i, `tuple ${show(p.tuple)} is ${stored ? 'stored' : 'not stored'}`);
  });
}

/** Whether exactly `t` (object, relation, user) is stored and not expired at `now`. */
function exists(snapshot: IndexSnapshot, t: Pick<TupleKey, 'object' | 'relation' | 'user'>, now: number): boolean {
  for (const entry of snapshot.at(now).users(t.object, t.relation)) if (entry.user === t.user) return true;
  return false;
}

function show(t: Pick<TupleKey, 'object' | 'relation' | 'user'>): string {
  return `${t.object}#${t.relation}@${t.user}`;
}

function failed(index: number, what: string): AppError {
  return new AppError('write_precondition_failed', `precondition ${index} failed: ${what}; nothing was written`, {
    fields: { precondition_index: index },
  });
}
