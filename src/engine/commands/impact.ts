// Impact of a candidate model (docs/changing-models.md): everything that can fail with a plain
// error answer happens here, before the stream's first line: the store known, the candidate
// validated as a model write would be (the same 400 codes), the base model resolved (2001 / 2020),
// the store's index loaded, the assertions read. The lines come from evaluation/impact/stream.ts.

import { compileModel } from '../../model/compile.js';
import { validateModel } from '../../model/validate.js';
import type { ImpactInput, ImpactStream } from '../contract.js';
import { impactLines } from '../evaluation/impact/stream.js';
import type { EngineParts } from './parts.js';
import { storeOf } from './request-steps.js';

/** Id of the unwritten candidate inside the engine (never a stored model's, which are ULIDs). */
const CANDIDATE_ID = 'candidate';

export async function impact(e: EngineParts, input: ImpactInput, signal?: AbortSignal): Promise<ImpactStream> {
  await storeOf(e, input.storeId);
  const candidate = compileModel({ ...validateModel(input.candidate), id: CANDIDATE_ID });
  const base = await e.models.resolve(input.storeId, input.baseModelId);
  const index = await e.indexes.get(input.storeId);
  const assertions = input.assertions ? await e.storage.readAssertions(input.storeId, base.id) : undefined;
  const world = {
    snapshot: index.snapshot(),
    now: e.clock(),
    base,
    candidate,
    resolveDepth: e.config.resolveDepth,
    sampleSize: input.sampleSize,
    assertions,
  };
  return { baseModelId: base.id, lines: impactLines(world, signal) };
}
