// The queries with `at` (latch extension, docs/audit.md): Check, BatchCheck, ListObjects,
// StreamedListObjects, ListUsers, Expand and explain, evaluated on the store's past view
// (../state/past-views.ts) with the model that was the latest at that instant (or the one named),
// at that instant for tuple expiry. Each answer reports the revision it read. Each command hands
// a query with `at` here after its opening steps (the contextual-tuple limit, the store).

import { ulidTime } from '../../domain/ids.js';
import { fail } from '../../errors.js';
import type { CompiledModel } from '../../model/types.js';
import type {
  BatchCheckInput,
  BatchCheckResult,
  CheckExplanation,
  CheckInput,
  CheckResult,
  ExpandInput,
  ExpandResult,
  ListObjectsInput,
  ListObjectsResult,
  ListUsersInput,
  ListUsersResult,
  PastPoint,
  StreamEvaluated,
} from '../contract.js';
import {
  batchCheckOnFrame,
  checkOnFrame,
  expandOnFrame,
  explainOnFrame,
  type Frame,
  listObjectsOnFrame,
  listUsersOnFrame,
} from './frame-eval.js';
import type { EngineParts } from './parts.js';
import { storeOf } from './request-steps.js';

/** What a query names of its store and model. */
interface Target {
  readonly storeId: string;
  readonly modelId?: string | undefined;
}

export async function pastCheck(e: EngineParts, input: CheckInput, at: PastPoint): Promise<CheckResult> {
  const f = await frame(e, input, at, e.config.checkDeadlineMs);
  return {
    allowed: await checkOnFrame(f, e.checker, input),
    modelId: f.model.id,
    atRevision: f.revision,
    revision: f.revision,
    instant: f.instant,
  };
}

export async function pastBatchCheck(e: EngineParts, input: BatchCheckInput, at: PastPoint): Promise<BatchCheckResult> {
  const f = await frame(e, input, at, e.config.checkDeadlineMs);
  const results = await batchCheckOnFrame(f, e.checker, input.checks);
  return { results, modelId: f.model.id, atRevision: f.revision, revision: f.revision, instant: f.instant };
}

export async function pastListObjects(
  e: EngineParts,
  input: ListObjectsInput,
  at: PastPoint,
): Promise<ListObjectsResult> {
  const f = await frame(e, input, at, input.page ? e.config.listPageDeadlineMs : e.config.listObjectsDeadlineMs);
  return {
    ...(await listObjectsOnFrame(f, e.config, input)),
    modelId: f.model.id,
    atRevision: f.revision,
    revision: f.revision,
    instant: f.instant,
  };
}

/** The listing computed first, then streamed (a past view is not pinned for a slow consumer). */
export async function* pastStreamedListObjects(
  e: EngineParts,
  input: ListObjectsInput,
  at: PastPoint,
  signal?: AbortSignal,
  evaluated?: StreamEvaluated,
): AsyncIterable<string> {
  const r = await pastListObjects(e, input, at);
  if (evaluated) Object.assign(evaluated, { modelId: r.modelId, revision: r.revision ?? 0, instant: r.instant ?? 0 });
  for (const o of r.objects) {
    if (signal?.aborted) return;
    yield o;
  }
}

export async function pastListUsers(e: EngineParts, input: ListUsersInput, at: PastPoint): Promise<ListUsersResult> {
  const f = await frame(e, input, at, input.page ? e.config.listPageDeadlineMs : e.config.listUsersDeadlineMs);
  return {
    ...listUsersOnFrame(f, e.config, input),
    modelId: f.model.id,
    atRevision: f.revision,
    revision: f.revision,
    instant: f.instant,
  };
}

export async function pastExpand(e: EngineParts, input: ExpandInput, at: PastPoint): Promise<ExpandResult> {
  const f = await frame(e, input, at, e.config.checkDeadlineMs);
  return { tree: expandOnFrame(f, input), modelId: f.model.id, atRevision: f.revision };
}

export async function pastExplainCheck(e: EngineParts, input: CheckInput, at: PastPoint): Promise<CheckExplanation> {
  const f = await frame(e, input, at, e.config.checkDeadlineMs);
  return { ...explainOnFrame(f, e.config, input), modelId: f.model.id, atRevision: f.revision };
}

/**
 * The past view, the model and the deadline of one query. Waiting for the node's index to reach
 * the revision counts against the query's budget; building the view does not (it is bounded by
 * `--history-max-undo` instead), so the evaluation gets its whole budget once the view exists.
 */
async function frame(
  e: EngineParts,
  q: Target,
  at: PastPoint,
  budgetMs: number,
): Promise<Frame & { readonly revision: number }> {
  const store = await storeOf(e, q.storeId);
  const view = await e.pastViews.view(store, at, Date.now() + budgetMs);
  const model = await modelAt(e, q.storeId, q.modelId, view.instant);
  const deadline = Date.now() + budgetMs;
  return { snapshot: view.snapshot, model, instant: view.instant, deadline, revision: view.revision };
}

/**
 * The named model, or the store's latest at `instant`: the greatest model id whose ULID time is
 * at or before it (a model written in the very millisecond of the revision counts as before).
 */
async function modelAt(
  e: EngineParts,
  storeId: string,
  modelId: string | undefined,
  instant: number,
): Promise<CompiledModel> {
  if (modelId) return e.models.resolve(storeId, modelId);
  let after: string | undefined;
  do {
    const page = await e.storage.listModels(storeId, { pageSize: 100, after });
    const then = page.items.find((m) => ulidTime(m.id) <= instant);
    if (then) return e.models.resolve(storeId, then.id);
    after = page.next;
  } while (after);
  throw fail.latestModelNotFound(storeId);
}
