// Test-side model loading: DSL or JSON → validated → CompiledModel, through src/model.

import type { AuthorizationModel, AuthorizationModelInput } from '../../src/domain/types.js';
import { compileModel } from '../../src/model/compile.js';
import { dslToModel } from '../../src/model/dsl.js';
import type { CompiledModel } from '../../src/model/types.js';
import { validateModel } from '../../src/model/validate.js';

let counter = 0;

/** Validate (throws on an invalid model) and compile, assigning a fresh id unless one is given. */
export function compile(model: AuthorizationModelInput & { id?: string }): CompiledModel {
  const valid = validateModel(model);
  const id = model.id ?? `01HTEST${String(++counter).padStart(19, '0')}`;
  return compileModel({ ...valid, id } as AuthorizationModel);
}

export function compileDsl(text: string): CompiledModel {
  return compile(dslToModel(text));
}
