// Opening an impact: everything that can fail with a plain error answer happens here, before the
// stream's first line: the candidate validated as a model write would be (the same 400 codes), the
// base model resolved (2001 / 2020), the store's index loaded, the assertions read.

import { compileModel } from '../../model/compile.js';
import { validateModel } from '../../model/validate.js';
import type { Storage } from '../../storage/types.js';
import type { Indexes } from '../indexes.js';
import type { ModelCache } from '../models.js';
import { impactLines } from './stream.js';
import type { ImpactInput, ImpactStream } from './types.js';

export interface ImpactDeps {
  readonly models: ModelCache;
  readonly indexes: Indexes;
  readonly storage: Storage;
  readonly resolveDepth: number;
  /** The clock of tuple expiry. */
  readonly now: () => number;
}

/** Id of the unwritten candidate inside the engine (never a stored model's, which are ULIDs). */
export const CANDIDATE_ID = 'candidate';

export async function openImpact(deps: ImpactDeps, input: ImpactInput, signal?: AbortSignal): Promise<ImpactStream> {
  const candidate = compileModel({ ...validateModel(input.candidate), id: CANDIDATE_ID });
  const base = await deps.models.resolve(input.storeId, input.baseModelId);
  const index = await deps.indexes.get(input.storeId);
  const assertions = input.assertions ? await deps.storage.readAssertions(input.storeId, base.id) : undefined;
  const snapshot = index.snapshot();
  const lines = impactLines(
    {
      snapshot,
      now: deps.now(),
      base,
      candidate,
      resolveDepth: deps.resolveDepth,
      sampleSize: input.sampleSize,
      assertions,
    },
    signal,
  );
  return { baseModelId: base.id, lines };
}
