// The decision log over HTTP (docs/audit.md): what is recorded (Check, BatchCheck items,
// ListObjects, ListUsers, AuthZEN evaluations) and searched, each decision explained at its
// revision with `equal: true`, the per-store sampling setting (persisted across a restart on
// LevelDB), AuthZEN `context.reason`, the metrics, and every bad input with its catalog code.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ulid } from '../../src/domain/ids.js';
import { latch } from '../cli/helpers.js';
import { call, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
interface Decision {
  id: string;
  timestamp: string;
  operation: string;
  revision: number;
  authorization_model_id: string;
  request: Record<string, unknown>;
  answer: Record<string, unknown>;
}

let server: Server;
let store = '';
let other = '';

const anne = { user: 'user:anne', relation: 'viewer', object: 'doc:1' };
const bob = { user: 'user:bob', relation: 'viewer', object: 'doc:1' };

async function decisions(s: string, query = ''): Promise<Decision[]> {
  const q = query ? `?query=${encodeURIComponent(query)}` : '';
  const r = await call(server.base, 'GET', `/stores/${s}/decisions${q}`);
  expect(r.status).toBe(200);
  return (r.json as { decisions: Decision[] }).decisions;
}

const explain = (s: string, id: string) => call(server.base, 'GET', `/stores/${s}/decisions/${id}/explain`);

beforeAll(async () => {
  server = await start({ decisionLog: { sampling: 1 } });
  store = await storeWithModel(server.base, 'decisions');
  other = await storeWithModel(server.base, 'other');
  const w = await call(server.base, 'POST', `/stores/${store}/write`, {
    writes: { tuple_keys: [anne, { user: 'user:carl', relation: 'owner', object: 'doc:2' }] },
  });
  expect(w.status).toBe(200);
});

afterAll(() => server.close());

describe('the decision log', () => {
  it('records every kind of decision with its revision, model, request and answer', async () => {
    const p = `/stores/${store}`;
    expect((await call(server.base, 'POST', `${p}/check`, { tuple_key: anne })).json).toMatchObject({ allowed: true });
    await call(server.base, 'POST', `${p}/check`, { tuple_key: bob, context: { ip: '10.0.0.1' } });
    await call(server.base, 'POST', `${p}/batch-check`, {
      checks: [
        { tuple_key: anne, correlation_id: 'a' },
        { tuple_key: { ...bob, object: 'doc:2' }, correlation_id: 'b' },
        { tuple_key: { ...bob, relation: 'nope' }, correlation_id: 'bad' },
      ],
    });
    await call(server.base, 'POST', `${p}/list-objects`, { type: 'doc', relation: 'viewer', user: 'user:carl' });
    await call(server.base, 'POST', `${p}/list-users`, {
      object: { type: 'doc', id: '1' },
      relation: 'viewer',
      user_filters: [{ type: 'user' }],
    });
    const ev = await call(server.base, 'POST', `${p}/access/v1/evaluation`, {
      subject: { type: 'user', id: 'anne' },
      action: { name: 'viewer' },
      resource: { type: 'doc', id: '1' },
    });
    expect(ev.json).toEqual({ decision: true });
    const all = await decisions(store);
    expect(all.map((d) => d.operation)).toEqual([
      'Check',
      'Check',
      'BatchCheck',
      'BatchCheck',
      'ListObjects',
      'ListUsers',
      'Evaluation',
    ]);
    expect(all[0]).toMatchObject({ revision: 1, request: { tuple_key: anne }, answer: { allowed: true } });
    expect(all[1]).toMatchObject({ request: { context: { ip: '10.0.0.1' } }, answer: { allowed: false } });
    expect(all[3]).toMatchObject({ request: { correlation_id: 'b' }, answer: { allowed: false } });
    expect(all[4]?.answer).toEqual({ objects: ['doc:2'] });
    expect(all[5]?.answer).toEqual({ users: [{ object: { type: 'user', id: 'anne' } }] });
    expect(new Set(all.map((d) => d.authorization_model_id)).size).toBe(1);
    // Searchable like the store logs; another store's decisions are its own.
    expect((await decisions(store, 'operation:"ListUsers"')).length).toBe(1);
    expect((await decisions(store, 'answer.allowed:true')).length).toBe(3);
    expect(await decisions(other)).toEqual([]);
    const m = await call(server.base, 'GET', '/metrics');
    expect(m.text).toMatch(/latch_decisions_recorded_total \d+/);
    expect(m.text).toMatch(/latch_decisions_dropped_total 0/);
  });

  it('explains each recorded decision at its revision: the replay equals the answer', async () => {
    // Later writes change today's answers, not the recorded ones.
    await call(server.base, 'POST', `/stores/${store}/write`, {
      writes: { tuple_keys: [bob] },
      deletes: { tuple_keys: [anne] },
    });
    const all = await decisions(store);
    expect(all.length).toBeGreaterThan(0);
    for (const d of all) {
      const r = await explain(store, d.id);
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ decision: { id: d.id }, equal: true });
    }
    const first = (await explain(store, all[0]?.id ?? '')).json as {
      replayed: unknown;
      reason: { chain: { kind: string; label: string }[] };
      tree: unknown;
    };
    expect(first.replayed).toEqual({ allowed: true });
    expect(first.reason.chain.at(-1)).toEqual({ kind: 'tuple', label: 'doc:1#viewer@user:anne' });
    expect(first.tree).toBeTruthy();
  });

  it('refuses bad decision ids with catalog codes, never a 500', async () => {
    const [d] = await decisions(store);
    const unknown = await explain(store, ulid());
    expect(unknown.status).toBe(404);
    expect((unknown.json as { code: string }).code).toBe('decision_not_found');
    const foreign = await explain(other, d?.id ?? '');
    expect(foreign.status).toBe(404);
    expect((foreign.json as { code: string }).code).toBe('decision_not_found');
    for (const bad of ['nope', '01J', 'x'.repeat(26), '%00']) {
      const r = await explain(store, bad);
      expect(r.status).toBe(400);
      expect((r.json as { code: string }).code).toBe('validation_error');
    }
    const noStore = await explain(ulid(), d?.id ?? '');
    expect(noStore.status).toBe(404);
    expect((noStore.json as { code: string }).code).toBe('store_id_not_found');
    const badSearch = await call(server.base, 'GET', `/stores/${store}/decisions?start_time=yesterday`);
    expect(badSearch.status).toBe(400);
    const badToken = await call(server.base, 'GET', `/stores/${store}/decisions?continuation_token=abc`);
    expect((badToken.json as { code: string }).code).toBe('invalid_continuation_token');
  });

  it('samples per store through the API', async () => {
    const p = `/stores/${other}`;
    expect((await call(server.base, 'GET', `${p}/decision-log`)).json).toEqual({
      store_id: other,
      sampling: null,
      effective_sampling: 1,
    });
    const set = await call(server.base, 'PUT', `${p}/decision-log`, { sampling: 0 });
    expect(set.json).toMatchObject({ sampling: 0, effective_sampling: 0 });
    await call(server.base, 'POST', `${p}/check`, { tuple_key: anne });
    expect(await decisions(other)).toEqual([]);
    for (const sampling of [2, -1, 'all', true, undefined]) {
      const r = await call(server.base, 'PUT', `${p}/decision-log`, { sampling });
      expect(r.status).toBe(400);
      expect((r.json as { code: string }).code).toBe('validation_error');
    }
    const reset = await call(server.base, 'PUT', `${p}/decision-log`, { sampling: null });
    expect(reset.json).toMatchObject({ sampling: null, effective_sampling: 1 });
    await call(server.base, 'POST', `${p}/check`, { tuple_key: anne });
    expect((await decisions(other)).length).toBe(1);
    const gone = await call(server.base, 'PUT', `/stores/${ulid()}/decision-log`, { sampling: 1 });
    expect((gone.json as { code: string }).code).toBe('store_id_not_found');
  });
});

