// Queries at a past revision, differentially: for random models and random histories (writes,
// deletes, conditions, expiring tuples, expiry sweeps; on LevelDB with a restart halfway, so the
// past is undone over a base loaded from disk as well as over the overlay), every query at every
// past revision equals the answer of a fresh index built from the changelog up to that revision,
// evaluated at that revision's commit time — and Check equals the reference evaluator too.
// On PostgreSQL every delete row carries the deleted tuple's state (latch_prior), checked here;
// a variant erases it from the older half of the log (as LevelDB entries from before the state
// was recorded lack it), so the view restores those keys from their last write instead. LATCH_HISTORY_SEEDS sets
// the number of random histories (default 6, and 2 per variant on PostgreSQL).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { AuthorizationModelInput, JsonObject, TupleKey } from '../../src/domain/types.js';
import { AppError } from '../../src/errors.js';
import { openLatch } from '../../src/engine/service.js';
import type { Latch, PastPoint, UsersetTreeNode } from '../../src/engine/contract.js';
import {
  batchCheckOnFrame,
  checkOnFrame,
  expandOnFrame,
  explainOnFrame,
  listObjectsOnFrame,
  listUsersOnFrame,
  type Frame,
} from '../../src/engine/commands/frame-eval.js';
import { evalCheck, MemoryTupleView } from '../oracle/reference.js';
import { createWalkerChecker } from '../../src/engine/evaluation/walker/checker.js';
import { DEFAULT_ENGINE_CONFIG } from '../../src/engine/config.js';
import { StoreIndex } from '../../src/index/store-index.js';
import { compileModel } from '../../src/model/compile.js';
import { openStorage } from '../../src/storage/index.js';
import type { Storage } from '../../src/storage/types.js';
import { ids, OBJECT_TYPES, randomContext, randomRelation, randomUser, Rng, USER_TYPES } from '../oracle/generate.js';
import { models, randomWrites, statesByRevision } from './history-workload.js';
import { databasePerFile } from '../support/postgres.js';

const SEEDS = Number(process.env.LATCH_HISTORY_SEEDS ?? 6);
const CONFIG = { ...DEFAULT_ENGINE_CONFIG, workers: 0, cacheSize: 0 };
const walker = createWalkerChecker({ workers: 0, resolveDepth: CONFIG.resolveDepth });
afterAll(() => walker.close());

/** An answer or the catalog code it failed with. */
async function outcome<T>(f: () => Promise<T> | T): Promise<T | string> {
  try {
    return await f();
  } catch (err) {
    if (err instanceof AppError) return err.code;
    throw err;
  }
}

/** Expand's tree with every leaf's users and usersets sorted (their order follows the index layout). */
function sortedTree(n: UsersetTreeNode): UsersetTreeNode {
  return {
    ...n,
    ...(n.leaf ? { leaf: sortedLeaf(n.leaf) } : {}),
    ...(n.union ? { union: { nodes: n.union.nodes.map(sortedTree) } } : {}),
    ...(n.intersection ? { intersection: { nodes: n.intersection.nodes.map(sortedTree) } } : {}),
    ...(n.difference
      ? { difference: { base: sortedTree(n.difference.base), subtract: sortedTree(n.difference.subtract) } }
      : {}),
  };
}

function sortedLeaf(leaf: NonNullable<UsersetTreeNode['leaf']>): UsersetTreeNode['leaf'] {
  const users = leaf.users?.users;
  const ttu = leaf.tupleToUserset;
  if (users) return { ...leaf, users: { users: [...users].sort() } };
  if (!ttu) return leaf;
  const computed = [...ttu.computed].sort((a, b) => (a.userset < b.userset ? -1 : a.userset > b.userset ? 1 : 0));
  return { ...leaf, tupleToUserset: { ...ttu, computed } };
}

interface Query {
  readonly object: string;
  readonly relation: string;
  readonly user: string;
  readonly context: JsonObject | undefined;
}

