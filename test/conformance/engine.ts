// The in-process conformance target for the OpenFGA query suites (openfga/*.yaml), following
// shared/conformance/README.md §3.2: a store per test, a model per stage, tuples accumulating
// across stages (stale tuples), Check / ListObjects / StreamedListObjects / ListUsers assertions
// with error codes, every listed object or user re-checked, and the contextual replay of every
// single-stage test. How a store, model, write or query is executed is the `ConformanceDriver`;
// test/conformance/targets.ts names one target per driver (reference, walker, http-json, http-msgpack).

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import type { JsonObject, TupleKey } from '../../src/domain/types.js';
import { AppError } from '../../src/errors.js';
import type { ListedUser, UserFilter } from '../../src/engine/contract.js';
import { FileTally, type FileResult, type RunOptions, type Target } from './types.js';

/** One store of the system under test. Failures throw AppError (its `numeric` is compared). */
export interface StoreDriver {
  writeModel(dsl: string): Promise<string>;
  write(modelId: string, tuples: readonly TupleKey[]): Promise<void>;
  check(modelId: string, q: QueryOf<{ user: string; relation: string; object: string }>): Promise<boolean>;
  listObjects(modelId: string, q: QueryOf<{ user: string; type: string; relation: string }>): Promise<string[]>;
  streamedListObjects(modelId: string, q: QueryOf<{ user: string; type: string; relation: string }>): Promise<string[]>;
  listUsers(
    modelId: string,
    q: QueryOf<{ object: { type: string; id: string }; relation: string; filters: UserFilter[] }>,
  ): Promise<ListedUser[]>;
}

export type QueryOf<K> = { key: K; contextualTuples: readonly TupleKey[]; context?: JsonObject | undefined };

export interface ConformanceDriver {
  createStore(name: string): Promise<StoreDriver>;
}

// ---- YAML shapes (README §3.1); unknown fields are ignored like the reference loader does ----

interface YTuple {
  user: string;
  relation: string;
  object: string;
  condition?: { name: string; context?: JsonObject };
}
interface YCheck {
  tuple: YTuple;
  context?: JsonObject;
  contextualTuples?: YTuple[];
  expectation?: boolean;
  errorCode?: number;
}
interface YListObjects {
  request: { user: string; type: string; relation: string };
  context?: JsonObject;
  contextualTuples?: YTuple[];
  expectation?: string[] | null;
  errorCode?: number;
}
interface YListUsers {
  request: { object: string; relation: string; filters: string[] };
  context?: JsonObject;
  contextualTuples?: YTuple[];
  expectation?: string[] | null;
  errorCode?: number;
}
interface YStage {
  model: string;
  tuples?: YTuple[] | null;
  checkAssertions?: YCheck[] | null;
  listObjectsAssertions?: YListObjects[] | null;
  listUsersAssertions?: YListUsers[] | null;
}
interface YTest {
  name: string;
  stages: YStage[];
}

const tupleKey = (t: YTuple): TupleKey => ({
  user: t.user,
  relation: t.relation,
  object: t.object,
  ...(t.condition
    ? { condition: { name: t.condition.name, ...(t.condition.context ? { context: wire(t.condition.context) } : {}) } }
    : {}),
});

/** What the context looks like after a JSON round trip (YAML overflow → Infinity → null). */
function wire(ctx: JsonObject | undefined): JsonObject | undefined {
  return ctx === undefined || ctx === null ? undefined : (JSON.parse(JSON.stringify(ctx)) as JsonObject);
}

export function userString(u: ListedUser): string {
  if ('object' in u) return `${u.object.type}:${u.object.id}`;
  if ('userset' in u) return `${u.userset.type}:${u.userset.id}#${u.userset.relation}`;
  return `${u.wildcard.type}:*`;
}

