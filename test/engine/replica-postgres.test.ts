// Three nodes over one real PostgreSQL database, in one process: each node is a LatchService over
// its own PgStorage (its own pool and LISTEN connection), as three `latch serve` processes would
// be. Writes through one node reach the others by NOTIFY or by the revision read of
// HIGHER_CONSISTENCY; concurrent writers on all three leave every node equal to a single-node
// replay; three expiry sweepers delete each expired tuple once. (The same over real processes: test/ops/replicas.test.ts.)
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AuthorizationModelInput, TupleKey } from '../../src/domain/types.js';
import { AppError } from '../../src/errors.js';
import { LatchService } from '../../src/engine/service.js';
import type { CheckInput } from '../../src/engine/contract.js';
import { openStorage } from '../../src/storage/index.js';
import { openPostgresStorage } from '../../src/storage/postgres/index.js';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/postgres.js';
import { MODEL as MODEL_JSON } from '../http/helpers.js';
import { DEFAULT_ENGINE_CONFIG } from '../../src/engine/config.js';

const MODEL = MODEL_JSON as unknown as AuthorizationModelInput;
const run = hasPostgres();
let db: TestDatabase;
const nodes: LatchService[] = [];

const silent = (): void => undefined;

beforeAll(async () => {
  if (!run) return;
  db = await createTestDatabase();
  for (let i = 0; i < 3; i++) {
    const storage = await openPostgresStorage({ url: db.url, poolSize: 4 });
    await storage.listening();
    nodes.push(new LatchService(storage, { ...DEFAULT_ENGINE_CONFIG, workers: 0, pollIntervalMs: 0 }, silent));
  }
});

afterAll(async () => {
  for (const n of nodes.splice(0)) await n.close();
  if (run) await db.drop();
});

const tk = (object: string, relation: string, user: string): TupleKey => ({ object, relation, user });
const checkOf = (storeId: string, key: TupleKey, extra: Partial<CheckInput> = {}): CheckInput => ({
  storeId,
  tupleKey: key,
  contextualTuples: [],
  consistency: 'MINIMIZE_LATENCY',
  ...extra,
});

