// ExplainCheck — `POST /stores/{store_id}/check/explain`, a latch debugging extension (docs/reference/decisions.md D15:
// additive, under the store's path; docs/playground.md): the CheckRequest body of Check, answered
// by the reference evaluator with the trace of every relation, rewrite and tuple it looked at.
// Same scope and rate-limit class as Check. Never on Check's path: Check's route is unchanged.

import type { CheckInput } from '../engine/contract.js';
import { endpoint, ok, type Endpoint } from './endpoint.js';
import { parseCheck } from './queries.js';
import { bodyObject } from './stores.js';

export const EXPLAIN_CHECK: Endpoint = endpoint<CheckInput>({
  name: 'ExplainCheck',
  op: 'explain-check',
  method: 'post',
  path: '/stores/:store_id/check/explain',
  minRevision: true,
  parse: (req) => parseCheck(req.params.store_id, bodyObject(req), req.minRevision, req.atRevision),
  async handle(input, ctx) {
    const r = await ctx.latch.explainCheck(input);
    ctx.modelId = r.modelId;
    if (r.atRevision !== undefined) ctx.revision = r.atRevision;
    return ok({ allowed: r.allowed, tree: r.tree, truncated_nodes: r.truncated });
  },
});
