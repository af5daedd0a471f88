// Model loading entry points that combine parsing and validation: DSL text → validated model,
// with the DSL line and column appended to semantic errors (docs/reference/decisions.md D5).
// Example: `define viewer: [team#lead]` with no `team#lead` → 400 relation_not_found,
//   "… is not valid: relation 'team#lead' not found (line 7, column 12)".

import type { AuthorizationModel, AuthorizationModelInput } from '../domain/types.js';
import { compileModel } from './compile.js';
import { dslDiagnostics, dslToModel, locateInDsl } from './dsl.js';
import type { CompiledModel } from './types.js';
import { ModelValidationError, validateModel } from './validate.js';

/** Parse DSL text and validate it as the API would; errors carry the 1-based DSL position. */
export function validateDslModel(text: string): AuthorizationModelInput {
  return validated(text, dslToModel(text));
}

/**
 * DSL text → the library's JSON model, as written (not normalised), after validating it as the
 * API would: what the command line sends, so that a semantic error is reported with its DSL
 * position before the server, which only sees JSON, could report it without one.
 */
export function parseDslModel(text: string): AuthorizationModelInput {
  const model = dslToModel(text);
  validated(text, model);
  return model;
}

function validated(text: string, model: AuthorizationModelInput): AuthorizationModelInput {
  try {
    return validateModel(model);
  } catch (err) {
    if (!(err instanceof ModelValidationError) || err.type === undefined) throw err;
    const at = pointAt(text, err) ?? locateInDsl(text, err.type, err.relation);
    if (!at) throw err;
    throw new ModelValidationError(
      err.code,
      `${err.message} (line ${at.line}, column ${at.column})`,
      err.type,
      err.relation,
      err.condition,
    );
  }
}

/**
 * The exact token when the language library's own validator flags one in the same relation (an
 * unknown type or relation in a restriction, e.g. \`team\` in \`[user, team#member]\`): 1-based.
 * Undefined when it flags nothing there; the caller then points at the relation's definition.
 */
function pointAt(text: string, err: ModelValidationError): { line: number; column: number } | undefined {
  for (const d of dslDiagnostics(text)) {
    const m = d.metadata;
    if (!d.line || !d.column || m === undefined || m.relation !== err.relation) continue;
    if (m.type !== err.type && m.offendingType !== err.type) continue;
    if (typeof m.symbol !== 'string' || !err.message.includes(`'${m.symbol}`)) continue;
    return { line: d.line.start + 1, column: d.column.start + 1 };
  }
  return undefined;
}

/** Validate a JSON model body and compile it under `id` (what WriteAuthorizationModel needs). */
export function validateAndCompile(input: unknown, id: string): CompiledModel {
  const model: AuthorizationModel = { ...validateModel(input), id };
  return compileModel(model);
}
