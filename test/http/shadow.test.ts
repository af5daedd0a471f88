// Shadow evaluation (PUT/GET/DELETE /stores/{id}/shadow, GET …/shadow/report) against a real
// server: a model edit that changes answers is found exactly (Check, BatchCheck items,
// ListObjects), an identical model finds nothing, clearing stops it, a full queue drops and
// counts, the metrics count per operation, and bad input gets its catalog code.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, start } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;

beforeAll(async () => {
  server = await start();
});
afterAll(async () => {
  await server.close();
});

const rel = (types: object[]): object => ({ directly_related_user_types: types });

/** doc viewer: [user] or owner. */
const BASE = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'doc',
      relations: {
        owner: { this: {} },
        viewer: { union: { child: [{ this: {} }, { computedUserset: { relation: 'owner' } }] } },
      },
      metadata: { relations: { owner: rel([{ type: 'user' }]), viewer: rel([{ type: 'user' }]) } },
    },
  ],
};

/** The edit: owners are no longer viewers. */
const CANDIDATE = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'doc',
      relations: { owner: { this: {} }, viewer: { this: {} } },
      metadata: { relations: { owner: rel([{ type: 'user' }]), viewer: rel([{ type: 'user' }]) } },
    },
  ],
};

interface Report {
  shadow: { authorization_model_id: string; sampling: number } | null;
  evaluated: number;
  disagreements: number;
  dropped: number;
  records: {
    operation: string;
    revision: number;
    authorization_model_id: string;
    shadow_model_id: string;
    request: Record<string, unknown>;
    answer: Record<string, unknown>;
    shadow_answer: Record<string, unknown>;
    lost?: string[];
    gained?: string[];
  }[];
}

const key = (user: string, relation: string, object: string) => ({ user, relation, object });

/** A store with the candidate written, then the base written again (the latest, which requests use). */
async function store(base: string): Promise<{ id: string; candidate: string; same: string; latest: string }> {
  const id = ((await call(base, 'POST', '/stores', { name: 'shadow' })).json as { id: string }).id;
  const write = async (m: Record<string, unknown>) =>
    ((await call(base, 'POST', `/stores/${id}/authorization-models`, m)).json as { authorization_model_id: string })
      .authorization_model_id;
  const same = await write(BASE);
  const candidate = await write(CANDIDATE);
  const latest = await write(BASE);
  const tuples = [
    key('user:carl', 'owner', 'doc:1'),
    key('user:anne', 'viewer', 'doc:1'),
    key('user:anne', 'viewer', 'doc:2'),
  ];
  const w = await call(base, 'POST', `/stores/${id}/write`, { writes: { tuple_keys: tuples } });
  expect(w.status).toBe(200);
  return { id, candidate, same, latest };
}

async function traffic(base: string, id: string): Promise<void> {
  for (const user of ['user:carl', 'user:anne', 'user:bob']) {
    const r = await call(base, 'POST', `/stores/${id}/check`, { tuple_key: key(user, 'viewer', 'doc:1') });
    expect(r.status).toBe(200);
  }
  const checks = ['user:carl', 'user:anne', 'user:bob'].map((user, i) => ({
    tuple_key: key(user, 'viewer', 'doc:1'),
    correlation_id: `c${i}`,
  }));
  expect((await call(base, 'POST', `/stores/${id}/batch-check`, { checks })).status).toBe(200);
  for (const user of ['user:carl', 'user:anne']) {
    const r = await call(base, 'POST', `/stores/${id}/list-objects`, { type: 'doc', relation: 'viewer', user });
    expect(r.status).toBe(200);
  }
}

const report = async (base: string, id: string): Promise<Report> => {
  const r = await call(base, 'GET', `/stores/${id}/shadow/report`);
  expect(r.status).toBe(200);
  return r.json as Report;
};

/** The report once `n` sampled requests have been evaluated (or dropped). */
const settled = (base: string, id: string, n: number): Promise<Report> =>
  vi.waitFor(async () => {
    const r = await report(base, id);
    if (r.evaluated + r.dropped < n) throw new Error(`${r.evaluated + r.dropped} of ${n} evaluated`);
    return r;
  });

