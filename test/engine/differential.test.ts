// Differential test: the reference evaluator (src/engine/eval) against the obviously-correct
// oracle (test/oracle) on seeded random models, tuples (some stale) and queries. Check must agree
// exactly (TRUE / FALSE / 2000 / 2002); every listed object or user must Check TRUE in the oracle
// and every candidate the oracle accepts must be listed (a user may be covered by a listed `T:*`).
// LATCH_DIFF_SEED fixes the seed, LATCH_DIFF_CASES the number of compared queries (default 10,000).
// `differentialCheckers` is the hook for more Check implementations (the wasm walker).

import { describe, expect, it } from 'vitest';
import type { AuthorizationModelInput, JsonObject, TupleKey } from '../../src/domain/types.js';
import { AppError } from '../../src/errors.js';
import { evalCheck, listObjects, listUsers, MemoryTupleView, type EvalContext } from '../../src/engine/eval/index.js';
import { checkStatus } from '../../src/engine/walker/checker.js';
import { StoreIndex, type IndexSnapshot } from '../../src/index/store-index.js';
import type { CompiledModel } from '../../src/model/types.js';
import { userString } from '../conformance/engine.js';
import { compile } from '../eval/model.js';
import { checkTuple } from '../../src/model/tuple-validation.js';
import { OBJECT_TYPES, USER_TYPES, fittingTuple, ids, randomContext, randomModel, randomRelation, randomTuple, randomUser, Rng } from '../oracle/generate.js';
import { oracleCheck, oracleListObjects, oracleListUsers, type O, type OracleInput } from '../oracle/oracle.js';

/** A Check implementation under test: returns the answer or throws AppError (2000 / 2002). */
export interface DifferentialChecker {
  readonly name: string;
  check(model: CompiledModel, tuples: readonly TupleKey[], context: JsonObject | undefined, depth: number, object: string, relation: string, user: string): boolean;
}

/** Every Check implementation compared against the oracle; more can be appended here. */
export const differentialCheckers: DifferentialChecker[] = [
  {
    name: 'eval',
    check: (model, tuples, context, depth, object, relation, user) =>
      evalCheck(ctxOf(model, tuples, context, depth), object, relation, user),
  },
  {
    // The evaluator over the compact u32 index (src/index) instead of the in-memory view.
    name: 'eval-on-index',
    check: (model, tuples, context, depth, object, relation, user) =>
      evalCheck({ ...ctxOf(model, tuples, context, depth), view: indexOf(tuples) }, object, relation, user),
  },
  {
    // The wasm walker (src/engine/walker), inline on this thread.
    name: 'walker',
    check: (model, tuples, context, depth, object, relation, user) => {
      const out = checkStatus(indexOf(tuples), model, { object, relation, user, contextualTuples: [], ...(context ? { context } : {}) }, depth);
      if ('error' in out) throw out.error;
      return out.allowed;
    },
  },
];

/** One index per tuple list (the same list is queried many times). */
const indexes = new WeakMap<readonly TupleKey[], IndexSnapshot>();
function indexOf(tuples: readonly TupleKey[]): IndexSnapshot {
  let snap = indexes.get(tuples);
  if (!snap) {
    snap = StoreIndex.build(tuples, 1).snapshot();
    indexes.set(tuples, snap);
  }
  return snap;
}

function ctxOf(model: CompiledModel, tuples: readonly TupleKey[], context: JsonObject | undefined, depth: number): EvalContext {
  return { model, view: new MemoryTupleView(tuples), context, resolveDepth: depth, deadline: Date.now() + 60_000 };
}

const outcome = (fn: () => boolean): O => {
  try {
    return fn() ? 'T' : 'F';
  } catch (e) {
    if (e instanceof AppError && (e.numeric === 2000 || e.numeric === 2002)) return e.numeric;
    throw e;
  }
};
/**
 * Agreement of two outcomes. Which error code wins when a condition error and the depth limit
 * meet in one union depends on evaluation order (the reference is concurrent), so for other
 * implementations any error matches any error; the evaluator must match the oracle's code.
 */