describe.runIf(run)('three nodes over one PostgreSQL database', () => {
  it('a write through A is visible at once to HIGHER_CONSISTENCY and minRevision queries on B and C, and reaches them by NOTIFY', async () => {
    const [a, b, c] = nodes as [LatchService, LatchService, LatchService];
    const s = (await a.createStore('visible')).id;
    await a.writeModel(s, MODEL);
    for (const n of [b, c]) expect((await n.check(checkOf(s, tk('doc:1', 'viewer', 'user:anne')))).allowed).toBe(false);
    const { revision } = await a.write({
      storeId: s,
      writes: [tk('doc:1', 'viewer', 'user:anne')],
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
    expect(revision).toBe(1);
    expect(
      (await b.check(checkOf(s, tk('doc:1', 'viewer', 'user:anne'), { consistency: 'HIGHER_CONSISTENCY' }))).allowed,
    ).toBe(true);
    expect((await c.check(checkOf(s, tk('doc:1', 'viewer', 'user:anne'), { minRevision: revision }))).allowed).toBe(
      true,
    );
    const w2 = await b.write({
      storeId: s,
      writes: [tk('doc:2', 'viewer', 'user:anne')],
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
    expect(w2.revision).toBe(2);
    // No poll runs (poll interval 0) and no query asks: only the notification moves A.
    await vi.waitFor(() => expect(a.checkSync(checkOf(s, tk('doc:2', 'viewer', 'user:anne')))?.allowed).toBe(true), {
      timeout: 5000,
      interval: 5,
    });
    // A model written through C is the latest on A and B once its notification arrives.
    const next = await c.writeModel(s, MODEL);
    await vi.waitFor(
      async () => expect((await a.check(checkOf(s, tk('doc:2', 'viewer', 'user:anne')))).modelId).toBe(next),
      { timeout: 5000, interval: 5 },
    );
    expect(
      (await b.check(checkOf(s, tk('doc:2', 'viewer', 'user:anne'), { consistency: 'HIGHER_CONSISTENCY' }))).modelId,
    ).toBe(next);
  });

  it("concurrent writers on all three nodes: every node's answers and change log equal a single-node replay", async () => {
    const s = (await (nodes[0] as LatchService).createStore('concurrent')).id;
    await (nodes[0] as LatchService).writeModel(s, MODEL);
    const universe: TupleKey[] = [];
    for (let d = 0; d < 8; d++)
      for (const r of ['owner', 'viewer'])
        for (const u of ['user:a', 'user:b', 'user:c', 'user:d']) universe.push(tk(`doc:${d}`, r, u));
    let seed = 7;
    const rnd = (n: number): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) % n;
    };
    const acked: { revision: number; writes: TupleKey[]; deletes: TupleKey[] }[] = [];
    const writer = async (n: LatchService, count: number): Promise<void> => {
      // Several writes in flight per node: the database orders them.
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          for (let i = 0; i < count; i++) {
            const picked = new Map<string, TupleKey>();
            for (let k = 1 + rnd(4); k > 0; k--) {
              const t = universe[rnd(universe.length)] as TupleKey;
              picked.set(`${t.object}#${t.relation}@${t.user}`, t);
            }
            const keys = [...picked.values()];
            const deletes = keys.filter(() => rnd(3) === 0);
            const writes = keys.filter((t) => !deletes.includes(t));
            try {
              const out = await n.write({ storeId: s, writes, deletes, onDuplicate: 'error', onMissing: 'error' });
              acked.push({ revision: out.revision, writes, deletes });
            } catch (err) {
              if (!(err instanceof AppError) || err.code !== 'write_failed_due_to_invalid_input') throw err;
            }
          }
        }),
      );
    };
    await Promise.all(nodes.map((n) => writer(n, 25)));
    for (const n of nodes) await n.caughtUp();
    expect(acked.length).toBeGreaterThan(60);
    acked.sort((x, y) => x.revision - y.revision);
    expect(acked.map((w) => w.revision)).toEqual(acked.map((_, i) => i + 1)); // every revision, once

    const replay = new LatchService(await openStorage({}), { ...DEFAULT_ENGINE_CONFIG, workers: 0 }, silent);
    try {
      const rs = (await replay.createStore('replay')).id;
      await replay.writeModel(rs, MODEL);
      for (const w of acked)
        expect(
          (
            await replay.write({
              storeId: rs,
              writes: w.writes,
              deletes: w.deletes,
              onDuplicate: 'error',
              onMissing: 'error',
            })
          ).revision,
        ).toBe(w.revision);
      const expected = await Promise.all(universe.map(async (t) => (await replay.check(checkOf(rs, t))).allowed));
      const changes = async (n: LatchService, storeId: string): Promise<string[]> => {
        const out: string[] = [];
        let after: string | undefined;
        for (;;) {
          const page = await n.readChanges({ storeId, pageSize: 100, after });
          if (page.items.length === 0) return out;
          out.push(
            ...page.items.map(
              (c) => `${c.operation} ${c.tuple_key.object}#${c.tuple_key.relation}@${c.tuple_key.user}`,
            ),
          );
          after = page.next;
        }
      };
      const tuples = async (n: LatchService, storeId: string): Promise<string[]> => {
        const out: string[] = [];
        let after: string | undefined;
        do {
          const page = await n.read({
            storeId,
            filter: { object: 'doc:' },
            pageSize: 100,
            after,
            consistency: 'MINIMIZE_LATENCY',
          });
          out.push(...page.items.map((t) => `${t.key.object}#${t.key.relation}@${t.key.user}`));
          after = page.next;
        } while (after);
        return out.sort();
      };
      const replayLog = await changes(replay, rs);
      const replayTuples = await tuples(replay, rs);
      expect(replayTuples.length).toBeGreaterThan(0);
      for (const n of nodes) {
        expect(universe.map((t) => n.checkSync(checkOf(s, t))?.allowed)).toEqual(expected);
        expect(await changes(n, s)).toEqual(replayLog);
        expect(await tuples(n, s)).toEqual(replayTuples);
      }
    } finally {
      await replay.close();
    }
  });

  it('three sweepers over one database: each expired tuple is deleted once, with one change, and every node stops granting it', async () => {
    const T0 = Date.parse('2030-01-01T00:00:00.000Z');
    let now = T0;
    const clock = (): number => now;
    const sweepers: LatchService[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        const storage = await openPostgresStorage({ url: db.url, poolSize: 4 });
        await storage.listening();
        sweepers.push(
          new LatchService(storage, { ...DEFAULT_ENGINE_CONFIG, workers: 0, pollIntervalMs: 0 }, silent, {
            clock,
            expirySweepMs: 0,
          }),
        );
      }
      const [a] = sweepers as [LatchService];
      const s = (await a.createStore('sweep')).id;
      await a.writeModel(s, MODEL);
      const expiresAt = new Date(T0 + 60_000).toISOString();
      const expiring = Array.from({ length: 50 }, (_, i) => ({
        ...tk(`doc:${i}`, 'viewer', 'user:anne'),
        expires_at: expiresAt,
      }));
      await a.write({
        storeId: s,
        writes: [...expiring, tk('doc:keep', 'viewer', 'user:anne')],
        deletes: [],
        onDuplicate: 'error',
        onMissing: 'error',
      });
      // Every node has the store loaded and current (the sweeper passes over loaded stores).
      for (const n of sweepers)
        expect(
          (await n.check(checkOf(s, tk('doc:0', 'viewer', 'user:anne'), { consistency: 'HIGHER_CONSISTENCY' })))
            .allowed,
        ).toBe(true);
      now = T0 + 60_000;
      const counts = await Promise.all(sweepers.map((n) => n.sweepExpired()));
      expect(counts.reduce((x, y) => x + y, 0)).toBe(50);
      const first = await a.readChanges({ storeId: s, pageSize: 100 });
      const log = [
        ...first.items,
        ...(await a.readChanges({ storeId: s, pageSize: 100, after: first.next })).items,
      ].filter((c) => c.operation === 'TUPLE_OPERATION_DELETE');
      expect(log.map((c) => `${c.tuple_key.object} ${c.tuple_key.expires_at}`).sort()).toEqual(
        expiring.map((t) => `${t.object} ${expiresAt}`).sort(),
      );
      for (const n of sweepers) {
        await n.caughtUp();
        expect(
          (await n.read({ storeId: s, filter: {}, pageSize: 100, consistency: 'MINIMIZE_LATENCY' })).items.map(
            (t) => t.key.object,
          ),
        ).toEqual(['doc:keep']);
        expect(expiring.some((t) => n.checkSync(checkOf(s, t))?.allowed !== false)).toBe(false);
        expect(n.checkSync(checkOf(s, tk('doc:keep', 'viewer', 'user:anne')))?.allowed).toBe(true);
      }
      expect(await Promise.all(sweepers.map((n) => n.sweepExpired()))).toEqual([0, 0, 0]);
    } finally {
      for (const n of sweepers) await n.close();
    }
  });
});
