// ExplainCheck (debugging extension, docs/playground.md): Check on the reference checker
// (evaluation/semantics/check.ts) recording its trace, not on the walker. Validation errors throw
// as Check's do; an evaluation error (a condition, the depth limit) is part of the answer, in the
// trace.

import type { CheckExplanation, CheckInput } from '../contract.js';
import { ReferenceChecker, TRUE } from '../evaluation/semantics/check.js';
import { RequestState } from '../evaluation/semantics/context.js';
import { Trace } from '../evaluation/semantics/trace.js';
import { checkItem } from './check.js';
import type { EngineParts } from './parts.js';
import { pastExplainCheck } from './past-queries.js';
import { admit, evalContext, freshIndex } from './request-steps.js';

export async function explainCheck(e: EngineParts, input: CheckInput): Promise<CheckExplanation> {
  await admit(e, input);
  if (input.at) return pastExplainCheck(e, input, input.at);
  const deadline = Date.now() + e.config.checkDeadlineMs;
  const index = await freshIndex(e, input, deadline);
  const model = await e.models.resolve(input.storeId, input.modelId);
  const k = input.tupleKey;
  checkItem(model, k, input);
  const ctx = evalContext(e, input, model, index.snapshot(), deadline);
  const trace = new Trace();
  const out = new ReferenceChecker(new RequestState(ctx), k.user, trace).eval(k.object, k.relation, 0);
  const tree = trace.root.children?.[0] ?? trace.root; // eval opened exactly one node at the top
  return { allowed: out === TRUE, modelId: model.id, tree, truncated: trace.dropped };
}
