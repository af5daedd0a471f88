// The store's shadow model (docs/changing-models.md): set (the model must be one of the store's,
// else 404 shadow_model_not_found; sampling in [0, 1]), read, clear, and this node's report. The
// setting is stored, so every node and a restart agree; this node's copy changes at once.

import { AppError, fail } from '../../errors.js';
import type { ShadowSetting } from '../../domain/types.js';
import type { ShadowInput, ShadowReport } from '../contract.js';
import type { ShadowCheckJob } from '../state/shadow-queue.js';
import type { EngineParts } from './parts.js';
import { storeOf } from './request-steps.js';

export async function setShadow(e: EngineParts, input: ShadowInput): Promise<ShadowSetting> {
  if (!(input.sampling >= 0 && input.sampling <= 1))
    throw fail.validation(`invalid sampling: ${String(input.sampling)} is not a number from 0 to 1`);
  await storeOf(e, input.storeId);
  if (!(await e.storage.getModel(input.storeId, input.modelId)))
    throw new AppError('shadow_model_not_found', `Authorization Model '${input.modelId}' not found in this store`);
  const setting: ShadowSetting = {
    modelId: input.modelId,
    sampling: input.sampling,
    updatedAt: new Date().toISOString(),
  };
  await e.storage.writeShadow(input.storeId, setting);
  e.shadowSettings.put(input.storeId, setting);
  e.shadowRecords.reset(input.storeId, setting.modelId, setting.updatedAt);
  return setting;
}

export async function getShadow(e: EngineParts, storeId: string): Promise<ShadowSetting | undefined> {
  await storeOf(e, storeId);
  const setting = await e.storage.readShadow(storeId);
  e.shadowSettings.put(storeId, setting);
  return setting;
}

export async function clearShadow(e: EngineParts, storeId: string): Promise<void> {
  await storeOf(e, storeId);
  await e.storage.writeShadow(storeId, undefined);
  e.shadowSettings.put(storeId, undefined);
}

export async function shadowReport(e: EngineParts, storeId: string): Promise<ShadowReport> {
  const setting = await getShadow(e, storeId);
  return e.shadowRecords.report(storeId, setting);
}

/**
 * Queues the sampled shadow evaluation of a Check (or a BatchCheck item) answered `allowed` under
 * `modelId` over `snapshot` at `now`; a no-op unless the store has a shadow that samples it.
 */
export function offerCheck(
  e: EngineParts,
  operation: 'check' | 'batch-check',
  storeId: string,
  modelId: string,
  snapshot: ShadowCheckJob['snapshot'],
  now: number,
  request: ShadowCheckJob['request'],
  allowed: boolean,
): void {
  const shadowModelId = e.shadow.sample(storeId, modelId);
  if (shadowModelId === undefined) return;
  e.shadow.offer({ operation, storeId, snapshot, now, modelId, shadowModelId, at: Date.now(), request, allowed });
}