const same = (a: O, b: O, strict: boolean): boolean =>
  a === b || (a === 'F' && b === 'C') || (a === 'C' && b === 'F') || (!strict && typeof a === 'number' && typeof b === 'number');

interface World {
  json: AuthorizationModelInput;
  model: CompiledModel;
  tuples: TupleKey[];
  depth: number;
}

function randomWorld(rng: Rng): World {
  for (;;) {
    const json = randomModel(rng);
    let model: CompiledModel;
    try {
      model = compile(json);
    } catch {
      continue;
    }
    const tuples: TupleKey[] = [];
    const n = 8 + rng.int(30);
    for (let tries = 0; tuples.length < n && tries < n * 20; tries++) {
      const t = rng.chance(0.8) ? fittingTuple(rng, json) : randomTuple(rng, json);
      if (!t) continue;
      // A store holds each key once: skip a second condition variant of the same key.
      if (tuples.some((u) => u.object === t.object && u.relation === t.relation && u.user === t.user)) continue;
      if (!checkTuple(model, t, 'write') || rng.chance(0.05)) tuples.push(t);
    }
    return { json, model, tuples, depth: rng.chance(0.15) ? 2 + rng.int(3) : 25 };
  }
}

type Query = { kind: 'check' | 'objects' | 'users'; object: string; relation: string; user: string; type: string; filter: { type: string; relation?: string }; context: JsonObject | undefined };

function randomQuery(rng: Rng, w: World): Query {
  const from = w.tuples.length > 0 && rng.chance(0.5) ? rng.pick(w.tuples).object : undefined;
  const type = from?.split(':')[0] ?? rng.pick(OBJECT_TYPES);
  const relation = randomRelation(rng, w.json, type);
  const ftype = rng.pick([...USER_TYPES, ...OBJECT_TYPES]);
  const frel = OBJECT_TYPES.includes(ftype) && rng.chance(0.6) ? randomRelation(rng, w.json, ftype) : undefined;
  // Half of the queries reuse a user of the data, so that TRUE answers are common.
  const seen = w.tuples.length > 0 && rng.chance(0.5) ? rng.pick(w.tuples).user : undefined;
  return {
    kind: rng.pick(['check', 'check', 'objects', 'users'] as const),
    object: from ?? `${type}:${rng.pick(ids)}`,
    relation: from && rng.chance(0.5) ? (w.tuples.find((t) => t.object === from)?.relation ?? relation) : relation,
    user: seen ?? randomUser(rng, w.json),
    type,
    filter: frel === undefined ? { type: ftype } : { type: ftype, relation: frel },
    context: randomContext(rng),
  };
}

/** Outcome counts, printed and checked so that a degenerate generator cannot pass silently. */
export const stats = new Map<string, number>();
const count = (k: string): void => {
  stats.set(k, (stats.get(k) ?? 0) + 1);
};

