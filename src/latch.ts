// The embedded API: run latch in-process. `openLatch()` gives the same service the HTTP server
// and the CLI use, on an in-memory store or on LevelDB (`openLatch({ path: './data' })`).

export { openLatch, type LatchOptions } from './engine/service.js';
export { listAllObjects, listAllUsers } from './engine/evaluation/list/pages.js';
export type * from './engine/contract.js';
export type * from './domain/types.js';
export { AppError, type ErrorCode } from './errors.js';
export { dslToModel, modelToDsl } from './model/dsl.js';
