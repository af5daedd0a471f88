// Public surface of src/model: DSL ↔ JSON, model validation and compilation, conditions, tuple checks.
export * from './types.js';
export {
  DslError,
  dslToModel,
  modelToDsl,
  modulesToModel,
  parseFgaMod,
  dslDiagnostics,
  jsonDiagnostics,
  modulesOf,
  isToolingObjectId,
  locateInDsl,
  stripComments,
} from './dsl.js';
export type { Diagnostic, FgaMod } from './dsl.js';
export { ModelValidationError, validateModel } from './validate.js';
export { normalizeModel, MAX_TYPES, MAX_MODEL_BYTES } from './validate-shape.js';
export { compileModel } from './compile.js';
export { compileCondition } from './conditions.js';
export {
  findTupleProblem,
  validateTuple,
  isValidAtRead,
  MAX_CONDITION_CONTEXT_BYTES,
  type TupleProblem,
} from './tuple-validation.js';
export {
  validateQueryKey,
  validateQueryTarget,
  validateQueryUser,
  validateUserFilter,
  type QueryApi,
} from './query-validation.js';
export { validateDslModel, validateAndCompile } from './load.js';
