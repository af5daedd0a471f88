// The `language` conformance target: the openfga/language DSL tooling suites (conformance README §4),
// run through latch's own wrappers in src/model/dsl.ts. Errors are compared like the TypeScript
// reference tests do (`toMatchObject`: every expected field must be present and equal), in order.

import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import YAML from 'yaml';
import type { AuthorizationModelInput } from '../../src/domain/types.js';
import {
  DslError,
  dslDiagnostics,
  dslToModel,
  isToolingObjectId,
  jsonDiagnostics,
  modelToDsl,
  modulesOf,
  modulesToModel,
  parseFgaMod,
  type Diagnostic,
} from '../../src/model/dsl.js';
import { FileTally, type FileResult, type RunOptions, type Target } from './types.js';

type Obj = Record<string, unknown>;

interface ErrorCase {
  name: string;
  skip?: boolean;
  dsl?: string;
  json?: string;
  modFile?: string;
  expected_errors?: Obj[] | null;
  error_message?: string;
  object_id?: string;
  valid?: boolean;
}

/** Throws unless every field of `expected` is present and equal in `actual` (recursively). */
export function assertMatches(actual: unknown, expected: unknown, where = ''): void {
  if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
    if (actual === null || typeof actual !== 'object')
      throw new Error(`${where}: expected an object, got ${JSON.stringify(actual)}`);
    for (const [k, v] of Object.entries(expected)) assertMatches((actual as Obj)[k], v, `${where}.${k}`);
    return;
  }
  if (!isDeepStrictEqual(actual, expected))
    throw new Error(`${where}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

function assertErrors(actual: readonly Diagnostic[], expected: readonly Obj[]): void {
  if (actual.length !== expected.length) {
    throw new Error(
      `expected ${expected.length} errors, got ${actual.length}: ${JSON.stringify(actual.map((d) => d.msg))}`,
    );
  }
  expected.forEach((e, i) => assertMatches(actual[i], e, `error[${i}]`));
}

/** JSON value equality: key order irrelevant, `undefined` members dropped. */
function assertJsonEqual(actual: unknown, expected: unknown): void {
  const a: unknown = JSON.parse(JSON.stringify(actual));
  if (!isDeepStrictEqual(a, expected))
    throw new Error(`JSON differs:\n  got      ${JSON.stringify(a)}\n  expected ${JSON.stringify(expected)}`);
}

function assertSame(actual: string, expected: string): void {
  if (actual !== expected) throw new Error(`text differs:\n--- got ---\n${actual}\n--- expected ---\n${expected}`);
}

function diagnosticsOf(fn: () => unknown): Diagnostic[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof DslError) return [...err.diagnostics];
    throw err;
  }
  return [];
}

const loadCases = (file: string): ErrorCase[] => YAML.parse(readFileSync(file, 'utf8')) as ErrorCase[];

/** §4.1 and §4.2: parse + full tooling validation must report exactly the expected errors. */
async function dslCases(tally: FileTally, file: string, replayAsModule: boolean): Promise<void> {
  for (const c of loadCases(file)) {
    if (c.skip) continue;
    const expected = c.expected_errors ?? [];
    const dsl = c.dsl ?? '';
    await tally.check(c.name, () => assertErrors(dslDiagnostics(dsl), expected));
    if (!replayAsModule || !dsl.includes('schema 1.1') || dsl.trim().startsWith('module') || dsl.includes('0.9'))
      continue;
    await tally.check(`${c.name} [as module test.fga]`, () => {
      const contents = dsl.replace(/model\n {2}schema 1\.1/, 'module test\n');
      const got = diagnosticsOf(() => modulesToModel([{ name: 'test.fga', contents }], '1.2'));
      assertErrors(
        got,
        expected.map((e) => ({ ...e, metadata: { ...(e.metadata as Obj), module: 'test' } })),
      );
    });
  }
}

async function jsonValidationCases(tally: FileTally, file: string): Promise<void> {
  for (const c of loadCases(file)) {
    await tally.check(c.name, () => assertErrors(jsonDiagnostics(JSON.parse(c.json ?? '{}')), c.expected_errors ?? []));
  }
}

async function jsonToDslCases(tally: FileTally, file: string): Promise<void> {
  for (const c of loadCases(file)) {
    await tally.check(c.name, () => {
      const model = JSON.parse(c.json ?? '{}') as AuthorizationModelInput;
      if (!c.error_message) return void modelToDsl(model);
      let message: string | undefined;
      try {
        modelToDsl(model);
      } catch (err) {
        message = err instanceof Error ? err.message : String(err);
      }
      if (!message?.includes(c.error_message))
        throw new Error(`expected error containing "${c.error_message}", got ${message ?? 'success'}`);
    });
  }
}

async function modFileCases(tally: FileTally, file: string): Promise<void> {
  for (const c of loadCases(file)) {
    await tally.check(c.name, () => {
      const text = c.modFile ?? '';
      if (c.expected_errors?.length)
        return assertErrors(
          diagnosticsOf(() => parseFgaMod(text)),
          c.expected_errors,
        );
      assertJsonEqual(parseFgaMod(text), JSON.parse(c.json ?? '{}'));
    });
  }
}

async function objectIdCases(tally: FileTally, file: string): Promise<void> {
  for (const c of loadCases(file)) {
    await tally.check(c.name, () => {
      const got = isToolingObjectId(c.object_id ?? '');
      if (got !== c.valid)
        throw new Error(`object id ${JSON.stringify(c.object_id)}: expected valid=${c.valid}, got ${got}`);
    });
  }
}

const read = (...p: string[]): string => readFileSync(path.join(...p), 'utf8');
const subdirs = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();

/** §4.7: JSON → DSL byte-exact, DSL → JSON equal as JSON values. */
async function transformerCases(tally: FileTally, dir: string): Promise<void> {
  for (const name of subdirs(dir)) {
    if (existsSync(path.join(dir, name, 'test.skip'))) continue;
    const dsl = read(dir, name, 'authorization-model.fga');
    const json = JSON.parse(read(dir, name, 'authorization-model.json')) as AuthorizationModelInput;
    await tally.check(`${name} json→dsl`, () => assertSame(modelToDsl(json), dsl));
    await tally.check(`${name} dsl→json`, () => assertJsonEqual(dslToModel(dsl), json));
  }
}

/** §4.8: combine module files, compare with the model or the errors, render back, list modules. */
async function moduleCases(tally: FileTally, dir: string): Promise<void> {
  for (const name of subdirs(dir)) {
    const at = (f: string): string => path.join(dir, name, f);
    if (existsSync(at('test.skip'))) continue;
    if (existsSync(at('module'))) {
      const files = readdirSync(at('module'))
        .filter((f) => f.endsWith('.fga'))
        .sort()
        .map((f) => ({ name: f, contents: read(at('module'), f) }));
      await tally.check(`${name} combine`, () => {
        if (existsSync(at('expected_errors.json'))) {
          return assertErrors(
            diagnosticsOf(() => modulesToModel(files, '1.2')),
            JSON.parse(read(at('expected_errors.json'))) as Obj[],
          );
        }
        assertJsonEqual(modulesToModel(files, '1.2'), JSON.parse(read(at('authorization-model.json'))));
      });
    }
    if (!existsSync(at('authorization-model.json'))) continue;
    const model = JSON.parse(read(at('authorization-model.json'))) as AuthorizationModelInput;
    if (existsSync(at('combined.fga')))
      await tally.check(`${name} json→dsl`, () => assertSame(modelToDsl(model), read(at('combined.fga'))));
    if (existsSync(at('combined-sourceinfo.fga'))) {
      await tally.check(`${name} json→dsl with source info`, () =>
        assertSame(modelToDsl(model, { includeSourceInformation: true }), read(at('combined-sourceinfo.fga'))),
      );
    }
    if (existsSync(at('expected_modules.json'))) {
      await tally.check(`${name} modules`, () =>
        assertJsonEqual(modulesOf(model), JSON.parse(read(at('expected_modules.json')))),
      );
    }
  }
}

/** File (relative to the conformance root) → how to run it. */
const SUITES: Record<string, (tally: FileTally, full: string) => Promise<void>> = {
  'language/dsl-syntax-validation-cases.yaml': (t, f) => dslCases(t, f, false),
  'language/dsl-semantic-validation-cases.yaml': (t, f) => dslCases(t, f, true),
  'language/json-validation-cases.yaml': jsonValidationCases,
  'language/json-syntax-transformer-validation-cases.yaml': jsonToDslCases,
  'language/fga-mod-transformer-cases.yaml': modFileCases,
  'language/object-id-validation-cases.yaml': objectIdCases,
  'language/transformer': transformerCases,
  'language/transformer-module': moduleCases,
};

export const languageTarget: Target = {
  name: 'language',
  async run(dir: string, options: RunOptions): Promise<FileResult[]> {
    const results: FileResult[] = [];
    for (const [file, run] of Object.entries(SUITES)) {
      if (options.file !== undefined && !file.includes(options.file)) continue;
      const tally = new FileTally(file);
      const full = path.join(dir, file);
      if (!existsSync(full))
        await tally.check('(suite present)', () => {
          throw new Error(`missing ${full}`);
        });
      else await run(tally, full);
      results.push(tally.result());
    }
    return results;
  },
};
