// Model loading entry points that combine parsing and validation: DSL text → validated model,
// with the DSL line and column appended to semantic errors (DECISIONS D5).
// Example: `define viewer: [team#lead]` with no `team#lead` → 400 relation_not_found,
//   "… is not valid: relation 'team#lead' not found (line 7, column 12)".

import type { AuthorizationModel, AuthorizationModelInput } from '../domain/types.js';
import { compileModel } from './compile.js';
import { dslToModel, locateInDsl } from './dsl.js';
import type { CompiledModel } from './types.js';
import { ModelValidationError, validateModel } from './validate.js';

/** Parse DSL text and validate it as the API would; errors carry the 1-based DSL position. */
export function validateDslModel(text: string): AuthorizationModelInput {
  const model = dslToModel(text);
  try {
    return validateModel(model);
  } catch (err) {
    if (!(err instanceof ModelValidationError) || err.type === undefined) throw err;
    const at = locateInDsl(text, err.type, err.relation);
    if (!at) throw err;
    throw new ModelValidationError(err.code, `${err.message} (line ${at.line}, column ${at.column})`, err.type, err.relation, err.condition);
  }
}

/** Validate a JSON model body and compile it under `id` (what WriteAuthorizationModel needs). */
export function validateAndCompile(input: unknown, id: string): CompiledModel {
  const model: AuthorizationModel = { ...validateModel(input), id };
  return compileModel(model);
}
