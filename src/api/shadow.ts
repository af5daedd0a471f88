// Shadow evaluation (latch extension, docs/changing-models.md): the store's shadow model under
// `/stores/{store_id}/shadow` — PUT sets it (`authorization_model_id`, `sampling` in [0, 1]), GET
// reads it, DELETE clears it — and `GET /stores/{store_id}/shadow/report`, this node's counts and
// newest disagreements. An unknown model is 404 shadow_model_not_found; a malformed body 400.

import type { ShadowSetting } from '../domain/types.js';
import type { ShadowAnswer, ShadowDisagreement, ShadowReport } from '../engine/contract.js';
import { AppError } from '../errors.js';
import { NO_CONTENT, endpoint, ok, storeEndpoint, type Endpoint } from './endpoint.js';
import { tupleKeyOut } from './render.js';
import { bodyObject } from './stores.js';
import { REASON, modelId, storeId, typeError, violation } from './validate.js';

const MESSAGE = 'WriteShadowModelRequest';
const FIELDS = new Set(['authorization_model_id', 'sampling']);

function shadowOut(s: ShadowSetting): Record<string, unknown> {
  return { authorization_model_id: s.modelId, sampling: s.sampling, updated_at: s.updatedAt };
}

function answerOut(a: ShadowAnswer): Record<string, unknown> {
  if ('error' in a) return { error: { code: a.error.code, message: a.error.message } };
  return 'allowed' in a ? { allowed: a.allowed } : { objects_count: a.objects };
}

function recordOut(d: ShadowDisagreement): Record<string, unknown> {
  const r = d.request;
  return {
    operation: d.operation,
    time: d.time,
    revision: d.revision,
    authorization_model_id: d.modelId,
    shadow_model_id: d.shadowModelId,
    request: {
      ...(r.tupleKey
        ? { tuple_key: { user: r.tupleKey.user, relation: r.tupleKey.relation, object: r.tupleKey.object } }
        : {}),
      ...(r.type !== undefined ? { type: r.type, relation: r.relation, user: r.user } : {}),
      contextual_tuples: r.contextualTuples.map(tupleKeyOut),
      ...(r.context !== undefined ? { context: r.context } : {}),
    },
    answer: answerOut(d.answer),
    shadow_answer: answerOut(d.shadowAnswer),
    ...(d.lost ? { lost: d.lost } : {}),
    ...(d.gained ? { gained: d.gained } : {}),
  };
}

function reportOut(r: ShadowReport): Record<string, unknown> {
  return {
    shadow: r.setting ? shadowOut(r.setting) : null,
    shadow_model_id: r.shadowModelId ?? null,
    since: r.since ?? null,
    evaluated: r.evaluated,
    disagreements: r.disagreements,
    dropped: r.dropped,
    records: r.records.map(recordOut),
  };
}

function sampling(v: unknown): number {
  if (v === undefined || v === null) throw violation(MESSAGE, 'Sampling', REASON.required);
  if (typeof v !== 'number' || !Number.isFinite(v)) throw typeError('sampling', 'double', v);
  if (v < 0 || v > 1) throw violation(MESSAGE, 'Sampling', REASON.range(0, 1));
  return v;
}

const setShadow = endpoint<{ storeId: string; modelId: string; sampling: number }>({
  name: 'WriteShadowModel',
  op: 'write-shadow-model',
  method: 'put',
  path: '/stores/:store_id/shadow',
  parse(req) {
    const id = storeId(req.params.store_id, MESSAGE);
    const body = bodyObject(req);
    for (const key of Object.keys(body))
      if (!FIELDS.has(key)) throw new AppError('validation_error', `invalid ${MESSAGE}: unknown field "${key}"`);
    const model = modelId(body, MESSAGE);
    if (model === undefined) throw violation(MESSAGE, 'AuthorizationModelId', REASON.required);
    return { storeId: id, modelId: model, sampling: sampling(body.sampling) };
  },
  async handle(input, ctx) {
    return ok({ shadow: shadowOut(await ctx.latch.setShadow(input)) });
  },
});

const readShadow = storeEndpoint({
  name: 'ReadShadowModel',
  op: 'read-shadow-model',
  method: 'get',
  path: '/stores/:store_id/shadow',
  async handle(input, ctx) {
    const s = await ctx.latch.getShadow(input.storeId);
    return ok({ shadow: s ? shadowOut(s) : null });
  },
});

const clearShadow = storeEndpoint({
  name: 'DeleteShadowModel',
  op: 'delete-shadow-model',
  method: 'del',
  path: '/stores/:store_id/shadow',
  async handle(input, ctx) {
    await ctx.latch.clearShadow(input.storeId);
    return NO_CONTENT;
  },
});

const report = storeEndpoint({
  name: 'ReadShadowReport',
  op: 'read-shadow-report',
  method: 'get',
  path: '/stores/:store_id/shadow/report',
  async handle(input, ctx) {
    return ok(reportOut(await ctx.latch.shadowReport(input.storeId)));
  },
});

export const SHADOW_ENDPOINTS: readonly Endpoint[] = [setShadow, readShadow, clearShadow, report];
