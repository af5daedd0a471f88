// ListObjects and StreamedListObjects: the contextual-tuple limit and the store, the index at the
// asked freshness, the model with every model-dependent check in ListObjects' codes, ONE snapshot,
// then the indexed object walk (evaluation/list/open.ts) at ONE instant of the injected clock.
// Without a page: OpenFGA's behaviour (unordered, at most listObjectsMaxResults, partial at the
// deadline). With one: the complete, sorted answer against the current snapshot, from the listing
// cache while the store state it was computed against lasts (evaluation/list/pages.ts).

import type { IndexSnapshot, StoreIndex } from '../../index/store-index.js';
import type { CompiledModel } from '../../model/types.js';
import type { ListObjectsInput, ListObjectsResult, StreamEvaluated } from '../contract.js';
import { openObjectWalk, streamWalk, streamWalkBatches } from '../evaluation/list/open.js';
import { collectAll, firstAfter, listingKey, pageOf } from '../evaluation/list/pages.js';
import type { ListingStamp } from '../state/listing-cache.js';
import type { EngineParts } from './parts.js';
import { pastListObjects, pastStreamedListObjects } from './past-queries.js';
import { admit, freshIndex } from './request-steps.js';
import {
  validateContextualTuples,
  validateObjectRelation,
  validateRequestContext,
  validateSubject,
} from './validate-request.js';

export async function listObjects(e: EngineParts, input: ListObjectsInput): Promise<ListObjectsResult> {
  await admit(e, input);
  if (input.at) return pastListObjects(e, input, input.at);
  if (input.page) {
    const { model, keys, revision, instant } = await completeObjects(e, input);
    const page = pageOf(keys, input.page);
    return { objects: page.items, modelId: model.id, next: page.next, revision, instant };
  }
  const { model, walk, snapshot, instant, outcome } = await openWalk(e, input);
  const max = e.config.listObjectsMaxResults;
  const objects: string[] = [];
  for (const o of walk) {
    objects.push(o);
    if (objects.length >= max) break; // stops the walk: no later error can surface
  }
  if (objects.length < max && !outcome.stopped) offerList(e, input, model.id, snapshot, instant, objects);
  return { objects, modelId: model.id, revision: snapshot.revision, instant };
}

/**
 * The request's objects under another model (a shadow, commands/shadow-evaluation.ts) over the
 * same snapshot and instant, with ListObjects' validation; `complete` false when the deadline or
 * the result limit cut the walk short.
 */
export function shadowObjects(
  e: EngineParts,
  input: ListObjectsInput,
  model: CompiledModel,
  snapshot: IndexSnapshot,
  now: number,
): { objects: string[]; complete: boolean } {
  validateUnder(model, input);
  const outcome = { stopped: false };
  const max = e.config.listObjectsMaxResults;
  const walk = walkOf(e, input, model, snapshot, Date.now() + e.config.listObjectsDeadlineMs, now, outcome);
  const objects: string[] = [];
  for (const o of walk) {
    objects.push(o);
    if (objects.length >= max) break;
  }
  return { objects, complete: objects.length < max && !outcome.stopped };
}

/** Queues the sampled shadow evaluation of a complete ListObjects answer (commands/shadow.ts). */
function offerList(
  e: EngineParts,
  input: ListObjectsInput,
  modelId: string,
  snapshot: IndexSnapshot,
  now: number,
  objects: readonly string[],
): void {
  const shadowModelId = e.shadow.sample(input.storeId, modelId);
  if (shadowModelId === undefined) return;
  const job = { storeId: input.storeId, snapshot, now, modelId, shadowModelId, at: Date.now() };
  e.shadow.offer({ ...job, operation: 'list-objects', request: input, objects });
}

/** Objects as the walk confirms them, against one pinned snapshot (evaluation/list/open.ts `streamWalk`). */
export async function* streamedListObjects(
  e: EngineParts,
  input: ListObjectsInput,
  signal?: AbortSignal,
  evaluated?: StreamEvaluated,
): AsyncIterable<string> {
  await admit(e, input);
  if (input.at) return yield* pastStreamedListObjects(e, input, input.at, signal, evaluated);
  if (input.page) {
    const { keys, model, revision, instant } = await completeObjects(e, input, signal);
    if (evaluated) Object.assign(evaluated, { modelId: model.id, revision, instant });
    const from = firstAfter(keys, input.page.after);
    const to = Math.min(keys.length, from + input.page.size);
    for (let i = from; i < to; i++) {
      if (signal?.aborted) return;
      yield keys[i] as string;
    }
    return;
  }
  const { walk, snapshot, deadline, model, instant } = await openWalk(e, input);
  if (evaluated) Object.assign(evaluated, { modelId: model.id, revision: snapshot.revision, instant });
  yield* streamWalk(walk, snapshot, deadline, signal);
}

/**
 * StreamedListObjects without a page, in batches of the objects confirmed per ≈ 5 ms of walking
 * (`streamWalkBatches`): the same objects in the same order as `streamedListObjects`. A past
 * revision streams through `streamedListObjects` (its objects in batches of one).
 */
