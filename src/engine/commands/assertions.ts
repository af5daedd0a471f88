// Assertions: read and write a model's test assertions, after the store and the model are known;
// each written assertion's tuple key is validated against the model as a Check key would be.

import type { Assertion } from '../../domain/types.js';
import type { EngineParts } from './parts.js';
import { storeOf } from './request-steps.js';
import { validateCheckKey } from './validate-request.js';

export async function readAssertions(e: EngineParts, storeId: string, modelId: string): Promise<Assertion[]> {
  await storeOf(e, storeId);
  await e.models.resolve(storeId, modelId);
  return e.storage.readAssertions(storeId, modelId);
}

export async function writeAssertions(
  e: EngineParts,
  storeId: string,
  modelId: string,
  assertions: readonly Assertion[],
): Promise<void> {
  await storeOf(e, storeId);
  const model = await e.models.resolve(storeId, modelId);
  for (const a of assertions) validateCheckKey(model, a.tuple_key);
  await e.storage.writeAssertions(storeId, modelId, assertions);
}
