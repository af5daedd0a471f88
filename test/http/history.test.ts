// Queries at a past revision over HTTP (docs/audit.md): `at_revision`, the `Latch-At-Revision`
// header and `at_time` on every query endpoint, the revision read reported as `Latch-Revision`,
// the model that was the latest then, and every bad point refused with its catalog code.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LatchChannelClient } from '../../src/client/index.js';
import { MODEL, call, start } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;

let server: Server;
let store = '';
let firstModel = '';
/** Commit times of revisions 1..3 (ms). */
const times: number[] = [];

const anne = { user: 'user:anne', relation: 'viewer', object: 'doc:1' };
const bob = { user: 'user:bob', relation: 'viewer', object: 'doc:1' };

/** Resolves once the clock has passed `ms`: the next write commits in a later millisecond. */
const after = (ms: number): Promise<void> => vi.waitFor(() => expect(Date.now()).toBeGreaterThan(ms));

async function write(body: Record<string, unknown>): Promise<void> {
  const w = await call(server.base, 'POST', `/stores/${store}/write`, body);
  expect(w.status).toBe(200);
  const changes = await call(server.base, 'GET', `/stores/${store}/changes?page_size=100`);
  const list = (changes.json as { changes: { timestamp: string }[] }).changes;
  times.push(Date.parse(list[list.length - 1]?.timestamp ?? ''));
  await after(times[times.length - 1] ?? 0);
}

beforeAll(async () => {
  server = await start({ expirySweepMs: 0, engine: { history: { maxUndo: 3 } } });
  store = ((await call(server.base, 'POST', '/stores', { name: 'history' })).json as { id: string }).id;
  firstModel = (
    (await call(server.base, 'POST', `/stores/${store}/authorization-models`, MODEL)).json as {
      authorization_model_id: string;
    }
  ).authorization_model_id;
  await write({ writes: { tuple_keys: [anne] } }); // revision 1
  await write({ writes: { tuple_keys: [bob] } }); // revision 2
  await write({ deletes: { tuple_keys: [anne] } }); // revision 3
});

afterAll(() => server.close());

