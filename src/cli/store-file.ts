// `.fga.yaml` store files in the OpenFGA command line's format: `name` (optional), `model` (inline
// DSL or JSON) or `model_file` (DSL `.fga`, JSON `.json`, or `fga.mod` for modular models), global
// tuples from `tuples`, `tuple_file` and `tuple_files`, and `tests` (each with an optional `name`,
// its own `tuples` / `tuple_file` / `tuple_files`, and `check`, `list_objects`, `list_users`
// queries, each with optional `context` and `contextual_tuples`). Relative paths resolve against
// the store file's folder. Every shape error names the field:
// `tests[1].check[0]: 'user' and 'users' are exclusive`.

import { readFile } from 'node:fs/promises';
import { basename, dirname, extname, join, relative, resolve } from 'node:path';
import YAML from 'yaml';
import type { AuthorizationModelInput, JsonObject, TupleKey } from '../domain/types.js';
import { modulesToModel, parseFgaMod } from '../model/dsl.js';
import { parseDslModel } from '../model/load.js';
import { FileFormatError, isObject, readTupleFile, toTupleList } from './tuple-file.js';

/** What every query of a test may carry besides its key: a condition context and contextual tuples. */
export interface QueryExtras {
  readonly context?: JsonObject | undefined;
  readonly contextualTuples?: TupleKey[] | undefined;
}

interface CheckTest extends QueryExtras {
  readonly users: string[];
  readonly objects: string[];
  readonly assertions: Record<string, boolean>;
}

interface ListObjectsTest extends QueryExtras {
  readonly user: string;
  readonly type: string;
  readonly assertions: Record<string, string[]>;
}

interface ListUsersTest extends QueryExtras {
  readonly object: string;
  readonly userFilter: { type: string; relation?: string }[];
  readonly assertions: Record<string, string[]>;
}

export interface StoreTest {
  readonly name: string;
  readonly description?: string | undefined;
  readonly tuples: TupleKey[];
  readonly check: CheckTest[];
  readonly listObjects: ListObjectsTest[];
  readonly listUsers: ListUsersTest[];
}

export interface StoreFile {
  readonly path: string;
  readonly name: string;
  /** The model source as written (DSL text, JSON text), or undefined when the file has none. */
  readonly modelSource?: string | undefined;
  readonly model?: AuthorizationModelInput | undefined;
  /** Global tuples, de-duplicated (first occurrence wins), in file order. */
  readonly tuples: TupleKey[];
  readonly tests: StoreTest[];
}

/** Reads and validates a store file with its model and tuple files. Throws FileFormatError or a DslError. */
export async function loadStoreFile(path: string): Promise<StoreFile> {
  let data: unknown;
  try {
    data = YAML.parse(await readFile(path, 'utf8'));
  } catch (err) {
    if (err instanceof Error && 'code' in err && err.code === 'ENOENT')
      throw new FileFormatError(`${path}: no such file`);
    throw new FileFormatError(`${path}: not valid YAML: ${err instanceof Error ? err.message : String(err)}`);
  }
  try {
    return await parseStoreFile(data ?? {}, path);
  } catch (err) {
    if (err instanceof FileFormatError) throw new FileFormatError(`${path}: ${err.message}`);
    throw err;
  }
}

async function parseStoreFile(data: unknown, path: string): Promise<StoreFile> {
  if (!isObject(data)) throw new FileFormatError('expected a map at the top level');
  const dir = dirname(path);
  const name = optString(data, 'name', '') ?? basename(path).replace(/\.fga\.ya?ml$|\.ya?ml$/, '');
  let modelSource = optString(data, 'model', '');
  let model: AuthorizationModelInput | undefined;
  const modelFile = optString(data, 'model_file', '');
  if (modelSource !== undefined) model = parseModelText(modelSource);
  else if (modelFile !== undefined) ({ source: modelSource, model } = await loadModelFile(resolve(dir, modelFile)));

  const tuples: TupleKey[] =
    data.tuples === undefined || data.tuples === null ? [] : toTupleList(data.tuples, 'tuples');
  const tupleFile = optString(data, 'tuple_file', '');
  if (tupleFile !== undefined) tuples.push(...(await readTupleFile(resolve(dir, tupleFile))));
  tuples.push(...(await tupleFilesOf(data, '', dir)));

  const rawTests = data.tests ?? [];
  if (!Array.isArray(rawTests)) throw new FileFormatError(`'tests' must be a list`);
  const tests: StoreTest[] = [];
  for (const [i, t] of rawTests.entries()) tests.push(await parseTest(t, `tests[${i}]`, dir));
  return { path, name, modelSource, model, tuples: dedupe(tuples), tests };
}

