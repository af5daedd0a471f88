// Differential test: every Check path and both ListObjects paths against the obviously-correct
// oracle (test/oracle) on seeded random models, tuples (some stale) and queries, with no excused
// difference. Check paths: the reference evaluator (over a map and over the compact index), the
// inline wasm walker, the worker pool (strings and pre-interned records), the service's `checkIds`
// and the msgpack channel's `check-ids` (differential-paths.ts). The reference must agree exactly
// (TRUE / FALSE / 2000 / 2002), the others up to which error code wins; every listed object or
// user must Check TRUE in the oracle and every candidate the oracle accepts must be listed (a user
// may be covered by a listed `T:*`). LATCH_DIFF_SEED fixes the seed, LATCH_DIFF_CASES the number
// of compared queries (default 10,000).

import { afterAll, describe, expect, it } from 'vitest';
import type { AuthorizationModelInput, JsonObject, TupleKey } from '../../src/domain/types.js';
import { AppError } from '../../src/errors.js';
import { evalCheck, listObjects, MemoryTupleView, overlayView, type EvalContext } from '../oracle/reference.js';
import { listUsers } from '../../src/engine/evaluation/list/list-users.js';
import type { TupleView } from '../../src/index/types.js';
import { checkStatus } from '../../src/engine/evaluation/walker/checker.js';
import { openObjectWalk } from '../../src/engine/evaluation/list/open.js';
import { StoreIndex, type IndexSnapshot } from '../../src/index/store-index.js';
import type { CompiledModel } from '../../src/model/types.js';
import { userString } from '../conformance/engine.js';
import { compile } from '../reference/model.js';
import { findTupleProblem } from '../../src/model/tuple-validation.js';
import {
  OBJECT_TYPES,
  USER_TYPES,
  evolveModel,
  fittingTuple,
  ids,
  randomContext,
  randomModel,
  type ModelBias,
  randomRelation,
  randomTuple,
  randomUser,
  Rng,
} from '../oracle/generate.js';
import { BulkPaths, type BulkCheck } from './differential-paths.js';
import {
  oracleCheck,
  oracleFilterReachable,
  oracleListObjects,
  oracleListUsers,
  oracleListUsersReach,
  type O,
  type OracleInput,
} from '../oracle/oracle.js';

/** Stored tuples (possibly stale), contextual tuples (valid), request context and depth limit. */
export interface CheckInput {
  readonly model: CompiledModel;
  readonly stored: readonly TupleKey[];
  readonly contextual: readonly TupleKey[];
  readonly context: JsonObject | undefined;
  readonly depth: number;
}

/** A Check implementation under test: returns the answer or throws AppError (2000 / 2002). */
export interface DifferentialChecker {
  readonly name: string;
  check(input: CheckInput, object: string, relation: string, user: string): boolean;
}

