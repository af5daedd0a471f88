// Shadow evaluation of one sampled request (docs/changing-models.md): the request is answered again
// under the store's shadow model, over the very snapshot and instant of its answer, so that only
// the model can make the two answers differ; an equal answer is counted, a different one counted
// and recorded (request, both answers, revision, both model ids, time). Runs from the shadow queue
// (state/shadow-queue.ts), never on the request's path.

import type { CompiledModel } from '../../model/types.js';
import { toAppError } from '../../errors.js';
import type { ShadowAnswer, ShadowDisagreement, ShadowRequest } from '../contract.js';
import type { ShadowCheckJob, ShadowJob, ShadowListJob } from '../state/shadow-queue.js';
import { shadowObjects } from './list-objects.js';
import type { EngineParts } from './parts.js';
import { checkItem } from './validate-request.js';

/** Objects named per side of a ListObjects disagreement. */
const LISTED = 100;

export async function evaluateShadow(e: EngineParts, job: ShadowJob): Promise<void> {
  let model: CompiledModel;
  try {
    model = e.models.peek(job.storeId, job.shadowModelId) ?? (await e.models.resolve(job.storeId, job.shadowModelId));
  } catch (err) {
    record(e, job, errorAnswer(err));
    return;
  }
  if (job.operation === 'list-objects') listUnder(e, model, job);
  else {
    const answer = checkUnder(e, model, job);
    if ('allowed' in answer && answer.allowed === job.allowed)
      e.shadowRecords.agreed(job.storeId, job.shadowModelId, job.operation);
    else record(e, job, answer);
  }
}

function checkUnder(e: EngineParts, model: CompiledModel, job: ShadowCheckJob): ShadowAnswer {
  try {
    const item = checkItem(model, job.request.tupleKey, job.request);
    const deadline = Date.now() + e.config.checkDeadlineMs;
    const outcome = e.checker.checkInline(job.snapshot, model, item, deadline, job.now);
    return 'error' in outcome ? errorAnswer(outcome.error) : { allowed: outcome.allowed };
  } catch (err) {
    return errorAnswer(err);
  }
}

function listUnder(e: EngineParts, model: CompiledModel, job: ShadowListJob): void {
  let listed: { objects: readonly string[]; complete: boolean };
  try {
    listed = shadowObjects(e, job.request, model, job.snapshot, job.now);
  } catch (err) {
    record(e, job, errorAnswer(err));
    return;
  }
  // An answer cut short (deadline, result limit) says nothing about the objects it left out.
  if (!listed.complete) {
    e.shadowRecords.agreed(job.storeId, job.shadowModelId, job.operation);
    return;
  }
  const base = new Set(job.objects);
  const shadow = new Set(listed.objects);
  const lost = job.objects.filter((o) => !shadow.has(o));
  const gained = listed.objects.filter((o) => !base.has(o));
  if (lost.length === 0 && gained.length === 0) {
    e.shadowRecords.agreed(job.storeId, job.shadowModelId, job.operation);
    return;
  }
  record(e, job, { objects: listed.objects.length }, { lost: lost.slice(0, LISTED), gained: gained.slice(0, LISTED) });
}

function record(
  e: EngineParts,
  job: ShadowJob,
  shadowAnswer: ShadowAnswer,
  diff?: Pick<ShadowDisagreement, 'lost' | 'gained'>,
): void {
  const d: ShadowDisagreement = {
    operation: job.operation,
    time: new Date(job.at).toISOString(),
    revision: job.snapshot.revision,
    modelId: job.modelId,
    shadowModelId: job.shadowModelId,
    request: requestOf(job),
    answer: job.operation === 'list-objects' ? { objects: job.objects.length } : { allowed: job.allowed },
    shadowAnswer,
    ...diff,
  };
  e.shadowRecords.disagreed(job.storeId, d);
}

function requestOf(job: ShadowJob): ShadowRequest {
  const { contextualTuples, context } = job.request;
  if (job.operation === 'list-objects') {
    const { type, relation, user } = job.request;
    return { type, relation, user, contextualTuples, context };
  }
  const { user, relation, object } = job.request.tupleKey;
  return { tupleKey: { user, relation, object }, contextualTuples, context };
}

function errorAnswer(err: unknown): ShadowAnswer {
  const a = toAppError(err);
  return { error: { code: a.code, message: a.message } };
}
