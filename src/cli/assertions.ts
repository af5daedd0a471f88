// Store-file tests ↔ a model's stored assertions, as `fga store import/export` carry them.
// Import: every `check` expectation (users × objects × relations) becomes one assertion, with the
// test's own tuples as its contextual tuples and the check's context. Export: assertions are
// grouped back into tests (one per distinct set of contextual tuples) and checks (one per user,
// object and context), so export → import → export gives the same file.

import type { Assertion, JsonObject, TupleKey } from '../domain/types.js';
import type { StoreTest } from './store-file.js';
import { cleanTuple } from './tuple-file.js';

/** The API's limits on one model's assertions (docs/reference/http-api.md §4.10, §3.7). */
const MAX_ASSERTIONS = 100;
const MAX_ASSERTION_CONTEXTUAL_TUPLES = 20;
const MAX_ASSERTIONS_BYTES = 64_000;

interface Conversion {
  readonly assertions: Assertion[];
  /** Expectations left out, with why (too many contextual tuples, over the count or size limit). */
  readonly skipped: { readonly count: number; readonly reasons: string[] };
}

export function testsToAssertions(tests: readonly StoreTest[]): Conversion {
  const all: Assertion[] = [];
  const reasons: string[] = [];
  let count = 0;
  for (const t of tests) {
    const n = t.check.reduce((sum, c) => sum + c.users.length * c.objects.length * Object.keys(c.assertions).length, 0);
    if (n === 0) continue;
    if (t.tuples.length > MAX_ASSERTION_CONTEXTUAL_TUPLES) {
      count += n;
      reasons.push(
        `test '${t.name}' has ${t.tuples.length} tuples (an assertion carries at most ${MAX_ASSERTION_CONTEXTUAL_TUPLES})`,
      );
      continue;
    }
    for (const c of t.check) {
      for (const user of c.users) {
        for (const object of c.objects) {
          for (const [relation, expectation] of Object.entries(c.assertions)) {
            all.push({
              tuple_key: { user, relation, object },
              expectation,
              ...(t.tuples.length ? { contextual_tuples: t.tuples.map(cleanTuple) } : {}),
              ...(c.context ? { context: c.context } : {}),
            });
          }
        }
      }
    }
  }
  const kept: Assertion[] = [];
  let bytes = 2;
  for (const a of all) {
    const size = JSON.stringify(a).length + 1;
    if (kept.length >= MAX_ASSERTIONS || bytes + size > MAX_ASSERTIONS_BYTES) break;
    kept.push(a);
    bytes += size;
  }
  if (kept.length < all.length)
    reasons.push(`a model holds at most ${MAX_ASSERTIONS} assertions and ${MAX_ASSERTIONS_BYTES} bytes of them`);
  return { assertions: kept, skipped: { count: count + all.length - kept.length, reasons } };
}

interface CheckItem {
  user: string;
  object: string;
  context?: JsonObject;
  assertions: Record<string, boolean>;
}

/** Assertions → store-file `tests` entries (plain data, ready for YAML). */
export function assertionsToTests(assertions: readonly Assertion[]): Record<string, unknown>[] {
  const groups = new Map<string, { tuples: TupleKey[]; checks: CheckItem[] }>();
  for (const a of assertions) {
    const tuples = (a.contextual_tuples ?? []).map(cleanTuple);
    const key = JSON.stringify(tuples);
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { tuples, checks: [] }));
    const context = a.context && Object.keys(a.context).length ? a.context : undefined;
    const { user, relation, object } = a.tuple_key;
    const same = g.checks.find(
      (c) =>
        c.user === user &&
        c.object === object &&
        JSON.stringify(c.context) === JSON.stringify(context) &&
        !(relation in c.assertions),
    );
    if (same) same.assertions[relation] = a.expectation;
    else g.checks.push({ user, object, ...(context ? { context } : {}), assertions: { [relation]: a.expectation } });
  }
  return [...groups.values()].map((g, i) => ({
    name: i === 0 ? 'assertions' : `assertions-${i + 1}`,
    ...(g.tuples.length ? { tuples: g.tuples } : {}),
    check: g.checks,
  }));
}