/** Every Check implementation compared against the oracle; more can be appended here. */
export const differentialCheckers: DifferentialChecker[] = [
  {
    name: 'eval',
    check: (inp, object, relation, user) =>
      evalCheck(ctxOf(inp, new MemoryTupleView(inp.stored)), object, relation, user),
  },
  {
    // The evaluator over the compact u32 index (src/index) instead of the in-memory view.
    name: 'eval-on-index',
    check: (inp, object, relation, user) => evalCheck(ctxOf(inp, indexOf(inp.stored)), object, relation, user),
  },
  {
    // The wasm walker (src/engine/evaluation/walker), inline on this thread.
    name: 'walker',
    check: (inp, object, relation, user) => {
      const item = {
        object,
        relation,
        user,
        contextualTuples: inp.contextual,
        ...(inp.context ? { context: inp.context } : {}),
      };
      const out = checkStatus(indexOf(inp.stored), inp.model, item, inp.depth);
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

function ctxOf(inp: CheckInput, base: TupleView): EvalContext {
  return {
    model: inp.model,
    view: overlayView(base, inp.contextual),
    context: inp.context,
    resolveDepth: inp.depth,
    deadline: Date.now() + 60_000,
  };
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
  a === b ||
  (a === 'F' && b === 'C') ||
  (a === 'C' && b === 'F') ||
  (!strict && typeof a === 'number' && typeof b === 'number');

interface World {
  /** The model the tuples were written under (`json` itself unless the model evolved). */
  origin: AuthorizationModelInput;
  json: AuthorizationModelInput;
  model: CompiledModel;
  tuples: TupleKey[];
  /** Sent as contextual tuples (valid; may repeat a stored key with another condition context). */
  contextual: TupleKey[];
  depth: number;
}

function randomWorld(rng: Rng, bias: ModelBias = {}): World {
  for (;;) {
    const json = randomModel(rng, bias);
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
      if (!findTupleProblem(model, t, 'write') || rng.chance(0.05)) tuples.push(t);
    }
    const contextual = rng.chance(0.3) ? contextualPart(rng, model, tuples) : [];
    const stored = tuples.filter((t) => !contextual.includes(t));
    const depth = rng.chance(0.15) ? 2 + rng.int(3) : 25;
    if (contextual.length === 0 && rng.chance(0.25)) {
      // The model changes after the writes: some stored tuples become stale (§4.5).
      const evolved = evolveModel(rng, json);
      try {
        return { origin: json, json: evolved, model: compile(evolved), tuples: stored, contextual, depth };
      } catch {
        // an invalid evolution: keep the original model
      }
    }
    return { origin: json, json, model, tuples: stored, contextual, depth };
  }
}

/** Some valid tuples move to the request; sometimes a stored key is repeated with a new context. */
function contextualPart(rng: Rng, model: CompiledModel, tuples: TupleKey[]): TupleKey[] {
  const valid = tuples.filter((t) => !findTupleProblem(model, t, 'contextual'));
  const moved = valid.filter(() => rng.chance(0.4));
  const dup = valid.find((t) => t.condition && !moved.includes(t));
  if (dup && rng.chance(0.5))
    moved.push({ ...dup, condition: { name: dup.condition?.name ?? '', context: { x: rng.int(8) } } });
  return moved;
}

type Query = {
  kind: 'check' | 'objects' | 'users';
  object: string;
  relation: string;
  user: string;
  type: string;
  filter: { type: string; relation?: string };
  context: JsonObject | undefined;
};

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
  const inp: OracleInput = {
    model: w.model,
    tuples: [...w.contextual, ...w.tuples],
    context: q.context,
    depthLimit: w.depth,
  };
  const ctx = ctxOf(
    { model: w.model, stored: w.tuples, contextual: w.contextual, context: q.context, depth: w.depth },
    new MemoryTupleView(w.tuples),
  );
  if (q.kind === 'check') {
    const want = oracleCheck(inp, q.object, q.relation, q.user);
    const input: CheckInput = {
      model: w.model,
      stored: w.tuples,
      contextual: w.contextual,
      context: q.context,
      depth: w.depth,
    };
    count(`check:${want}`);
    for (const c of differentialCheckers) {
      const got = outcome(() => c.check(input, q.object, q.relation, q.user));
      if (!same(got, want, c.name === 'eval'))
        return `${c.name}: Check(${q.user}, ${q.relation}, ${q.object}) = ${got}, oracle ${want}`;
    }
    return undefined;
  }
  if (q.kind === 'objects') {
    const want = oracleListObjects(inp, q.type, q.relation, q.user);
    try {
      const got = listObjects(ctx, { type: q.type, relation: q.relation, user: q.user }, Infinity);
      count(got.length > 0 ? 'objects:non-empty' : 'objects:empty');
      const bad = setMismatch(`ListObjects(${q.user}, ${q.relation}, ${q.type})`, got, want, () => false);
      if (bad) return bad;
    } catch (e) {
      if (!(e instanceof AppError) || (e.numeric !== 2000 && e.numeric !== 2002)) throw e;
      const bad = errorMismatch(w, `ListObjects(${q.user}, ${q.relation}, ${q.type})`, e.numeric, 'objects');
      if (bad) return bad;
    }
    // The service's walk over the compact index, confirmed by the walker (where exact) and by the reference.
    // The walk alone where it is exact (union-only relations, no contextual tuples), else confirmed
    // by the walker (where exact) or the reference; and every candidate confirmed.
    const variants = [{}, { confirm: 'reference' as const }, { confirmAll: true }];
    for (const v of variants) {
      const what = `ListObjects on the index (${JSON.stringify(v)})(${q.user}, ${q.relation}, ${q.type})`;
      let onIndex: string[];
      try {
        const walk = openObjectWalk(
          {
            snapshot: indexOf(w.tuples),
            model: w.model,
            contextual: w.contextual,
            context: q.context,
            resolveDepth: w.depth,
            deadline: Date.now() + 60_000,
            ...v,
          },
          q,
        );
        onIndex = [...walk];
      } catch (e) {
        if (e instanceof AppError && (e.numeric === 2000 || e.numeric === 2002)) {
          const m = errorMismatch(w, what, e.numeric, 'objects-index');
          if (m) return m;
          continue;
        }
        throw e;
      }
      const m = setMismatch(what, onIndex, want, () => false);
      if (m) return m;
    }
    return undefined;
  }
  return compareListUsers(w, q, inp, ctx);
}

/** ListUsers against the literal reference expansion (errors, reach) and the oracle's Check. */
function compareListUsers(w: World, q: Query, inp: OracleInput, ctx: EvalContext): string | undefined {
  const what = `ListUsers(${q.object}#${q.relation}, ${JSON.stringify(q.filter)})`;
  const type = q.object.split(':')[0] ?? '';
  const early =
    !(type === q.filter.type && q.relation === q.filter.relation) &&
    !oracleFilterReachable(w.model, type, q.relation, q.filter.type, q.filter.relation);
  const reach = early ? undefined : oracleListUsersReach(inp, q.object, q.relation, q.filter.type, q.filter.relation);
  // Every candidate confirmed, then as the service runs it: the expansion alone where it is exact
  // (union-only relations over a view holding each tuple key once), else confirmed; both must agree.
  const keys = [...w.contextual, ...w.tuples].map((t) => `${t.object}#${t.relation}@${t.user}`);
  const uniqueKeys = new Set(keys).size === keys.length;
  let users: string[] = [];
  for (const opts of [{}, { uniqueKeys }]) {
    try {
      const got = listUsers(ctx, { object: q.object, relation: q.relation, filter: q.filter }, Infinity, opts);
      users = got.map(userString);
    } catch (e) {
      if (!(e instanceof AppError) || (e.numeric !== 2000 && e.numeric !== 2002)) throw e;
      count(`users:${e.numeric}`);
      if (reach?.error === undefined) return `${what}: failed with ${e.numeric}, the reference expansion has no error`;
      continue;
    }
    if (reach?.error !== undefined)
      return `${what}: succeeded with ${JSON.stringify(users)} but the reference expansion fails with ${reach.error}`;
    const bad = compareUsers(w, q, inp, what, reach, users);
    if (bad) return bad;
  }
  return undefined;
}

/** One ListUsers answer against the reference expansion's users, each decided by the oracle's Check. */
function compareUsers(
  w: World,
  q: Query,
  inp: OracleInput,
  what: string,
  reach: ReturnType<typeof oracleListUsersReach> | undefined,
  users: string[],
): string | undefined {
  count(users.length > 0 ? 'users:non-empty' : 'users:empty');
  if (users.some((u) => u.endsWith(':*'))) count('users:wildcard');
  if (users.some((u) => u.includes('#'))) count('users:userset');
  const want = new Map<string, O>();
  for (const u of reach?.users ?? []) {
    const o = oracleCheck(inp, q.object, q.relation, u);
    // A plain object is listed only when a path names it, not only a typed wildcard (§6.3).
    const plain = !u.includes('#') && !u.endsWith(':*');
    want.set(u, o === 'T' && plain && oracleCheck(inp, q.object, q.relation, u, true) !== 'T' ? 'F' : o);
  }
  // Users that Check accepts but the reference expansion never lists (covered by a listed `T:*`,
  // or behind an emptied difference): counted, so a drift in these rules shows in the totals.
  const wild = `${q.filter.type}:*`;
  for (const [u, o] of oracleListUsers(inp, q.object, q.relation, q.filter.type, q.filter.relation)) {
    if (o === 'T' && !users.includes(u))
      count(!u.includes('#') && users.includes(wild) ? 'users:covered-by-wildcard' : 'users:not-reached');
  }
  return setMismatch(what, users, want, () => false);
}

/** A list API may fail with 2000 only when some tuple carries a condition (no other evaluation error exists). */
function errorMismatch(w: World, what: string, code: number, kind: string): string | undefined {
  count(`${kind}:${code}`);
  if (code === 2000 && ![...w.tuples, ...w.contextual].some((t) => t.condition))
    return `${what}: 2000 without any conditioned tuple`;
  return undefined;
}

function setMismatch(
  what: string,
  got: string[],
  want: Map<string, O>,
  covered: (u: string) => boolean,
): string | undefined {
  if (new Set(got).size !== got.length) return `${what}: duplicates in ${JSON.stringify(got)}`;
  for (const g of got)
    if (want.get(g) !== 'T') return `${what}: listed ${g} but oracle Check = ${want.get(g) ?? 'not a candidate'}`;
  for (const [u, o] of want)
    if (o === 'T' && !got.includes(u) && !covered(u))
      return `${what}: missing ${u} (oracle TRUE); got ${JSON.stringify(got)}`;
  return undefined;
}

/** Greedy shrink: drop tuples while the mismatch persists. */
function shrink(w: World, q: Query): World {
  let cur = w;
  for (let i = cur.tuples.length - 1; i >= 0; i--) {
    const next = { ...cur, tuples: cur.tuples.filter((_, j) => j !== i) };
    if (compare(next, q)) cur = next;
  }
  for (let i = cur.contextual.length - 1; i >= 0; i--) {
    const next = { ...cur, contextual: cur.contextual.filter((_, j) => j !== i) };
    if (compare(next, q)) cur = next;
  }
  return cur;
}

/** Greedy shrink for a bulk-path mismatch: drop stored tuples while some check still disagrees. */
async function shrinkBulk(
  w: World,
  checks: readonly BulkCheck[],
  run: (w: World) => Promise<string | undefined>,
): Promise<World> {
  let cur = w;
  for (let i = cur.tuples.length - 1; i >= 0 && checks.length > 0; i--) {
    const next = { ...cur, tuples: cur.tuples.filter((_, j) => j !== i) };
    if (await run(next)) cur = next;
  }
  return cur;
}

const bulk = new BulkPaths();
afterAll(() => bulk.close());

describe('differential: every Check and ListObjects path vs the oracle', () => {
  const total = Number(process.env.LATCH_DIFF_CASES ?? 10_000);
  // The timeout only catches a hang: 10,000 cases took over 120 s on two cores at load 25, and
  // large LATCH_DIFF_CASES runs need a few ms per case more.
  it('agrees on random models, tuples and queries', { timeout: Math.max(600_000, total * 20) }, async () => {
    const seed = Number(process.env.LATCH_DIFF_SEED ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`differential seed ${seed}, ${total} cases (LATCH_DIFF_SEED=${seed} to reproduce)`);
    const rng = new Rng(seed);
    const fail = (repro: Record<string, unknown>, bad: string): never => {
      console.log(`differential reproduction:\n${JSON.stringify({ seed, ...repro })}`);
      return expect.fail(`differential mismatch (LATCH_DIFF_SEED=${seed}): ${bad} (reproduction printed above)`);
    };
    let done = 0;
    while (done < total) {
      const w = randomWorld(rng);
      const checks: BulkCheck[] = [];
      for (let i = 0; i < 25 && done < total; i++, done++) {
        const q = randomQuery(rng, w);
        const bad = compare(w, q);
        if (bad) {
          const min = shrink(w, q);
          fail(
            {
              mismatch: compare(min, q),
              query: q,
              depth: min.depth,
              tuples: min.tuples,
              contextual: min.contextual,
              model: min.json,
            },
            bad,
          );
        }
        if (q.kind === 'check')
          checks.push({ object: q.object, relation: q.relation, user: q.user, context: q.context });
      }
      const run = (v: World): Promise<string | undefined> => bulk.compare(v, indexOf(v.tuples), checks);
      const bad = await run(w);
      if (bad) {
        const min = await shrinkBulk(w, checks, run);
        fail(
          {
            mismatch: await run(min),
            checks,
            depth: min.depth,
            tuples: min.tuples,
            contextual: min.contextual,
            origin: min.origin,
            model: min.json,
          },
          bad,
        );
      }
    }
    console.log(`differential outcomes: ${JSON.stringify(Object.fromEntries([...stats].sort()))}`);
    console.log(`differential bulk paths: ${JSON.stringify(Object.fromEntries([...bulk.counts].sort()))}`);
    expect(done).toBe(total);
    if (total >= 5000) {
      for (const k of [
        'check:T',
        'check:F',
        'check:C',
        'check:2000',
        'check:2002',
        'objects:non-empty',
        'users:non-empty',
        'users:wildcard',
        'users:userset',
      ]) {
        expect(stats.get(k) ?? 0, k).toBeGreaterThan(0);
      }
      for (const k of ['pool', 'pool-ids', 'checkIds', 'msgpack check-ids'])
        expect(bulk.counts.get(k) ?? 0, k).toBeGreaterThan(1000);
    }
  });

  it('ListUsers where typed wildcards meet exclusion and intersection', { timeout: 300_000 }, () => {
    const cases = Math.max(1, Math.floor(total / 4));
    const seed = Number(process.env.LATCH_DIFF_SEED ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`wildcard ListUsers differential seed ${seed}, ${cases} cases`);
    const rng = new Rng(seed);
    const before = stats.get('users:covered-by-wildcard') ?? 0;
    for (let done = 0; done < cases;) {
      const w = randomWorld(rng, { wildcards: true });
      for (let i = 0; i < 25 && done < cases; i++, done++) {
        const q: Query = { ...randomQuery(rng, w), kind: 'users', filter: { type: rng.pick(['user', 'user', 'bot']) } };
        const bad = compare(w, q);
        if (bad) {
          const min = shrink(w, q);
          console.log(
            `wildcard ListUsers reproduction:\n${JSON.stringify({ seed, query: q, tuples: min.tuples, contextual: min.contextual, model: min.json })}`,
          );
          expect.fail(`ListUsers mismatch (LATCH_DIFF_SEED=${seed}): ${bad} (reproduction printed above)`);
        }
      }
    }
    // The class under test occurred: users Check accepts that only a listed wildcard covers.
    if (cases >= 1000) expect((stats.get('users:covered-by-wildcard') ?? 0) - before).toBeGreaterThan(0);
  });
});