const check = (extra: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call(server.base, 'POST', `/stores/${store}/check`, { tuple_key: anne, ...extra }, headers);

describe('queries at a past revision', () => {
  it('Check answers as of the revision, body field or header, and reports the revision read', async () => {
    expect((await check({})).json).toMatchObject({ allowed: false });
    const r1 = await check({ at_revision: 1 });
    expect(r1.json).toMatchObject({ allowed: true });
    expect(r1.headers.get('latch-revision')).toBe('1');
    const h = await check({}, { 'Latch-At-Revision': '2' });
    expect(h.json).toMatchObject({ allowed: true });
    expect(h.headers.get('latch-revision')).toBe('2');
    expect((await check({ at_revision: '3' })).json).toMatchObject({ allowed: false });
    // Revision 0 is the store as created: no model yet unless one is named.
    expect((await check({ at_revision: 0, authorization_model_id: firstModel })).json).toMatchObject({
      allowed: false,
    });
    const none = await check({ at_revision: 0 });
    expect(none.status).toBe(400);
    expect((none.json as { code: string }).code).toBe('latest_authorization_model_not_found');
  });

  it('at_time reads the revision current at that instant', async () => {
    const r = await check({ at_time: new Date(times[1] ?? 0).toISOString() });
    expect(r.json).toMatchObject({ allowed: true });
    expect(r.headers.get('latch-revision')).toBe('2');
    const before = await check({ at_time: new Date((times[0] ?? 0) - 1).toISOString() });
    expect(before.json).toMatchObject({ allowed: false });
    expect(before.headers.get('latch-revision')).toBe('0');
  });

  it('BatchCheck, ListObjects, ListUsers, Expand and explain take the point too', async () => {
    const at = { at_revision: 2 };
    const batch = await call(server.base, 'POST', `/stores/${store}/batch-check`, {
      checks: [
        { tuple_key: anne, correlation_id: 'a' },
        { tuple_key: bob, correlation_id: 'b' },
      ],
      ...at,
    });
    expect(batch.json).toEqual({ result: { a: { allowed: true }, b: { allowed: true } } });
    const lo = await call(server.base, 'POST', `/stores/${store}/list-objects`, {
      type: 'doc',
      relation: 'viewer',
      user: 'user:anne',
      at_revision: 1,
    });
    expect(lo.json).toEqual({ objects: ['doc:1'] });
    const lu = await call(server.base, 'POST', `/stores/${store}/list-users`, {
      object: { type: 'doc', id: '1' },
      relation: 'viewer',
      user_filters: [{ type: 'user' }],
      ...at,
    });
    const users = (lu.json as { users: { object: { id: string } }[] }).users.map((u) => u.object.id).sort();
    expect(users).toEqual(['anne', 'bob']);
    const ex = await call(server.base, 'POST', `/stores/${store}/expand`, {
      tuple_key: { relation: 'viewer', object: 'doc:1' },
      at_revision: 1,
    });
    expect(JSON.stringify(ex.json)).toContain('user:anne');
    expect(JSON.stringify(ex.json)).not.toContain('user:bob');
    const why = await call(server.base, 'POST', `/stores/${store}/check/explain`, { tuple_key: anne, ...at });
    expect(why.json).toMatchObject({ allowed: true });
    const streamed = await call(server.base, 'POST', `/stores/${store}/streamed-list-objects`, {
      type: 'doc',
      relation: 'viewer',
      user: 'user:bob',
      at_revision: 1,
    });
    expect(streamed.status).toBe(200);
    expect(streamed.text).not.toContain('doc:1');
  });

  it('without a model id, the model that was the latest at that revision answers', async () => {
    const later = await call(server.base, 'POST', `/stores/${store}/authorization-models`, MODEL);
    const laterId = (later.json as { authorization_model_id: string }).authorization_model_id;
    const past = await check({ at_revision: 3 });
    expect(past.headers.get('openfga-authorization-model-id')).toBe(firstModel);
    const now = await check({});
    expect(now.headers.get('openfga-authorization-model-id')).toBe(laterId);
    const named = await check({ at_revision: 1, authorization_model_id: laterId });
    expect(named.headers.get('openfga-authorization-model-id')).toBe(laterId);
  });

  it.each([
    ['a malformed revision', { at_revision: 'x' }, {}, 'validation_error'],
    ['a negative revision', { at_revision: -1 }, {}, 'validation_error'],
    ['a malformed header', {}, { 'Latch-At-Revision': '1.5' }, 'validation_error'],
    ['a header disagreeing with the field', { at_revision: 1 }, { 'Latch-At-Revision': '2' }, 'validation_error'],
    ['a revision and a time', { at_revision: 1, at_time: '2026-01-01T00:00:00Z' }, {}, 'validation_error'],
    ['a malformed time', { at_time: '2026-13-01T00:00:00Z' }, {}, 'validation_error'],
    ['a time without an offset', { at_time: '2026-01-01T00:00:00' }, {}, 'validation_error'],
    ['a revision in the future', { at_revision: 4 }, {}, 'revision_in_future'],
    ['a time in the future', { at_time: '2999-01-01T00:00:00Z' }, {}, 'revision_in_future'],
    ['a time before the store existed', { at_time: '2001-01-01T00:00:00Z' }, {}, 'time_before_store'],
  ])('refuses %s', async (_name, body, headers, code) => {
    const r = await check(body, headers);
    expect(r.status).toBe(400);
    expect((r.json as { code: string }).code).toBe(code);
  });

  it('refuses a revision more changes back than the undo cap (3 here)', async () => {
    const docs = ['doc:2', 'doc:3', 'doc:4', 'doc:5'].map((object) => ({ ...anne, object }));
    await write({ writes: { tuple_keys: docs } }); // revision 4: 4 changes after revision 3
    const r = await check({ at_revision: 3 });
    expect(r.status).toBe(400);
    expect((r.json as { code: string }).code).toBe('revision_too_far_back');
    await write({ deletes: { tuple_keys: docs.slice(0, 3) } }); // revision 5: 3 changes after revision 4
    expect((await check({ at_revision: 4, tuple_key: docs[0] })).json).toMatchObject({ allowed: true });
  });

  it('the msgpack channel takes at_revision in the body and answers the revision read', async () => {
    const client = await LatchChannelClient.connect(`ws://127.0.0.1:${server.port}/stream`);
    try {
      const [past, now, bad] = await client.batch([
        { op: 'check', store_id: store, body: { tuple_key: anne, at_revision: 1 } },
        { op: 'check', store_id: store, body: { tuple_key: anne } },
        { op: 'check', store_id: store, body: { tuple_key: anne, at_revision: 99 } },
      ]);
      expect(past).toMatchObject({ status: 200, body: { allowed: true }, revision: 1 });
      expect(now).toMatchObject({ status: 200, body: { allowed: false } });
      expect(bad).toMatchObject({ status: 400, error: { code: 'revision_in_future' } });
    } finally {
      await client.close();
    }
  });

  it("a revision only another store has reached is this store's future: 400 revision_in_future", async () => {
    const other = ((await call(server.base, 'POST', '/stores', { name: 'other' })).json as { id: string }).id;
    await call(server.base, 'POST', `/stores/${other}/authorization-models`, MODEL);
    let token = '';
    for (let i = 0; i < 12; i++) {
      const w = await call(server.base, 'POST', `/stores/${other}/write`, {
        writes: { tuple_keys: [{ ...anne, object: `doc:o${i}` }] },
      });
      token = w.headers.get('latch-revision') ?? '';
    }
    expect(Number(token)).toBe(12);
    // This store's head: the revision current now.
    const own = await check({ at_time: new Date().toISOString() });
    expect(Number(own.headers.get('latch-revision'))).toBeGreaterThan(0);
    expect(Number(own.headers.get('latch-revision'))).toBeLessThan(12);
    for (const r of [await check({ at_revision: 12 }), await check({}, { 'Latch-At-Revision': token })]) {
      expect(r.status).toBe(400);
      expect((r.json as { code: string }).code).toBe('revision_in_future');
    }
  });

  it('an unknown store is 404 store_id_not_found', async () => {
    const r = await call(server.base, 'POST', '/stores/01ARZ3NDEKTSV4RRFFQ69G5FAV/check', {
      tuple_key: anne,
      at_revision: 1,
    });
    expect(r.status).toBe(404);
    expect((r.json as { code: string }).code).toBe('store_id_not_found');
  });
});