function sameMultiset(actual: readonly string[], expected: readonly string[], what: string): void {
  const a = [...actual].sort();
  const e = [...expected].sort();
  if (JSON.stringify(a) !== JSON.stringify(e))
    throw new Error(`${what}: expected ${JSON.stringify(e)}, got ${JSON.stringify(a)}`);
}

/** Runs `fn`; with `errorCode` set it must fail with that numeric code, else succeed. */
async function expectOutcome<T>(errorCode: number | undefined, fn: () => Promise<T>): Promise<T | undefined> {
  if (!errorCode) return fn();
  try {
    await fn();
  } catch (e) {
    const code = e instanceof AppError ? e.numeric : undefined;
    if (code !== errorCode) throw new Error(`expected error ${errorCode}, got ${code ?? String(e)}`, { cause: e });
    return undefined;
  }
  throw new Error(`expected error ${errorCode}, got success`);
}

interface StageRun {
  store: StoreDriver;
  modelId: string;
  extra: TupleKey[];
  name: string;
  tally: FileTally;
}

async function runChecks(s: StageRun, list: YCheck[]): Promise<void> {
  for (const [i, a] of list.entries()) {
    await s.tally.check(`${s.name}/check#${i}`, async () => {
      const q = {
        key: a.tuple,
        contextualTuples: [...(a.contextualTuples ?? []).map(tupleKey), ...s.extra],
        context: wire(a.context),
      };
      const allowed = await expectOutcome(a.errorCode, () => s.store.check(s.modelId, q));
      if (!a.errorCode && allowed !== (a.expectation ?? false))
        throw new Error(`expected allowed=${a.expectation}, got ${allowed}`);
    });
  }
}

async function recheck(
  s: StageRun,
  ctx: Omit<QueryOf<unknown>, 'key'>,
  user: string,
  relation: string,
  object: string,
): Promise<void> {
  const ok = await s.store.check(s.modelId, { ...ctx, key: { user, relation, object } });
  if (!ok) throw new Error(`listed ${user} / ${object} but Check(${user}, ${relation}, ${object}) is false`);
}

async function runListObjects(s: StageRun, list: YListObjects[]): Promise<void> {
  for (const [i, a] of list.entries()) {
    await s.tally.check(`${s.name}/listObjects#${i}`, async () => {
      const ctx = {
        contextualTuples: [...(a.contextualTuples ?? []).map(tupleKey), ...s.extra],
        context: wire(a.context),
      };
      const q = { ...ctx, key: a.request };
      const objects = await expectOutcome(a.errorCode, () => s.store.listObjects(s.modelId, q));
      const streamed = await expectOutcome(a.errorCode, () => s.store.streamedListObjects(s.modelId, q));
      if (a.errorCode || !objects || !streamed) return;
      sameMultiset(objects, a.expectation ?? [], 'ListObjects');
      sameMultiset(streamed, a.expectation ?? [], 'StreamedListObjects');
      for (const o of objects) await recheck(s, ctx, a.request.user, a.request.relation, o);
    });
  }
}

async function runListUsers(s: StageRun, list: YListUsers[]): Promise<void> {
  for (const [i, a] of list.entries()) {
    await s.tally.check(`${s.name}/listUsers#${i}`, async () => {
      const ctx = {
        contextualTuples: [...(a.contextualTuples ?? []).map(tupleKey), ...s.extra],
        context: wire(a.context),
      };
      const colon = a.request.object.indexOf(':');
      const filters = a.request.filters.map((f): UserFilter => {
        const [type, relation] = f.split('#') as [string, string | undefined];
        return relation === undefined ? { type } : { type, relation };
      });
      const key = {
        object: { type: a.request.object.slice(0, colon), id: a.request.object.slice(colon + 1) },
        relation: a.request.relation,
        filters,
      };
      const users = await expectOutcome(a.errorCode, () => s.store.listUsers(s.modelId, { ...ctx, key }));
      if (a.errorCode || !users) return;
      const strings = users.map(userString);
      sameMultiset(strings, a.expectation ?? [], 'ListUsers');
      for (const u of strings) await recheck(s, ctx, u, a.request.relation, a.request.object);
    });
  }
}

