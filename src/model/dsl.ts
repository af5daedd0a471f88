// DSL ↔ JSON for authorization models, through the OpenFGA language library (docs/reference/decisions.md D14).
// Library failures become `AppError('validation_error')` whose message gives the 1-based line and
// column and names the enclosing type and relation, e.g.
//   `syntax error at line 6, column 29 (type 'doc', relation 'viewer'): mismatched input ...`.
// The structured, 0-based diagnostics stay available on `DslError.diagnostics` for tooling.

import { AppError } from '../errors.js';
import type { AuthorizationModelInput } from '../domain/types.js';
import { lib, libraryErrors, type FgaMod, type LibraryError } from './syntax.js';

export type { FgaMod, LibraryError as Diagnostic } from './syntax.js';

/** A DSL, module or fga.mod failure: `validation_error` with every library diagnostic attached. */
export class DslError extends AppError {
  readonly diagnostics: readonly LibraryError[];
  constructor(message: string, diagnostics: readonly LibraryError[], cause?: unknown) {
    super('validation_error', message, { cause });
    this.diagnostics = diagnostics;
  }
}

/** DSL text → JSON model. Throws DslError on syntax errors (incl. duplicate relations/conditions). */
export function dslToModel(text: string): AuthorizationModelInput {
  return wrap(() => lib.dslToJson(text), { main: text });
}

/** JSON model → DSL text (the library's byte-exact layout). Throws `validation_error` when the DSL cannot express it. */
export function modelToDsl(
  model: AuthorizationModelInput,
  options: { includeSourceInformation?: boolean } = {},
): string {
  try {
    // The library rewrites parts of a modular model's metadata in place: hand it a copy so the
    // caller's model (often a cached, shared one) is never changed by rendering it.
    return lib.jsonToDsl(structuredClone(model), options.includeSourceInformation ?? false);
  } catch (err) {
    throw new AppError('validation_error', err instanceof Error ? err.message : String(err), { cause: err });
  }
}

/** Module files (`module m` headers, `extend type`) → one schema-1.2 model, validated by the library. */
export function modulesToModel(
  files: { name: string; contents: string }[],
  schemaVersion = '1.2',
): AuthorizationModelInput {
  const clean = files.map((f) => ({ name: f.name, contents: stripComments(f.contents) }));
  const sources = Object.fromEntries(clean.map((f) => [f.name, f.contents]));
  return wrap(() => lib.modulesToJson(clean, schemaVersion), sources, fixPosition);
}

/** Parse an `fga.mod` file (YAML: `schema: '1.2'`, `contents: [a.fga, ...]`) with 0-based positions. */
export function parseFgaMod(text: string): FgaMod {
  return wrap(() => lib.modFileToJson(text), { 'fga.mod': text });
}

/**
 * Every tooling diagnostic of a DSL text (syntax, then the library's semantic validator), [] when
 * clean. Stricter than the API in places (unused conditions, duplicate restrictions): see docs/reference/semantics.md §3.6.
 */
export function dslDiagnostics(text: string): LibraryError[] {
  const clean = stripComments(text);
  return collect(() => lib.validateDsl(clean)).map((d) => fixPosition(d, clean));
}

/** The library's tooling validation of a JSON model (no positions). */
export function jsonDiagnostics(model: unknown): LibraryError[] {
  return collect(() => lib.validateJson(model));
}

/** Sorted distinct module names of a modular model. */
export function modulesOf(model: AuthorizationModelInput): string[] {
  return lib.modulesOf(model);
}

/** The tooling object-id rule (store files, CLI); not the API's rule (docs/reference/semantics.md §1.2). */
export function isToolingObjectId(id: string): boolean {
  return lib.isObjectId(id);
}

