// The modelling language in the browser, loaded on demand (its parser is most of the bundle):
// diagnostics with 1-based line and column, DSL → JSON for saving, JSON → DSL for display.

import syntaxTransformer from '@openfga/syntax-transformer';
import type { ModelJson } from './types.js';

const { transformer } = syntaxTransformer;

export interface Diagnostic {
  /** 1-based. */
  readonly line: number;
  /** 1-based. */
  readonly column: number;
  readonly endColumn: number;
  readonly message: string;
}

interface LibError {
  msg?: string;
  message?: string;
  line?: { start: number; end: number };
  column?: { start: number; end: number };
}

function toDiagnostic(e: LibError): Diagnostic {
  const line = (e.line?.start ?? 0) + 1;
  const column = (e.column?.start ?? 0) + 1;
  return {
    line,
    column,
    endColumn: Math.max(column + 1, (e.column?.end ?? 0) + 1),
    message: e.msg ?? e.message ?? String(e),
  };
}

/** Every syntax or validation error of `text`, empty when it is a valid model. */
export function diagnose(text: string): Diagnostic[] {
  try {
    syntaxTransformer.validator.validateDSL(text);
    return [];
  } catch (err) {
    const list = (err as { errors?: LibError[] }).errors;
    if (Array.isArray(list) && list.length > 0) return list.map(toDiagnostic);
    return [toDiagnostic(err as LibError)];
  }
}

export function dslToJson(text: string): ModelJson {
  return transformer.transformDSLToJSONObject(text) as unknown as ModelJson;
}

export function jsonToDsl(model: ModelJson): string {
  return transformer.transformJSONToDSL(model as unknown as Parameters<typeof transformer.transformJSONToDSL>[0]);
}