describe('latch decisions', () => {
  it('export prints NDJSON between two times; explain replays one; sampling reads and sets', async () => {
    const env = { LATCH_API_URL: server.base, LATCH_STORE_ID: store };
    const all = await decisions(store);
    const since = all[1] as Decision;
    const out = await latch(
      ['decisions', 'export', '--since', since.timestamp, '--until', new Date().toISOString()],
      env,
    );
    expect(out.code).toBe(0);
    const lines = out.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Decision);
    const expected = all.filter((d) => d.timestamp >= since.timestamp);
    expect(expected.length).toBeGreaterThan(1);
    expect(lines.map((d) => d.id)).toEqual(expected.map((d) => d.id));
    const ex = await latch(['decisions', 'explain', all[0]?.id ?? ''], env);
    expect(ex.code).toBe(0);
    expect(JSON.parse(ex.out)).toMatchObject({ equal: true, replayed: { allowed: true } });
    const unknown = await latch(['decisions', 'explain', ulid()], env);
    expect(unknown.code).toBe(1);
    const set = await latch(['decisions', 'sampling', '0.5'], env);
    expect(JSON.parse(set.out)).toMatchObject({ sampling: 0.5 });
    const reset = await latch(['decisions', 'sampling', 'default'], env);
    expect(JSON.parse(reset.out)).toMatchObject({ sampling: null, effective_sampling: 1 });
  });
});

