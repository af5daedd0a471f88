// Runs the tests of one store file against a Target, as `fga model test` does: each test gets a
// fresh store holding the model, the global tuples and the test's own tuples (or, against an
// existing store, those tuples as contextual tuples); every assertion is
// one query (a check with `users`/`objects` lists expands to every user × object pair). List
// answers compare as sets. A failing query (an API error) fails its assertion and records why.

import type { JsonObject } from '../domain/types.js';
import { describeError } from './common.js';
import type { StoreFile, StoreTest } from './store-file.js';
import type { Ids, Target } from './target.js';

export interface CheckResult {
  readonly kind: 'check';
  readonly user: string;
  readonly relation: string;
  readonly object: string;
  readonly context?: JsonObject | undefined;
  readonly expected: boolean;
  readonly got?: boolean | undefined;
  readonly error?: string | undefined;
  readonly passed: boolean;
}

export interface ListResult {
  readonly kind: 'list_objects' | 'list_users';
  /** ListObjects: `user` and `type`; ListUsers: `object` and `user_filter`. */
  readonly request: Record<string, unknown>;
  readonly relation: string;
  readonly context?: JsonObject | undefined;
  readonly expected: string[];
  readonly got?: string[] | undefined;
  readonly missing: string[];
  readonly unexpected: string[];
  readonly error?: string | undefined;
  readonly passed: boolean;
}

interface TestResult {
  readonly name: string;
  readonly description?: string | undefined;
  readonly passed: boolean;
  /** Set when the store could not be prepared (bad model, tuple rejected); no query ran then. */
  readonly error?: string | undefined;
  readonly checks: CheckResult[];
  readonly listObjects: ListResult[];
  readonly listUsers: ListResult[];
}

export interface FileResult {
  readonly file: string;
  readonly name: string;
  readonly passed: boolean;
  readonly error?: string | undefined;
  readonly tests: TestResult[];
}

export async function runStoreFile(file: StoreFile, target: Target): Promise<FileResult> {
  if (file.model === undefined && !target.existingStore) {
    return { file: file.path, name: file.name, passed: false, error: `no 'model' or 'model_file'`, tests: [] };
  }
  const tests: TestResult[] = [];
  for (const test of file.tests) tests.push(await runTest(file, test, target));
  return { file: file.path, name: file.name, passed: tests.every((t) => t.passed), tests };
}

async function runTest(file: StoreFile, test: StoreTest, target: Target): Promise<TestResult> {
  const base = { name: test.name, description: test.description };
  let ids: Ids;
  try {
    // Test tuples come after the global ones; a key repeated in both is written once.
    const seen = new Set(file.tuples.map((t) => `${t.object}#${t.relation}@${t.user}`));
    const extra = test.tuples.filter((t) => !seen.has(`${t.object}#${t.relation}@${t.user}`));
    ids = await target.setup(`${file.name} ${test.name}`, file.model, [...file.tuples, ...extra]);
  } catch (err) {
    return {
      ...base,
      passed: false,
      error: `cannot prepare the store: ${describeError(err)}`,
      checks: [],
      listObjects: [],
      listUsers: [],
    };
  }
  try {
    const checks: CheckResult[] = [];
    for (const c of test.check) {
      for (const user of c.users) {
        for (const object of c.objects) {
          for (const [relation, expected] of Object.entries(c.assertions)) {
            const req = { user, relation, object, context: c.context, expected };
            try {
              const got = await target.check(ids, user, relation, object, c);
              checks.push({ kind: 'check', ...req, got, passed: got === expected });
            } catch (err) {
              checks.push({ kind: 'check', ...req, error: describeError(err), passed: false });
            }
          }
        }
      }
    }
    const listObjects: ListResult[] = [];
    for (const l of test.listObjects) {
      for (const [relation, expected] of Object.entries(l.assertions)) {
        const run = () => target.listObjects(ids, l.user, relation, l.type, l);
        listObjects.push(
          await compareList('list_objects', { user: l.user, type: l.type }, relation, l.context, expected, run),
        );
      }
    }
    const listUsers: ListResult[] = [];
    for (const l of test.listUsers) {
      for (const [relation, expected] of Object.entries(l.assertions)) {
        const run = () => target.listUsers(ids, l.object, relation, l.userFilter, l);
        listUsers.push(
          await compareList(
            'list_users',
            { object: l.object, user_filter: l.userFilter },
            relation,
            l.context,
            expected,
            run,
          ),
        );
      }
    }
    const passed = [...checks, ...listObjects, ...listUsers].every((r) => r.passed);
    return { ...base, passed, checks, listObjects, listUsers };
  } finally {
    await target.teardown(ids).catch(() => undefined);
  }
}

async function compareList(
  kind: ListResult['kind'],
  request: Record<string, unknown>,
  relation: string,
  context: JsonObject | undefined,
  expected: string[],
  run: () => Promise<string[]>,
): Promise<ListResult> {
  const base = { kind, request, relation, context, expected };
  try {
    const got = await run();
    const gotSet = new Set(got);
    const expSet = new Set(expected);
    const missing = [...expSet].filter((e) => !gotSet.has(e)).sort();
    const unexpected = [...gotSet].filter((g) => !expSet.has(g)).sort();
    return {
      ...base,
      got: [...got].sort(),
      missing,
      unexpected,
      passed: missing.length === 0 && unexpected.length === 0,
    };
  } catch (err) {
    return { ...base, missing: [], unexpected: [], error: describeError(err), passed: false };
  }
}
