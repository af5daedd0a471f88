// Expand: the contextual-tuple limit and the store, the index at the asked freshness (bounded by
// the Check deadline: Expand has none of its own), the model with Expand's codes, then the
// userset tree of one level (evaluation/list/expand.ts) over the snapshot seen now plus the
// contextual tuples.

import type { ExpandInput, ExpandResult } from '../contract.js';
import { expand as expandTree } from '../evaluation/list/expand.js';
import { overlayView } from '../evaluation/semantics/view.js';
import type { EngineParts } from './parts.js';
import { pastExpand } from './past-queries.js';
import { admit, freshIndex } from './request-steps.js';
import { validateContextualTuples, validateObjectRelation } from './validate-request.js';

export async function expand(e: EngineParts, input: ExpandInput): Promise<ExpandResult> {
  await admit(e, input);
  if (input.at) return pastExpand(e, input, input.at);
  const index = await freshIndex(e, input, Date.now() + e.config.checkDeadlineMs);
  const model = await e.models.resolve(input.storeId, input.modelId);
  validateContextualTuples(model, input.contextualTuples, 'expand');
  const colon = input.object.indexOf(':');
  const type = colon === -1 ? input.object : input.object.slice(0, colon);
  validateObjectRelation(model, type, input.relation, 'expand');
  const view = overlayView(index.snapshot().at(e.clock()), input.contextualTuples);
  return { tree: { root: expandTree(model, view, input.object, input.relation) }, modelId: model.id };
}
