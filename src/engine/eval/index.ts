// The reference evaluator: exact v1 semantics for Check, ListObjects, ListUsers and Expand over a
// TupleView and a CompiledModel. The engine uses it for every list API and as the Check fallback.

export { type EvalContext, RequestState } from './context.js';
export { evalCheck, Checker, type Outcome, TRUE, FALSE, CYCLE } from './check.js';
export { listObjects, type ListObjectsQuery } from './list-objects.js';
export { listUsers, toListedUser, type ListUsersQuery } from './list-users.js';
export { expand } from './expand.js';
export { MemoryTupleView, overlayView } from './view.js';
export { isValidAtReadTime } from './validity.js';