describe('AuthZEN reasons', () => {
  const request = {
    subject: { type: 'user', id: 'carl' },
    action: { name: 'viewer' },
    resource: { type: 'doc', id: '2' },
  };

  it('an evaluation carries context.reason when options.reason is true', async () => {
    const p = `/stores/${store}/access/v1`;
    const plain = await call(server.base, 'POST', `${p}/evaluation`, request);
    expect(plain.json).toEqual({ decision: true });
    const r = await call(server.base, 'POST', `${p}/evaluation`, { ...request, options: { reason: true } });
    const reason = (r.json as { context: { reason: { allowed: boolean; chain: { kind: string; label: string }[] } } })
      .context.reason;
    expect(reason.allowed).toBe(true);
    expect(reason.chain[0]).toEqual({ kind: 'relation', label: 'doc:2#viewer' });
    expect(reason.chain.at(-1)).toEqual({ kind: 'tuple', label: 'doc:2#owner@user:carl' });
    const denied = await call(server.base, 'POST', `${p}/evaluation`, {
      ...request,
      resource: { type: 'doc', id: '3' },
      options: { reason: true },
    });
    expect(denied.json).toMatchObject({ decision: false, context: { reason: { allowed: false, chain: [] } } });
    const many = await call(server.base, 'POST', `${p}/evaluations`, {
      ...request,
      evaluations: [{}, { resource: { type: 'doc', id: '3' } }],
      options: { reason: true },
    });
    const items = (many.json as { evaluations: { decision: boolean; context: { reason: { allowed: boolean } } }[] })
      .evaluations;
    expect(items.map((i) => [i.decision, i.context.reason.allowed])).toEqual([
      [true, true],
      [false, false],
    ]);
    const bad = await call(server.base, 'POST', `${p}/evaluation`, { ...request, options: { reason: 'yes' } });
    expect(bad.status).toBe(400);
    expect((bad.json as { code: string }).code).toBe('validation_error');
  });
});

describe('the per-store setting on LevelDB', () => {
  it('persists across a restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'latch-decisions-'));
    try {
      let s = await start({ datastore: 'leveldb', dataDir: dir });
      const id = await storeWithModel(s.base, 'persisted');
      expect((await call(s.base, 'PUT', `/stores/${id}/decision-log`, { sampling: 0.5 })).status).toBe(200);
      await s.close();
      s = await start({ datastore: 'leveldb', dataDir: dir });
      expect((await call(s.base, 'GET', `/stores/${id}/decision-log`)).json).toMatchObject({
        sampling: 0.5,
        effective_sampling: 0.5,
      });
      await s.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
