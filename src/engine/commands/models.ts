// Authorization models: write (validated with the model codes of docs/reference/decisions.md D5,
// stored, then compiled on first use), read (through the compiled-model cache, so an unknown id
// answers authorization_model_not_found) and list, each after the store is known to exist.

import type { AuthorizationModel, AuthorizationModelInput, Page, PageRequest } from '../../domain/types.js';
import { validateModel } from '../../model/validate.js';
import type { EngineParts } from './parts.js';
import { storeOf } from './request-steps.js';

export async function writeModel(e: EngineParts, storeId: string, model: AuthorizationModelInput): Promise<string> {
  await storeOf(e, storeId);
  const valid = validateModel(model);
  const stored = await e.storage.writeModel(storeId, valid);
  e.models.noteWritten(storeId, stored);
  return stored.id;
}

export async function readModel(e: EngineParts, storeId: string, modelId: string): Promise<AuthorizationModel> {
  await storeOf(e, storeId);
  return (await e.models.resolve(storeId, modelId)).json;
}

export async function listModels(
  e: EngineParts,
  storeId: string,
  page: PageRequest,
): Promise<Page<AuthorizationModel>> {
  await storeOf(e, storeId);
  return e.storage.listModels(storeId, page);
}