/** One test: fresh store, stages in order; `replay` sends the stage tuples as contextual tuples. */
async function runTest(driver: ConformanceDriver, t: YTest, replay: boolean, tally: FileTally): Promise<void> {
  const label = replay ? `${t.name}_ctxTuples` : t.name;
  const store = await driver.createStore(label);
  for (const [si, stage] of t.stages.entries()) {
    const name = `${label}/stage${si}`;
    let modelId: string;
    try {
      modelId = await store.writeModel(stage.model);
      const tuples = (stage.tuples ?? []).map(tupleKey);
      if (!replay) for (let i = 0; i < tuples.length; i += 40) await store.write(modelId, tuples.slice(i, i + 40));
    } catch (e) {
      await tally.check(`${name}/setup`, () => {
        throw e;
      });
      return;
    }
    const s: StageRun = { store, modelId, extra: replay ? (stage.tuples ?? []).map(tupleKey) : [], name, tally };
    await runChecks(s, stage.checkAssertions ?? []);
    await runListObjects(s, stage.listObjectsAssertions ?? []);
    await runListUsers(s, stage.listUsersAssertions ?? []);
  }
}

/**
 * Suite files and models parsed once per process (the targets run the same suites again: two wire
 * modes, two in-process drivers, one worker for many files), each use getting a fresh copy. The
 * YAML parser and the DSL parser (antlr4) were ≈ 1 s of CPU per pass over both suites; a
 * structured clone is a few milliseconds. Not JSON: abac_tests.yaml holds ±Infinity contexts.
 */
const suites = new Map<string, { tests: YTest[] }>();

function readSuite(file: string): { tests: YTest[] } {
  let doc = suites.get(file);
  if (doc === undefined) {
    doc = parse(readFileSync(file, 'utf8')) as { tests: YTest[] };
    suites.set(file, doc);
  }
  return structuredClone(doc);
}

/** `toModel(dsl)` once per DSL text; a DSL it rejects is converted (and throws) every time. */
export function cachedModel<M>(toModel: (dsl: string) => M): (dsl: string) => M {
  const models = new Map<string, M>();
  return (dsl) => {
    if (!models.has(dsl)) models.set(dsl, toModel(dsl));
    return structuredClone(models.get(dsl) as M);
  };
}

/**
 * Runs every test of one suite file. `lanes` tests run at once (each on a store of its own, so
 * they cannot see each other): more than one only for a target whose time goes to waiting on
 * other processes (the replicated target), where the lanes overlap those waits.
 */
export async function runQueryFile(
  driver: ConformanceDriver,
  file: string,
  rel: string,
  lanes = 1,
): Promise<FileResult> {
  const tally = new FileTally(rel);
  const doc = readSuite(file);
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let t = doc.tests[next++]; t !== undefined; t = doc.tests[next++]) {
      await runTest(driver, t, false, tally);
      if (t.stages.length === 1 && (t.stages[0]?.tuples ?? []).length <= 100) await runTest(driver, t, true, tally);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, lanes) }, lane));
  return tally.result();
}

export const QUERY_FILES = ['openfga/consolidated_1_1_tests.yaml', 'openfga/abac_tests.yaml'];

/** A target named `name` running the query suites over `driver`, `lanes` tests at once. */
export function engineTarget(driver: ConformanceDriver, name: string, lanes = 1): Target {
  return {
    name,
    async run(dir: string, options: RunOptions): Promise<FileResult[]> {
      const out: FileResult[] = [];
      for (const rel of QUERY_FILES) {
        if (options.file !== undefined && !rel.includes(options.file)) continue;
        out.push(await runQueryFile(driver, path.join(dir, rel), rel, lanes));
      }
      return out;
    },
  };
}