export async function* streamedListObjectBatches(
  e: EngineParts,
  input: ListObjectsInput,
  signal?: AbortSignal,
  evaluated?: StreamEvaluated,
): AsyncIterable<readonly string[]> {
  if (input.at || input.page) {
    for await (const o of streamedListObjects(e, input, signal, evaluated)) yield [o];
    return;
  }
  await admit(e, input);
  const open = await openState(e, input);
  const { snapshot, model, instant } = open;
  if (evaluated) Object.assign(evaluated, { modelId: model.id, revision: snapshot.revision, instant });
  // A complete answer already cached for this state (a paged listing of the same request) is
  // the same set of objects: it goes out as one batch, sorted, without walking again.
  const cached = e.listings.peek(objectsKey(input), stampOf(open), instant);
  if (cached !== undefined) {
    if (cached.length > 0 && !signal?.aborted) yield cached;
    return;
  }
  yield* streamWalkBatches(walkOf(e, input, model, snapshot, open.deadline, instant), snapshot, open.deadline, signal);
}

/** The model of a ListObjects request, after every model-dependent check with ListObjects' codes. */
async function validModel(e: EngineParts, input: ListObjectsInput): Promise<CompiledModel> {
  const model = await e.models.resolve(input.storeId, input.modelId);
  validateUnder(model, input);
  return model;
}

function validateUnder(model: CompiledModel, input: ListObjectsInput): void {
  validateRequestContext(input.context);
  validateContextualTuples(model, input.contextualTuples, 'listObjects');
  validateObjectRelation(model, input.type, input.relation, 'listObjects');
  validateSubject(model, input.user);
}

interface OpenWalk {
  readonly model: CompiledModel;
  readonly walk: Generator<string, void>;
  readonly snapshot: IndexSnapshot;
  readonly deadline: number;
  readonly instant: number;
  /** Set when the deadline stopped the walk. */
  readonly outcome: { stopped: boolean };
}

/** The index at the asked freshness, the validated model, one snapshot and one instant. */
interface OpenState {
  readonly index: StoreIndex;
  readonly model: CompiledModel;
  readonly snapshot: IndexSnapshot;
  readonly deadline: number;
  readonly instant: number;
}

async function openState(e: EngineParts, input: ListObjectsInput): Promise<OpenState> {
  const deadline = Date.now() + e.config.listObjectsDeadlineMs;
  const index = await freshIndex(e, input, deadline);
  const model = await validModel(e, input);
  return { index, model, snapshot: index.snapshot(), deadline, instant: e.clock() };
}

async function openWalk(e: EngineParts, input: ListObjectsInput): Promise<OpenWalk> {
  const { model, snapshot, deadline, instant } = await openState(e, input);
  const outcome = { stopped: false };
  const walk = walkOf(e, input, model, snapshot, deadline, instant, outcome);
  return { model, walk, snapshot, deadline, instant, outcome };
}

/** The listing cache's key of a ListObjects request's complete answer. */
function objectsKey(input: ListObjectsInput): string {
  return `${input.storeId}\u0000${listingKey('list-objects', [input.type, input.relation, input.user, input.contextualTuples, input.context ?? null])}`;
}

/** What a complete answer computed now would be computed against. */
function stampOf(s: Omit<OpenState, 'deadline'>): ListingStamp {
  return {
    index: s.index,
    revision: s.snapshot.revision,
    modelId: s.model.id,
    validUntil: s.snapshot.nextExpiry(s.instant),
  };
}

/**
 * The complete, sorted answer of a paged ListObjects against the current snapshot (at the
 * freshness the request asks for): from the listing cache when the store, model and expiry
 * horizon are unchanged since it was computed, else by a full walk sliced over event-loop turns
 * (its snapshot pinned meanwhile).
 */
async function completeObjects(
  e: EngineParts,
  input: ListObjectsInput,
  signal?: AbortSignal,
): Promise<{ model: CompiledModel; keys: readonly string[]; revision: number; instant: number }> {
  const deadline = Date.now() + e.config.listPageDeadlineMs;
  const index = await freshIndex(e, input, deadline);
  const model = await validModel(e, input);
  const snapshot = index.snapshot();
  const now = e.clock();
  const stamp = stampOf({ index, model, snapshot, instant: now });
  const key = objectsKey(input);
  const hit = e.listings.get(key, stamp, now);
  if (hit) return { model, keys: hit, revision: snapshot.revision, instant: now };
  const outcome = { stopped: false };
  snapshot.pin();
  try {
    const walk = walkOf(e, input, model, snapshot, deadline, now, outcome);
    const keys = await collectAll(walk, outcome, signal);
    keys.sort();
    e.listings.set(key, stamp, keys);
    return { model, keys, revision: snapshot.revision, instant: now };
  } finally {
    snapshot.unpin();
  }
}

/** The indexed object walk of the request over `snapshot` at the instant `now` (evaluation/list/open.ts). */
function walkOf(
  e: EngineParts,
  input: ListObjectsInput,
  model: CompiledModel,
  snapshot: IndexSnapshot,
  deadline: number,
  now: number,
  outcome?: { stopped: boolean },
): Generator<string, void> {
  return openObjectWalk(
    {
      snapshot,
      model,
      contextual: input.contextualTuples,
      context: input.context,
      resolveDepth: e.config.resolveDepth,
      deadline,
      outcome,
      now,
    },
    { type: input.type, relation: input.relation, user: input.user },
  );
}
