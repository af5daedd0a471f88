// Shared pieces of the engine tests that run LatchService nodes on PostgreSQL: the HTTP tests'
// model, a `viewer` tuple key, a MINIMIZE_LATENCY Check of it, and a node with no worker pool and
// no polling (events only), so a test sees exactly what its own writes and events do.
import type { AuthorizationModelInput, TupleKey } from '../../src/domain/types.js';
import type { CheckInput, EngineConfig } from '../../src/engine/contract.js';
import { MODEL as MODEL_JSON } from '../http/helpers.js';
import { DEFAULT_ENGINE_CONFIG } from '../../src/engine/config.js';

export const MODEL = MODEL_JSON as unknown as AuthorizationModelInput;

export const tk = (object: string, user: string): TupleKey => ({ object, relation: 'viewer', user });

export const checkOf = (storeId: string, key: TupleKey): CheckInput => ({
  storeId,
  tupleKey: key,
  contextualTuples: [],
  consistency: 'MINIMIZE_LATENCY',
});

export const config: EngineConfig = { ...DEFAULT_ENGINE_CONFIG, workers: 0, pollIntervalMs: 0 };