function queries(rng: Rng, model: AuthorizationModelInput, n: number): Query[] {
  return Array.from({ length: n }, () => {
    const type = rng.pick(OBJECT_TYPES);
    return {
      object: `${type}:${rng.pick(ids)}`,
      relation: randomRelation(rng, model, type),
      user: rng.chance(0.8) ? `${rng.pick(USER_TYPES)}:${rng.pick(ids)}` : randomUser(rng, model),
      context: randomContext(rng),
    };
  });
}

/** Every query of `qs` at `at` through the service, and on `frame` (the oracle); both as plain data. */
async function answers(latch: Latch | Frame, storeId: string, modelId: string, at: PastPoint, qs: readonly Query[]) {
  const out: unknown[] = [];
  const base = { storeId, modelId, contextualTuples: [] as TupleKey[], consistency: 'UNSPECIFIED' as const, at };
  const isFrame = 'snapshot' in latch;
  for (const q of qs) {
    const check = { ...base, tupleKey: { object: q.object, relation: q.relation, user: q.user }, context: q.context };
    out.push(
      await outcome(() => (isFrame ? checkOnFrame(latch, walker, check) : latch.check(check).then((r) => r.allowed))),
    );
    out.push(
      await outcome(() =>
        isFrame ? explainOnFrame(latch, CONFIG, check).allowed : latch.explainCheck?.(check).then((r) => r.allowed),
      ),
    );
    const type = q.object.slice(0, q.object.indexOf(':'));
    const lo = { ...base, type, relation: q.relation, user: q.user, context: q.context };
    const objects = await outcome(() =>
      isFrame
        ? listObjectsOnFrame(latch, CONFIG, lo).then((r) => r.objects)
        : latch.listObjects(lo).then((r) => r.objects),
    );
    out.push(Array.isArray(objects) ? [...objects].sort() : objects);
    const hash = q.user.indexOf('#');
    const uType = q.user.slice(0, q.user.indexOf(':'));
    const lu = {
      ...base,
      object: { type, id: q.object.slice(q.object.indexOf(':') + 1) },
      relation: q.relation,
      userFilters: [hash === -1 ? { type: uType } : { type: uType, relation: q.user.slice(hash + 1) }],
      context: q.context,
    };
    const users = await outcome(() =>
      isFrame ? listUsersOnFrame(latch, CONFIG, lu).users : latch.listUsers(lu).then((r) => r.users),
    );
    out.push(Array.isArray(users) ? users.map((u) => JSON.stringify(u)).sort() : users);
    const ex = { ...base, object: q.object, relation: q.relation };
    const tree = await outcome(() => (isFrame ? expandOnFrame(latch, ex) : latch.expand(ex).then((r) => r.tree)));
    out.push(typeof tree === 'string' ? tree : sortedTree(tree.root));
  }
  const items = qs.map((q, i) => ({
    correlationId: String(i),
    tupleKey: { object: q.object, relation: q.relation, user: q.user },
    contextualTuples: [],
    context: q.context,
  }));
  const batch = { storeId, modelId, checks: items, consistency: 'UNSPECIFIED' as const, at };
  const results = isFrame ? await batchCheckOnFrame(latch, walker, items) : (await latch.batchCheck(batch)).results;
  out.push([...results].map(([id, o]) => [id, 'error' in o ? o.error.code : o.allowed]));
  return out;
}

