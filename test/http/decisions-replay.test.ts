// Every recorded decision of a random workload replays equal (docs/audit.md): random models (a
// later version written halfway), random writes and deletes with conditions and tuples expiring
// within milliseconds, expiry sweeps, and random Checks (with contexts and contextual tuples),
// BatchChecks, ListObjects and ListUsers over HTTP, all recorded at sampling 1.0; then each
// decision is explained at its recorded revision, instant and model and must answer `equal: true`.
// LATCH_DECISION_SEEDS sets the number of workloads (default 4).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthorizationModelInput } from '../../src/domain/types.js';
import { fittingTuple, ids, OBJECT_TYPES, randomContext, randomRelation, randomUser, Rng } from '../oracle/generate.js';
import { models, randomWrites } from '../engine/history-workload.js';
import { call, start } from './helpers.js';

const SEEDS = Number(process.env.LATCH_DECISION_SEEDS ?? 4);

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;

beforeAll(async () => {
  // Deadlines far above any query here: an answer cut short by a stalled machine is partial by
  // definition and would not replay equal; this test is about exactness, not time limits.
  const deadlines = { checkDeadlineMs: 120_000, listObjectsDeadlineMs: 120_000, listUsersDeadlineMs: 120_000 };
  server = await start({ decisionLog: { sampling: 1 }, expirySweepMs: 0, engine: { workers: 0, ...deadlines } });
});
afterAll(() => server.close());

/** A random query body for one of the four recorded operations. */
function randomQuery(rng: Rng, model: AuthorizationModelInput): [string, Record<string, unknown>] {
  const type = rng.pick(OBJECT_TYPES);
  const object = `${type}:${rng.pick(ids)}`;
  const relation = randomRelation(rng, model, type);
  const context = randomContext(rng);
  const extra = rng.chance(0.2) ? fittingTuple(rng, model) : undefined;
  const common = { ...(context ? { context } : {}), ...(extra ? { contextual_tuples: { tuple_keys: [extra] } } : {}) };
  const k = rng.int(10);
  const tupleKey = { user: randomUser(rng, model), relation, object };
  if (k < 5) return ['check', { tuple_key: tupleKey, ...common }];
  if (k < 7) {
    const checks = [0, 1, 2].map((i) => ({
      tuple_key: { user: randomUser(rng, model), relation, object: `${type}:${rng.pick(ids)}` },
      correlation_id: String(i),
      ...(context ? { context } : {}),
    }));
    return ['batch-check', { checks }];
  }
  if (k < 9) return ['list-objects', { type, relation, user: `user:${rng.pick(ids)}`, ...common }];
  return ['list-users', { object: { type, id: rng.pick(ids) }, relation, user_filters: [{ type: 'user' }], ...common }];
}

interface Explained {
  decision: { id: string; operation: string; answer: unknown };
  replayed: unknown;
  equal: boolean;
}

/** Every recorded answer of every workload, for the non-triviality check after them. */
const answers = new Set<string>();

describe('recorded decisions replay exactly', () => {
  it.each(Array.from({ length: SEEDS }, (_, i) => i + 1))('workload %i', async (seed) => {
    const rng = new Rng(seed * 7919);
    const [first, next] = models(rng);
    const created = await call(server.base, 'POST', '/stores', { name: `replay-${seed}` });
    const store = (created.json as { id: string }).id;
    let model = first;
    await call(server.base, 'POST', `/stores/${store}/authorization-models`, JSON.stringify(model));
    for (let round = 0; round < 8; round++) {
      if (round === 4) {
        model = next;
        await call(server.base, 'POST', `/stores/${store}/authorization-models`, JSON.stringify(model));
      }
      await randomWrites(server.latch, store, model, rng, 3);
      for (let i = 0; i < 10; i++) {
        const [op, body] = randomQuery(rng, model);
        const r = await call(server.base, 'POST', `/stores/${store}/${op}`, body);
        expect(r.status).toBeLessThan(500);
      }
    }
    const recorded: string[] = [];
    let token = '';
    do {
      const q = token ? `?continuation_token=${token}` : '';
      const page = (await call(server.base, 'GET', `/stores/${store}/decisions${q}`)).json as {
        decisions: { id: string }[];
        continuation_token: string;
      };
      recorded.push(...page.decisions.map((d) => d.id));
      token = page.decisions.length > 0 ? page.continuation_token : '';
    } while (token);
    expect(recorded.length).toBeGreaterThan(30);
    const differences: unknown[] = [];
    for (const id of recorded) {
      const r = await call(server.base, 'GET', `/stores/${store}/decisions/${id}/explain`);
      expect(r.status).toBe(200);
      const e = r.json as Explained;
      answers.add(JSON.stringify(e.decision.answer));
      if (!e.equal)
        differences.push({ id, operation: e.decision.operation, recorded: e.decision.answer, replayed: e.replayed });
    }
    expect(differences).toEqual([]);
  });

  // The workloads are not trivial: both answers of a check occur. Held over all workloads, not
  // per workload: tuples expire within milliseconds, so on a stalled machine (load 16-35) one
  // workload's grants could all have expired before its Checks ran.
  it('both answers of a check occur among the workloads', () => {
    expect(answers).toContain('{"allowed":true}');
    expect(answers).toContain('{"allowed":false}');
  });
});
