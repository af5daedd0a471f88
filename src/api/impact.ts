// ImpactAuthorizationModel (latch extension, docs/changing-models.md): the body is a
// WriteAuthorizationModel body (the candidate, not written) plus `authorization_model_id` (the
// model compared against; the latest when absent) and `options` {sample_size, assertions}. The
// answer streams `{"result": line}` NDJSON like StreamedListObjects, as a live stream (a consumer
// that stops reading is cut off); an invalid candidate or option is a plain 400 before any line.

import type { ImpactInput } from '../engine/contract.js';
import { AppError } from '../errors.js';
import { endpoint, type Endpoint } from './endpoint.js';
import { modelInput } from './models.js';
import { bodyObject } from './stores.js';
import { REASON, boolValue, int32, isObj, modelId, storeId, typeError, violation, type Obj } from './validate.js';

const MESSAGE = 'ImpactAuthorizationModelRequest';
/** Rejected tuples listed per reason by default, and at most. */
const DEFAULT_SAMPLE = 10;
const MAX_SAMPLE = 1000;
const OPTIONS = new Set(['sample_size', 'assertions']);

function options(body: Obj): { sampleSize: number; assertions: boolean } {
  const v = body.options;
  if (v === undefined || v === null) return { sampleSize: DEFAULT_SAMPLE, assertions: false };
  if (!isObj(v)) throw typeError('options', 'message', v);
  for (const key of Object.keys(v))
    if (!OPTIONS.has(key)) throw new AppError('validation_error', `invalid ${MESSAGE}.Options: unknown field "${key}"`);
  const n = int32(v.sample_size, 'sample_size') ?? DEFAULT_SAMPLE;
  if (n < 0 || n > MAX_SAMPLE) throw violation(`${MESSAGE}.Options`, 'SampleSize', REASON.range(0, MAX_SAMPLE));
  const assertions =
    v.assertions === undefined || v.assertions === null ? false : boolValue(v.assertions, 'assertions');
  return { sampleSize: n, assertions };
}

export const IMPACT_MODEL: Endpoint = endpoint<ImpactInput>({
  name: 'ImpactAuthorizationModel',
  op: 'impact-authorization-model',
  method: 'post',
  path: '/stores/:store_id/authorization-models/impact',
  streaming: true,
  plainErrors: true,
  parse(req) {
    const id = storeId(req.params.store_id, MESSAGE);
    const body = bodyObject(req);
    const base = modelId(body, MESSAGE);
    const opts = options(body);
    return { storeId: id, candidate: modelInput(body), baseModelId: base, ...opts };
  },
  async handle(input, ctx) {
    const impact = await ctx.latch.impact(input, ctx.signal);
    ctx.modelId = impact.baseModelId;
    return { stream: impact.lines, live: true };
  },
});