/** The reference evaluator over the tuples of a revision that have not expired by `instant`. */
function referenceCheck(
  model: AuthorizationModelInput,
  tuples: Iterable<TupleKey>,
  instant: number,
  q: Query,
): unknown {
  const live = [...tuples].filter((t) => t.expires_at === undefined || Date.parse(t.expires_at) > instant);
  const ctx = {
    model: compileModel({ id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', ...model }),
    view: new MemoryTupleView(live),
    context: q.context,
    resolveDepth: CONFIG.resolveDepth,
    deadline: Date.now() + 60_000,
  };
  try {
    return evalCheck(ctx, q.object, q.relation, q.user);
  } catch (err) {
    if (err instanceof AppError) return err.code;
    throw err;
  }
}

async function compareEveryRevision(
  latch: Latch,
  storage: Storage,
  storeId: string,
  modelId: string,
  model: AuthorizationModelInput,
  rng: Rng,
): Promise<number> {
  const states = await statesByRevision(storage, storeId);
  const created = Date.parse((await latch.getStore(storeId)).created_at);
  const compiled = compileModel({ id: modelId, ...model });
  let compared = 0;
  for (let r = 0; r < states.length; r++) {
    const tuples = states[r] ?? new Map<string, TupleKey>();
    const instant = r === 0 ? created : ((await storage.revisionTime(storeId, r)) as number);
    const fresh = StoreIndex.build(tuples.values(), r);
    const frame: Frame = { snapshot: fresh.snapshot(), model: compiled, instant, deadline: Date.now() + 60_000 };
    const qs = queries(rng, model, 4);
    const got = await answers(latch, storeId, modelId, { revision: r }, qs);
    const want = await answers(frame, storeId, modelId, { revision: r }, qs);
    expect(got, `revision ${r}`).toEqual(want);
    for (const q of qs) {
      const ref = referenceCheck(model, tuples.values(), instant, q);
      const mine = await outcome(() =>
        latch
          .check({
            storeId,
            modelId,
            contextualTuples: [],
            consistency: 'UNSPECIFIED',
            at: { revision: r },
            tupleKey: q,
            context: q.context,
          })
          .then((x) => x.allowed),
      );
      // The reference's cycle outcome (2) is a denial for Check.
      expect(mine, `revision ${r} reference`).toEqual(ref === 2 ? false : ref);
    }
    fresh.close();
    compared += qs.length;
  }
  return compared;
}

describe('queries at a past revision equal a fresh index of that revision', () => {
  for (let seed = 1; seed <= SEEDS; seed++) {
    it(`random history ${seed} on LevelDB, restarted halfway`, async () => {
      const rng = new Rng(seed * 7919);
      const [model] = models(rng);
      const dir = await mkdtemp(join(tmpdir(), 'latch-history-'));
      try {
        let storage = await openStorage({ path: dir });
        let latch = await openLatch({ storage, config: CONFIG, expirySweepMs: 0 });
        const storeId = (await latch.createStore('history')).id;
        const modelId = await latch.writeModel(storeId, model);
        await randomWrites(latch, storeId, model, rng, 30, true);
        await latch.close();
        storage = await openStorage({ path: dir });
        latch = await openLatch({ storage, config: { ...CONFIG, history: { cachedViews: 2 } }, expirySweepMs: 0 });
        await latch.ready();
        await randomWrites(latch, storeId, model, rng, 30, true);
        try {
          const compared = await compareEveryRevision(latch, storage, storeId, modelId, model, rng);
          expect(compared).toBeGreaterThan(100);
        } finally {
          await latch.close();
        }
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});

const pgdb = databasePerFile();
const docType = {
  type: 'doc',
  relations: { viewer: { this: {} } },
  metadata: { relations: { viewer: { directly_related_user_types: [{ type: 'user' }] } } },
};

describe.runIf(pgdb.run)('queries at a past revision on PostgreSQL', () => {
  /** Every delete change of the store, and how many carry the deleted tuple's state. */
  async function deletes(storage: Storage, storeId: string): Promise<{ all: number; withPrior: number }> {
    let all = 0;
    let withPrior = 0;
    for await (const c of storage.changesSince(storeId, 0))
      if (c.operation === 'delete') {
        all++;
        if (c.prior) withPrior++;
      }
    return { all, withPrior };
  }

  it('a revision whose changelog was cut is refused revision_not_retained; a delete with state still answers', async () => {
    const storage = await openStorage({ postgres: { url: pgdb.url, poolSize: 2 } });
    const latch = await openLatch({ storage, config: CONFIG, expirySweepMs: 0 });
    const db = new pg.Client({ connectionString: pgdb.url });
    await db.connect();
    try {
      const storeId = (await latch.createStore('cut')).id;
      const model = { schema_version: '1.1', type_definitions: [{ type: 'user' }, docType] };
      const modelId = await latch.writeModel(storeId, model);
      const anne = { object: 'doc:1', relation: 'viewer', user: 'user:anne' };
      const bob = { object: 'doc:1', relation: 'viewer', user: 'user:bob' };
      await latch.write({ storeId, writes: [anne], deletes: [], onDuplicate: 'error', onMissing: 'error' }); // 1
      await latch.write({ storeId, writes: [bob], deletes: [], onDuplicate: 'error', onMissing: 'error' }); // 2
      await latch.write({ storeId, writes: [], deletes: [anne], onDuplicate: 'error', onMissing: 'error' }); // 3
      // The log before revision 2 is cut, as a retention would.
      await db.query('DELETE FROM latch_changes WHERE store_id = $1 AND revision < 2', [storeId]);
      await db.query('DELETE FROM latch_revisions WHERE store_id = $1 AND revision < 2', [storeId]);
      const at = (revision: number) =>
        outcome(() =>
          latch
            .check({
              storeId,
              modelId,
              tupleKey: anne,
              contextualTuples: [],
              consistency: 'UNSPECIFIED',
              at: { revision },
            })
            .then((r) => r.allowed),
        );
      expect(await at(1)).toBe('revision_not_retained');
      // Revision 3's delete carries anne's tuple: revision 2 is answered from the changes after it.
      expect(await at(2)).toBe(true);
      expect(await at(3)).toBe(false);
      // A delete row without the deleted tuple's state needs anne's write, which the cut removed.
      await db.query('UPDATE latch_changes SET condition = NULL WHERE store_id = $1 AND deleted', [storeId]);
      const fresh = await openLatch({
        storage: await openStorage({ postgres: { url: pgdb.url, poolSize: 2 } }),
        config: CONFIG,
        expirySweepMs: 0,
      });
      try {
        const r = await outcome(() =>
          fresh
            .check({
              storeId,
              modelId,
              tupleKey: anne,
              contextualTuples: [],
              consistency: 'UNSPECIFIED',
              at: { revision: 2 },
            })
            .then((x) => x.allowed),
        );
        expect(r).toBe('revision_not_retained');
      } finally {
        await fresh.close();
      }
    } finally {
      await db.end();
      await latch.close();
    }
  });

  for (const erased of [false, true])
    for (let seed = 1; seed <= Math.max(1, Math.floor(SEEDS / 3)); seed++) {
      const label = erased ? 'the older half of its delete rows without state' : 'deletes with state';
      it(`random history ${seed}, ${label}`, async () => {
        const rng = new Rng(seed * 104729 + (erased ? 1 : 0));
        const [model] = models(rng);
        const storage = await openStorage({ postgres: { url: pgdb.url, poolSize: 4 } });
        const latch = await openLatch({ storage, config: CONFIG, expirySweepMs: 0 });
        try {
          const storeId = (await latch.createStore('history')).id;
          const modelId = await latch.writeModel(storeId, model);
          await randomWrites(latch, storeId, model, rng, 40, true);
          const logged = await deletes(storage, storeId);
          expect(logged.all).toBeGreaterThan(5);
          expect(logged.withPrior).toBe(logged.all);
          if (erased) {
            const half = Math.floor((await storage.revision(storeId)) / 2);
            const db = new pg.Client({ connectionString: pgdb.url });
            await db.connect();
            try {
              await db.query(
                'UPDATE latch_changes SET condition = NULL WHERE store_id = $1 AND deleted AND revision <= $2',
                [storeId, half],
              );
            } finally {
              await db.end();
            }
            const after = await deletes(storage, storeId);
            expect(after.withPrior).toBeLessThan(after.all);
          }
          expect(await compareEveryRevision(latch, storage, storeId, modelId, model, rng)).toBeGreaterThan(80);
        } finally {
          await latch.close();
        }
      });
    }
});