/** `tuple_files`: a list of tuple file paths (at the top level or in a test). */
async function tupleFilesOf(o: Record<string, unknown>, where: string, dir: string): Promise<TupleKey[]> {
  const files = o.tuple_files;
  if (files === undefined || files === null) return [];
  if (!Array.isArray(files) || !files.every((f) => typeof f === 'string'))
    throw new FileFormatError(`${where ? where + ': ' : ''}'tuple_files' must be a list of paths`);
  const out: TupleKey[] = [];
  for (const f of files as string[]) out.push(...(await readTupleFile(resolve(dir, f))));
  return out;
}

async function parseTest(t: unknown, where: string, dir: string): Promise<StoreTest> {
  if (!isObject(t)) throw new FileFormatError(`${where}: expected a map`);
  // Optional, as in the fga command line (public store files often leave it out): named by place.
  const name = optString(t, 'name', where) || where;
  const tuples = t.tuples === undefined || t.tuples === null ? [] : toTupleList(t.tuples, `${where}.tuples`);
  const tupleFile = optString(t, 'tuple_file', where);
  if (tupleFile !== undefined) tuples.push(...(await readTupleFile(resolve(dir, tupleFile))));
  tuples.push(...(await tupleFilesOf(t, where, dir)));
  return {
    name,
    description: optString(t, 'description', where),
    tuples,
    check: list(t.check, `${where}.check`).map((c, i) => parseCheck(c, `${where}.check[${i}]`)),
    listObjects: list(t.list_objects, `${where}.list_objects`).map((c, i) =>
      parseListObjects(c, `${where}.list_objects[${i}]`),
    ),
    listUsers: list(t.list_users, `${where}.list_users`).map((c, i) => parseListUsers(c, `${where}.list_users[${i}]`)),
  };
}

function parseCheck(c: unknown, where: string): CheckTest {
  if (!isObject(c)) throw new FileFormatError(`${where}: expected a map`);
  const users = oneOrMany(c, 'user', 'users', where);
  const objects = oneOrMany(c, 'object', 'objects', where);
  const assertions = assertionMap(c, where);
  for (const [rel, v] of Object.entries(assertions)) {
    if (typeof v !== 'boolean') throw new FileFormatError(`${where}.assertions.${rel}: expected true or false`);
  }
  return { users, objects, ...extras(c, where), assertions: assertions as Record<string, boolean> };
}

function parseListObjects(c: unknown, where: string): ListObjectsTest {
  if (!isObject(c)) throw new FileFormatError(`${where}: expected a map`);
  const user = reqString(c, 'user', where);
  const type = reqString(c, 'type', where);
  const assertions: Record<string, string[]> = {};
  for (const [rel, v] of Object.entries(assertionMap(c, where)))
    assertions[rel] = stringList(v, `${where}.assertions.${rel}`);
  return { user, type, ...extras(c, where), assertions };
}

function parseListUsers(c: unknown, where: string): ListUsersTest {
  if (!isObject(c)) throw new FileFormatError(`${where}: expected a map`);
  const object = reqString(c, 'object', where);
  const filters = list(c.user_filter, `${where}.user_filter`).map((f, i) => {
    if (!isObject(f) || typeof f.type !== 'string')
      throw new FileFormatError(`${where}.user_filter[${i}]: expected {type, relation?}`);
    if (f.relation !== undefined && typeof f.relation !== 'string')
      throw new FileFormatError(`${where}.user_filter[${i}].relation: expected a string`);
    return f.relation ? { type: f.type, relation: f.relation } : { type: f.type };
  });
  if (filters.length === 0) throw new FileFormatError(`${where}: 'user_filter' needs at least one {type}`);
  const assertions: Record<string, string[]> = {};
  for (const [rel, v] of Object.entries(assertionMap(c, where))) {
    if (!isObject(v)) throw new FileFormatError(`${where}.assertions.${rel}: expected {users: [...]}`);
    assertions[rel] =
      v.users === undefined || v.users === null ? [] : stringList(v.users, `${where}.assertions.${rel}.users`);
  }
  return { object, userFilter: filters, ...extras(c, where), assertions };
}

