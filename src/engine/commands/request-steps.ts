// The steps that open most commands: the store exists, the contextual tuples are within the
// configured limit, the store's index is at the freshness the query asks for, and the evaluator's
// inputs are taken at one instant of the injected clock.

import { AppError, fail } from '../../errors.js';
import type { IndexSnapshot, StoreIndex } from '../../index/store-index.js';
import type { CompiledModel } from '../../model/types.js';
import type { Store } from '../../domain/types.js';
import type { QueryBase } from '../contract.js';
import type { EvalContext } from '../evaluation/semantics/context.js';
import { overlayView } from '../evaluation/semantics/view.js';
import type { Freshness } from '../state/revision-feed.js';
import type { EngineParts } from './parts.js';

/** The store, or 404 store_id_not_found. */
export async function storeOf(e: EngineParts, storeId: string): Promise<Store> {
  const store = await e.storage.getStore(storeId);
  if (!store) throw fail.storeNotFound();
  return store;
}

/** The store exists; a loaded index means a known store (a deletion drops it), no storage round trip. */
export async function assertKnownStore(e: EngineParts, storeId: string): Promise<void> {
  if (e.indexes.has(storeId)) return;
  await storeOf(e, storeId);
}

/** The configured contextual-tuple limit (the API edge already caps it at the proto's 100). */
export function assertContextualLimit(e: EngineParts, n: number): void {
  const max = e.config.maxContextualTuples;
  if (n > max)
    throw new AppError(
      'validation_error',
      `invalid ContextualTupleKeys.TupleKeys: value must contain no more than ${max} item(s)`,
    );
}

/** A query's store exists and its contextual tuples are within the configured limit. */
export async function admit(e: EngineParts, input: QueryBase): Promise<void> {
  assertContextualLimit(e, input.contextualTuples.length);
  await assertKnownStore(e, input.storeId);
}

/** The store's index at the freshness the query asks for (HIGHER_CONSISTENCY, Latch-Min-Revision: RevisionFeed.fresh). */
export function freshIndex(
  e: EngineParts,
  q: Freshness & { readonly storeId: string },
  deadline: number,
): Promise<StoreIndex> {
  if (q.consistency !== 'HIGHER_CONSISTENCY' && q.minRevision === undefined) return e.indexes.get(q.storeId);
  return e.feed.fresh(q.storeId, q, deadline);
}

/** The evaluator's inputs: the snapshot as seen at the request's instant, plus the contextual tuples. */
export function evalContext(
  e: EngineParts,
  input: Pick<QueryBase, 'context' | 'contextualTuples'>,
  model: CompiledModel,
  snapshot: IndexSnapshot,
  deadline: number,
): EvalContext & { readonly now: number } {
  const now = e.clock();
  return {
    model,
    view: overlayView(snapshot.at(now), input.contextualTuples),
    context: input.context,
    resolveDepth: e.config.resolveDepth,
    deadline,
    now,
  };
}
