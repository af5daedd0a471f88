// The checks of one channel frame, sent to the service as one BatchCheck call per group of
// checks sharing store, model and consistency (≤ MAX_GROUP), and answered one by one.

import type { BatchCheckItem, CheckInput, Latch } from '../engine/contract.js';
import type { Consistency } from '../domain/types.js';
import { ALLOWED, DENIED } from '../api/queries.js';
import type { DecisionLog } from '../api/decisions/log.js';
import { errorAnswer, type Answer, type RequestId } from './channel-answer.js';

export interface CheckGroup {
  readonly storeId: string;
  readonly modelId: string | undefined;
  readonly consistency: Consistency;
  /** The highest Latch-Min-Revision among the group's checks. */
  minRevision: number | undefined;
  readonly ids: RequestId[];
  readonly inputs: CheckInput[];
}

/**
 * Checks per service call. The HTTP BatchCheck limit (50) is an API rule, not an engine one:
 * larger groups let the engine amortise its per-call work and move big batches to its workers.
 */
export const MAX_GROUP = 8192;

/** Correlation ids "0" … "8191", made once: a frame of checks allocates no id strings. */
const CORRELATION: readonly string[] = Array.from({ length: MAX_GROUP }, (_, i) => String(i));

/**
 * Answers every check of `g`; resolves with the model id the service used (undefined on failure).
 * With a decision log that samples, each answered check is a Check decision of `clientId`.
 */
export async function runCheckGroup(
  latch: Latch,
  g: CheckGroup,
  answer: (a: Answer) => void,
  decisions?: DecisionLog | undefined,
  clientId = '',
): Promise<string | undefined> {
  const checks: BatchCheckItem[] = new Array<BatchCheckItem>(g.inputs.length);
  for (let i = 0; i < g.inputs.length; i++) {
    const input = g.inputs[i] as CheckInput;
    checks[i] = {
      correlationId: CORRELATION[i] as string,
      tupleKey: input.tupleKey,
      contextualTuples: input.contextualTuples,
      context: input.context,
    };
  }
  try {
    const input = {
      storeId: g.storeId,
      modelId: g.modelId,
      checks,
      consistency: g.consistency,
      minRevision: g.minRevision,
    };
    const r = await latch.batchCheck(input);
    // The correlation ids are the group's own ("0", "1", …), not the client's: not recorded.
    if (decisions?.active) decisions.batch(clientId, 'Check', input, r, false);
    for (let i = 0; i < g.ids.length; i++) {
      const id = g.ids[i] as RequestId;
      const outcome = r.results.get(CORRELATION[i] as string);
      if (!outcome) answer(errorAnswer(id, new Error(`batchCheck returned no result for item ${i}`), 'check'));
      else if ('error' in outcome) answer(errorAnswer(id, outcome.error, 'check'));
      else answer({ id, status: 200, body: outcome.allowed ? ALLOWED.body : DENIED.body });
    }
    return r.modelId;
  } catch (err) {
    for (const id of g.ids) answer(errorAnswer(id, err, 'check'));
    return undefined;
  }
}
