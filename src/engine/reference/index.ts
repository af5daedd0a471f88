// The reference evaluator (the oracle): exact v1 semantics for Check and ListObjects over a
// TupleView and a CompiledModel, by direct recursion. The wasm walker and the indexed ListObjects
// walk are differential-tested against it; docs/architecture.md "Which code answers each query"
// lists the places production uses it.

export { type EvalContext, RequestState } from './context.js';
export { evalCheck, ReferenceChecker, type Outcome, TRUE, FALSE, CYCLE } from './check.js';
export { listObjects, type ListObjectsQuery } from './list-objects.js';
export { MemoryTupleView, overlayView } from './view.js';
export { isValidAtReadTime } from './validity.js';