/** 1-based position of `define <relation>` (or of `type <type>` when no relation) in DSL text. */
export function locateInDsl(
  text: string,
  type: string,
  relation?: string,
): { line: number; column: number } | undefined {
  const lines = text.split(/\r\n|\r|\n/);
  const typeRe = new RegExp(`^\\s*(extend\\s+)?type\\s+${escape(type)}\\s*(#.*)?$`);
  const start = lines.findIndex((l) => typeRe.test(l));
  if (start === -1) return undefined;
  if (relation === undefined) return { line: start + 1, column: (lines[start] ?? '').indexOf(type) + 1 };
  const defRe = new RegExp(`^\\s*define\\s+${escape(relation)}\\s*:`);
  for (let i = start + 1; i < lines.length && !/^\s*(extend\s+)?type\s|^\s*condition\s/.test(lines[i] ?? ''); i++) {
    const l = lines[i] ?? '';
    if (defRe.test(l)) return { line: i + 1, column: l.indexOf(relation, l.indexOf('define') + 6) + 1 };
  }
  return undefined;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

function collect(fn: () => void): LibraryError[] {
  try {
    fn();
    return [];
  } catch (err) {
    return libraryErrors(err) ?? [{ msg: err instanceof Error ? err.message : String(err) }];
  }
}

/**
 * The DSL comment pre-pass (docs/reference/semantics.md §2.1), applied before the library sees the text so that its
 * position lookups, which match whole lines, are not thrown off by trailing comments. Line and
 * column numbers of the remaining text are unchanged.
 */
export function stripComments(text: string): string {
  return text
    .split('\n')
    .map((line) => (line.trimStart().startsWith('#') ? '' : (line.split(' #')[0] ?? '').trimEnd()))
    .join('\n');
}

/**
 * The library finds an unused condition's line by prefix (`condition less` matches
 * `condition less_than(`); re-resolve it by exact name in the file it came from.
 */
function fixPosition(d: LibraryError, text: string | undefined): LibraryError {
  const name = d.metadata?.symbol;
  if (d.metadata?.errorType !== 'condition-not-used' || typeof name !== 'string' || text === undefined) return d;
  const lines = text.split('\n');
  const re = new RegExp(`^condition\\s+${escape(name)}\\s*\\(`);
  const line = lines.findIndex((l) => re.test(l.trim()));
  if (line === -1) return d;
  const column = (lines[line] ?? '').indexOf(name, (lines[line] ?? '').indexOf('condition') + 9);
  return { ...d, line: { start: line, end: line }, column: { start: column, end: column + name.length } };
}

function wrap<T>(
  fn: () => T,
  sources: Record<string, string>,
  fix?: (d: LibraryError, text: string | undefined) => LibraryError,
): T {
  try {
    return fn();
  } catch (err) {
    const raw = libraryErrors(err) ?? [{ msg: err instanceof Error ? err.message : String(err) }];
    const diagnostics = fix ? raw.map((d) => fix(d, sources[d.file ?? ''])) : raw;
    throw new DslError(describe(diagnostics, sources), diagnostics, err);
  }
}

/** Wire message: the first diagnostic, 1-based, with its type/relation context; a count of the rest. */
function describe(diagnostics: readonly LibraryError[], sources: Record<string, string>): string {
  const first = diagnostics[0];
  if (!first) return 'invalid model';
  const kind = first.type === 'syntax' || first.type === undefined ? 'syntax error' : `${first.type} error`;
  const text = sources[first.file ?? ''] ?? (Object.keys(sources).length === 1 ? Object.values(sources)[0] : undefined);
  const where = first.line
    ? ` at ${first.file ? `${first.file} ` : ''}line ${first.line.start + 1}, column ${(first.column?.start ?? 0) + 1}`
    : '';
  const ctx = first.line && text !== undefined ? context(text, first.line.start, first.metadata) : '';
  const more =
    diagnostics.length > 1 ? ` (and ${diagnostics.length - 1} more error${diagnostics.length > 2 ? 's' : ''})` : '';
  return `${kind}${where}${ctx}: ${first.msg}${more}`;
}

/** ` (type 'T', relation 'R')` for the definition enclosing 0-based `line`, from metadata or by scanning upwards. */
function context(text: string, line: number, metadata: LibraryError['metadata']): string {
  let type = typeof metadata?.type === 'string' ? metadata.type : undefined;
  let relation = typeof metadata?.relation === 'string' ? metadata.relation : undefined;
  const lines = text.split(/\r\n|\r|\n/);
  for (let i = Math.min(line, lines.length - 1); i >= 0 && type === undefined; i--) {
    const l = lines[i] ?? '';
    const def = /^\s*define\s+([^\s:]+)/.exec(l);
    if (def && relation === undefined) relation = def[1];
    const t = /^\s*(?:extend\s+)?type\s+(\S+)/.exec(l);
    if (t) type = t[1];
    if (/^\s*condition\s/.test(l)) return ` (condition ${/condition\s+([^\s(]+)/.exec(l)?.[1] ?? ''})`;
  }
  if (type === undefined) return '';
  return relation === undefined ? ` (type '${type}')` : ` (type '${type}', relation '${relation}')`;
}