/** Returns a mismatch description, or undefined when implementation and oracle agree. */
export function compare(w: World, q: Query): string | undefined {
  const inp: OracleInput = { model: w.model, tuples: w.tuples, context: q.context, depthLimit: w.depth };
  const ctx = ctxOf(w.model, w.tuples, q.context, w.depth);
  if (q.kind === 'check') {
    const want = oracleCheck(inp, q.object, q.relation, q.user);
    count(`check:${want}`);
    for (const c of differentialCheckers) {
      const got = outcome(() => c.check(w.model, w.tuples, q.context, w.depth, q.object, q.relation, q.user));
      if (!same(got, want, c.name === 'eval')) return `${c.name}: Check(${q.user}, ${q.relation}, ${q.object}) = ${got}, oracle ${want}`;
    }
    return undefined;
  }
  if (q.kind === 'objects') {
    let got: string[];
    try {
      got = listObjects(ctx, { type: q.type, relation: q.relation, user: q.user }, Infinity);
      count(got.length > 0 ? 'objects:non-empty' : 'objects:empty');
    } catch (e) {
      if (e instanceof AppError && (e.numeric === 2000 || e.numeric === 2002)) return void count(`objects:${e.numeric}`);
      throw e;
    }
    const want = oracleListObjects(inp, q.type, q.relation, q.user);
    return setMismatch(`ListObjects(${q.user}, ${q.relation}, ${q.type})`, got, want, () => false);
  }
  let users: string[];
  try {
    users = listUsers(ctx, { object: q.object, relation: q.relation, filter: q.filter }, Infinity).map(userString);
    count(users.length > 0 ? 'users:non-empty' : 'users:empty');
    if (users.some((u) => u.endsWith(':*'))) count('users:wildcard');
    if (users.some((u) => u.includes('#'))) count('users:userset');
  } catch (e) {
    if (e instanceof AppError && (e.numeric === 2000 || e.numeric === 2002)) return void count(`users:${e.numeric}`);
    throw e;
  }
  const want = oracleListUsers(inp, q.object, q.relation, q.filter.type, q.filter.relation);
  const wild = `${q.filter.type}:*`;
  return setMismatch(`ListUsers(${q.object}#${q.relation}, ${JSON.stringify(q.filter)})`, users, want, (u) => !u.includes('#') && users.includes(wild));
}

function setMismatch(what: string, got: string[], want: Map<string, O>, covered: (u: string) => boolean): string | undefined {
  if (new Set(got).size !== got.length) return `${what}: duplicates in ${JSON.stringify(got)}`;
  for (const g of got) if (want.get(g) !== 'T') return `${what}: listed ${g} but oracle Check = ${want.get(g) ?? 'not a candidate'}`;
  for (const [u, o] of want) if (o === 'T' && !got.includes(u) && !covered(u)) return `${what}: missing ${u} (oracle TRUE); got ${JSON.stringify(got)}`;
  return undefined;
}

/** Greedy shrink: drop tuples while the mismatch persists. */
function shrink(w: World, q: Query): World {
  let cur = w;
  for (let i = cur.tuples.length - 1; i >= 0; i--) {
    const next = { ...cur, tuples: cur.tuples.filter((_, j) => j !== i) };
    if (compare(next, q)) cur = next;
  }
  return cur;
}

describe('differential: eval vs oracle', () => {
  it('agrees on random models, tuples and queries', () => {
    const seed = Number(process.env.LATCH_DIFF_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const total = Number(process.env.LATCH_DIFF_CASES ?? 10_000);
    console.log(`differential seed ${seed}, ${total} cases (LATCH_DIFF_SEED=${seed} to reproduce)`);
    const rng = new Rng(seed);
    let done = 0;
    while (done < total) {
      const w = randomWorld(rng);
      for (let i = 0; i < 25 && done < total; i++, done++) {
        const q = randomQuery(rng, w);
        const bad = compare(w, q);
        if (bad) {
          const min = shrink(w, q);
          const repro = { seed, mismatch: compare(min, q), query: q, depth: min.depth, tuples: min.tuples, model: min.json };
          expect.fail(`differential mismatch (LATCH_DIFF_SEED=${seed}):\n${JSON.stringify(repro, null, 1)}`);
        }
      }
    }
    console.log(`differential outcomes: ${JSON.stringify(Object.fromEntries([...stats].sort()))}`);
    expect(done).toBe(total);
    if (total >= 5000) {
      for (const k of ['check:T', 'check:F', 'check:C', 'check:2000', 'check:2002', 'objects:non-empty', 'users:non-empty', 'users:wildcard', 'users:userset']) {
        expect(stats.get(k) ?? 0, k).toBeGreaterThan(0);
      }
    }
  });
});