/** Model text: JSON when it starts with `{` (a bare model or `{authorization_model: …}`), else DSL. */
export function parseModelText(text: string): AuthorizationModelInput {
  if (!text.trimStart().startsWith('{')) return parseDslModel(text);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new FileFormatError(`model is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (isObject(json) && isObject(json.authorization_model)) json = json.authorization_model;
  if (!isObject(json)) throw new FileFormatError('model JSON must be an object');
  const { id: _id, ...model } = json;
  return model as unknown as AuthorizationModelInput;
}

/** `.fga` DSL, `.json`, or an `fga.mod` manifest whose `contents` are module files next to it. */
export async function loadModelFile(path: string): Promise<{ source: string; model: AuthorizationModelInput }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    throw new FileFormatError(`cannot read model file ${path}`);
  }
  if (basename(path) === 'fga.mod' || extname(path) === '.mod') {
    const mod = parseFgaMod(text);
    const dir = dirname(path);
    const files = await Promise.all(
      mod.contents.value.map(async (c) => {
        const file = join(dir, c.value);
        try {
          return { name: relative(dir, file), contents: await readFile(file, 'utf8') };
        } catch {
          throw new FileFormatError(`cannot read module file ${file} (listed in ${path})`);
        }
      }),
    );
    return { source: text, model: modulesToModel(files, mod.schema.value) };
  }
  return { source: text, model: parseModelText(text) };
}

function dedupe(tuples: TupleKey[]): TupleKey[] {
  const seen = new Set<string>();
  return tuples.filter((t) => {
    const k = `${t.object}#${t.relation}@${t.user}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

function optString(o: Record<string, unknown>, key: string, where: string): string | undefined {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw new FileFormatError(`${where ? where + ': ' : ''}'${key}' must be a string`);
  return v;
}

function reqString(o: Record<string, unknown>, key: string, where: string): string {
  const v = optString(o, key, where);
  if (v === undefined || v === '') throw new FileFormatError(`${where}: '${key}' is required`);
  return v;
}

function oneOrMany(o: Record<string, unknown>, one: string, many: string, where: string): string[] {
  if (o[one] !== undefined && o[many] !== undefined)
    throw new FileFormatError(`${where}: '${one}' and '${many}' are exclusive`);
  if (o[many] !== undefined) {
    const l = stringList(o[many], `${where}.${many}`);
    if (l.length === 0) throw new FileFormatError(`${where}: '${many}' is empty`);
    return l;
  }
  return [reqString(o, one, where)];
}

function assertionMap(o: Record<string, unknown>, where: string): Record<string, unknown> {
  if (!isObject(o.assertions))
    throw new FileFormatError(`${where}: 'assertions' must be a map of relation → expectation`);
  return o.assertions;
}

/** A query's `context` and `contextual_tuples` (a list of tuples, as in `tuples`). */
function extras(o: Record<string, unknown>, where: string): QueryExtras {
  // A list of tuples, or the API's own shape `{tuple_keys: [...]}`.
  const raw = o.contextual_tuples;
  const ct = isObject(raw) && 'tuple_keys' in raw ? raw.tuple_keys : raw;
  const contextualTuples = ct === undefined || ct === null ? undefined : toTupleList(ct, `${where}.contextual_tuples`);
  return { context: context(o, where), contextualTuples };
}

function context(o: Record<string, unknown>, where: string): JsonObject | undefined {
  if (o.context === undefined || o.context === null) return undefined;
  if (!isObject(o.context)) throw new FileFormatError(`${where}.context: expected a map`);
  return o.context as JsonObject;
}

function list(v: unknown, where: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new FileFormatError(`${where}: expected a list`);
  return v;
}

function stringList(v: unknown, where: string): string[] {
  if (v === null || v === undefined) return [];
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string'))
    throw new FileFormatError(`${where}: expected a list of strings`);
  return v as string[];
}
