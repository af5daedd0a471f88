// The reference evaluator as a test oracle: exact v1 semantics for Check and ListObjects over a
// TupleView and a CompiledModel, by direct recursion. Its checker (src/engine/evaluation/semantics)
// also serves ExplainCheck, ListUsers and the ListObjects confirmation in production; the entry
// points here (evalCheck, the recursive listObjects) serve only tests, the differential and bench.

import { ReferenceChecker } from '../../src/engine/evaluation/semantics/check.js';
import { RequestState, type EvalContext } from '../../src/engine/evaluation/semantics/context.js';

export { type EvalContext, RequestState } from '../../src/engine/evaluation/semantics/context.js';
export { ReferenceChecker, type Outcome, TRUE, FALSE, CYCLE } from '../../src/engine/evaluation/semantics/check.js';
export { listObjects, type ListObjectsQuery } from './reference-list-objects.js';
export { MemoryTupleView, overlayView } from '../../src/engine/evaluation/semantics/view.js';
export { isValidAtReadTime } from '../../src/engine/evaluation/semantics/validity.js';

/**
 * Check(user, relation, object) with exact v1 semantics. Throws `fail.tooComplex()` (2002) when
 * the depth limit decides the answer, `AppError('validation_error')` (2000) when a condition error
 * does, and `deadline_exceeded` once `ctx.deadline` passes. Inputs are assumed validated.
 */
export function evalCheck(ctx: EvalContext, object: string, relation: string, user: string): boolean {
  return new ReferenceChecker(new RequestState(ctx), user).check(object, relation);
}
