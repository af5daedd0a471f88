// The one import of @openfga/syntax-transformer: a typed view of the few functions latch uses.
// The package is CommonJS and types its models with @openfga/sdk; we speak our own JSON types,
// so the casts between the two live here and nowhere else.

import syntaxTransformer from '@openfga/syntax-transformer';
import type { AuthorizationModelInput } from '../domain/types.js';

const { transformer, validator } = syntaxTransformer;

/** One error as the library reports it (0-based positions; `metadata` for validation errors). */
export interface LibraryError {
  readonly msg: string;
  readonly type?: string;
  readonly file?: string | undefined;
  readonly line?: { start: number; end: number } | undefined;
  readonly column?: { start: number; end: number } | undefined;
  readonly metadata?: Readonly<Record<string, unknown>> | undefined;
}

interface ModFileProperty<T> {
  value: T;
  line: { start: number; end: number };
  column: { start: number; end: number };
}

/** A parsed `fga.mod` file with the positions of its values. */
export interface FgaMod {
  schema: ModFileProperty<string>;
  contents: ModFileProperty<ModFileProperty<string>[]>;
}

type SdkModel = Parameters<typeof transformer.transformJSONToDSL>[0];

export const lib = {
  dslToJson: (text: string): AuthorizationModelInput =>
    transformer.transformDSLToJSONObject(text) as unknown as AuthorizationModelInput,
  jsonToDsl: (model: AuthorizationModelInput, includeSourceInformation: boolean): string =>
    transformer.transformJSONToDSL(model as unknown as SdkModel, { includeSourceInformation }),
  modulesToJson: (files: { name: string; contents: string }[], schemaVersion: string): AuthorizationModelInput =>
    transformer.transformModuleFilesToModel(files, schemaVersion) as unknown as AuthorizationModelInput,
  modFileToJson: (text: string): FgaMod => transformer.transformModFileToJSON(text) as FgaMod,
  modulesOf: (model: AuthorizationModelInput): string[] => transformer.getModulesFromJSON(model as unknown as SdkModel),
  validateDsl: (text: string): void => validator.validateDSL(text),
  validateJson: (model: unknown): void => validator.validateJSON(model as Parameters<typeof validator.validateJSON>[0]),
  isObjectId: (id: string): boolean => validator.Validator.objectId(id),
};

/** The collected errors of a library exception (`errors` of its multi-error classes), else undefined. */
export function libraryErrors(err: unknown): LibraryError[] | undefined {
  if (!(err instanceof Error) || !('errors' in err) || !Array.isArray(err.errors)) return undefined;
  return (err.errors as unknown[]).map(toLibraryError);
}

function toLibraryError(e: unknown): LibraryError {
  if (typeof e !== 'object' || e === null) return { msg: String(e) };
  const r = e as Record<string, unknown>;
  const msg = typeof r.msg === 'string' ? r.msg : e instanceof Error ? e.message : String(e);
  return {
    msg,
    type: typeof r.type === 'string' ? r.type : undefined,
    file: typeof r.file === 'string' ? r.file : undefined,
    line: r.line as LibraryError['line'],
    column: r.column as LibraryError['column'],
    metadata: (r.metadata ?? undefined) as LibraryError['metadata'],
  };
}