describe('shadow evaluation', () => {
  it('finds exactly the answers a model edit changes: Check, BatchCheck items, ListObjects', async () => {
    const s = await store(server.base);
    const set = await call(server.base, 'PUT', `/stores/${s.id}/shadow`, {
      authorization_model_id: s.candidate,
      sampling: 1,
    });
    expect(set.status).toBe(200);
    expect(set.json).toMatchObject({ shadow: { authorization_model_id: s.candidate, sampling: 1 } });
    expect((await call(server.base, 'GET', `/stores/${s.id}/shadow`)).json).toMatchObject({
      shadow: { authorization_model_id: s.candidate, sampling: 1 },
    });
    await traffic(server.base, s.id);
    const r = await settled(server.base, s.id, 8);
    expect({ evaluated: r.evaluated, disagreements: r.disagreements, dropped: r.dropped }).toEqual({
      evaluated: 8,
      disagreements: 3,
      dropped: 0,
    });
    const found = r.records
      .map((d) => ({
        operation: d.operation,
        models: [d.authorization_model_id, d.shadow_model_id],
        revision: d.revision,
        request: d.request,
        answer: d.answer,
        shadow_answer: d.shadow_answer,
        ...(d.lost ? { lost: d.lost, gained: d.gained } : {}),
      }))
      .sort((a, b) => a.operation.localeCompare(b.operation));
    const carl = key('user:carl', 'viewer', 'doc:1');
    const models = [s.latest, s.candidate];
    expect(found).toEqual([
      {
        operation: 'batch-check',
        models,
        revision: 1,
        request: { tuple_key: carl, contextual_tuples: [] },
        answer: { allowed: true },
        shadow_answer: { allowed: false },
      },
      {
        operation: 'check',
        models,
        revision: 1,
        request: { tuple_key: carl, contextual_tuples: [] },
        answer: { allowed: true },
        shadow_answer: { allowed: false },
      },
      {
        operation: 'list-objects',
        models,
        revision: 1,
        request: { type: 'doc', relation: 'viewer', user: 'user:carl', contextual_tuples: [] },
        answer: { objects_count: 1 },
        shadow_answer: { objects_count: 0 },
        lost: ['doc:1'],
        gained: [],
      },
    ]);

    const metrics = (await call(server.base, 'GET', '/metrics')).text;
    expect(metrics).toMatch(/^latch_shadow_disagreements_total\{operation="check"\} 1$/m);
    expect(metrics).toMatch(/^latch_shadow_disagreements_total\{operation="list-objects"\} 1$/m);
    expect(metrics).toMatch(/^latch_shadow_evaluations_total\{operation="batch-check"\} 3$/m);

    // Clearing stops it: the same traffic is evaluated no more.
    expect((await call(server.base, 'DELETE', `/stores/${s.id}/shadow`)).status).toBe(204);
    expect((await call(server.base, 'GET', `/stores/${s.id}/shadow`)).json).toEqual({ shadow: null });
    await traffic(server.base, s.id);
    const after = await report(server.base, s.id);
    expect({ shadow: after.shadow, evaluated: after.evaluated, disagreements: after.disagreements }).toEqual({
      shadow: null,
      evaluated: 8,
      disagreements: 3,
    });
  });

  it('an identical model disagrees on nothing', async () => {
    const s = await store(server.base);
    const set = await call(server.base, 'PUT', `/stores/${s.id}/shadow`, {
      authorization_model_id: s.same,
      sampling: 1,
    });
    expect(set.status).toBe(200);
    await traffic(server.base, s.id);
    const r = await settled(server.base, s.id, 8);
    expect({ evaluated: r.evaluated, disagreements: r.disagreements, records: r.records }).toEqual({
      evaluated: 8,
      disagreements: 0,
      records: [],
    });
  });

  it('sampling 0 evaluates nothing', async () => {
    const s = await store(server.base);
    await call(server.base, 'PUT', `/stores/${s.id}/shadow`, { authorization_model_id: s.candidate, sampling: 0 });
    await traffic(server.base, s.id);
    const r = await report(server.base, s.id);
    expect({ evaluated: r.evaluated, dropped: r.dropped, sampling: r.shadow?.sampling }).toEqual({
      evaluated: 0,
      dropped: 0,
      sampling: 0,
    });
  });

  it('bad input: unknown model 404, malformed sampling or body 400, unknown store 404', async () => {
    const s = await store(server.base);
    const put = (body: unknown, id = s.id) =>
      call(server.base, 'PUT', `/stores/${id}/shadow`, body as Record<string, unknown>);
    const code = async (body: unknown, id?: string) => {
      const r = await put(body, id);
      return [r.status, (r.json as { code: string }).code];
    };
    expect(await code({ authorization_model_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', sampling: 1 })).toEqual([
      404,
      'shadow_model_not_found',
    ]);
    expect(await code({ authorization_model_id: s.candidate, sampling: 1.5 })).toEqual([400, 'validation_error']);
    expect(await code({ authorization_model_id: s.candidate, sampling: -0.1 })).toEqual([400, 'validation_error']);
    expect(await code({ authorization_model_id: s.candidate, sampling: '0.5' })).toEqual([400, 'validation_error']);
    expect(await code({ authorization_model_id: s.candidate })).toEqual([400, 'validation_error']);
    expect(await code({ sampling: 0.5 })).toEqual([400, 'validation_error']);
    expect(await code({ authorization_model_id: 'nope', sampling: 0.5 })).toEqual([400, 'validation_error']);
    expect(await code({ authorization_model_id: s.candidate, sampling: 0.5, extra: 1 })).toEqual([
      400,
      'validation_error',
    ]);
    expect(await code({ authorization_model_id: s.candidate, sampling: 0.5 }, '01ARZ3NDEKTSV4RRFFQ69G5FAV')).toEqual([
      404,
      'store_id_not_found',
    ]);
    expect((await call(server.base, 'GET', `/stores/${s.id}/shadow`)).json).toEqual({ shadow: null });
  });
});

describe('shadow evaluation: the bounded queue', () => {
  let small: Server;
  beforeAll(async () => {
    small = await start({ engine: { shadow: { queueSize: 2 } } });
  });
  afterAll(async () => {
    await small.close();
  });

  it('a full queue drops the sampled requests past its bound and counts them', async () => {
    const s = await store(small.base);
    await call(small.base, 'PUT', `/stores/${s.id}/shadow`, { authorization_model_id: s.candidate, sampling: 1 });
    // Ten items answered in one turn: two are queued, eight dropped.
    const checks = Array.from({ length: 10 }, (_, i) => ({
      tuple_key: key('user:carl', 'viewer', `doc:${i}`),
      correlation_id: `c${i}`,
    }));
    expect((await call(small.base, 'POST', `/stores/${s.id}/batch-check`, { checks })).status).toBe(200);
    const r = await settled(small.base, s.id, 10);
    expect({ evaluated: r.evaluated, dropped: r.dropped }).toEqual({ evaluated: 2, dropped: 8 });
    const metrics = (await call(small.base, 'GET', '/metrics')).text;
    expect(metrics).toMatch(/^latch_shadow_dropped_total 8$/m);
  });
});
