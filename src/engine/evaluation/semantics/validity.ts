// Read-time validity of a stored or contextual tuple against the query's model (docs/reference/semantics.md
// §4.5), delegated to the model layer's single definition (`isValidAtRead`): rules 5-7 of §4.2
// plus "the relation still exists". Invalid tuples are skipped silently by every evaluator.
//
// Example: after `viewer: [user, employee]` becomes `viewer: [user]`, the stored tuple
// `document:1#viewer@employee:x` is invalid (and ignored) until `employee` is allowed again.

import type { TupleEntry } from '../../../index/types.js';
import { isValidAtRead } from '../../../model/tuple-validation.js';
import type { CompiledModel } from '../../../model/types.js';

/** True when `t` fits the model's restrictions for `object#relation` as of this model. */
export function isValidAtReadTime(model: CompiledModel, t: TupleEntry): boolean {
  return isValidAtRead(model, t.object, t.relation, t.user, t.condition?.name || undefined);
}
