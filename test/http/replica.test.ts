// The revision extensions on the wire, with two real servers over one datastore (node A and node
// B; B hears no storage events, so only the revision it is asked for moves it): `Latch-Revision`
// on every Write answer, `Latch-Min-Revision` on queries and Read, `revision` / `min_revision` on
// the msgpack channel and in latch/client, HIGHER_CONSISTENCY across nodes, and 400 for a
// malformed value.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelError, LatchChannelClient } from '../../src/client/index.js';
import type { LatchService } from '../../src/engine/service.js';
import { createHttpServer, type LatchHttpServer } from '../../src/http/server.js';
import { openStorage } from '../../src/storage/index.js';
import type { Storage } from '../../src/storage/types.js';
import { node } from '../support/replicas.js';
import { call, MODEL } from './helpers.js';

let shared: Storage;
const nodes: { latch: LatchService; http: LatchHttpServer; base: string; port: number }[] = [];
let store = '';
let a = '';
let b = '';

beforeAll(async () => {
  shared = await openStorage({});
  for (const view of [{}, { events: false }]) {
    const latch = node(shared, view, { checkDeadlineMs: 200 });
    const http = createHttpServer(latch);
    const port = await http.listen('127.0.0.1', 0);
    nodes.push({ latch, http, base: `http://127.0.0.1:${port}`, port });
  }
  a = nodes[0]?.base ?? '';
  b = nodes[1]?.base ?? '';
  store = ((await call(a, 'POST', '/stores', { name: 'replica' })).json as { id: string }).id;
  expect((await call(a, 'POST', `/stores/${store}/authorization-models`, MODEL)).status).toBe(201);
});

afterAll(async () => {
  for (const n of nodes) {
    await n.http.close(0);
    await n.latch.close();
  }
  await shared.close();
});

const key = (user: string, object: string): { user: string; relation: string; object: string } => ({
  user,
  relation: 'viewer',
  object,
});

async function writeOn(base: string, user: string, object: string): Promise<number> {
  const r = await call(base, 'POST', `/stores/${store}/write`, { writes: { tuple_keys: [key(user, object)] } });
  expect(r.status).toBe(200);
  expect(r.json).toEqual({});
  const header = r.headers.get('latch-revision');
  expect(header).toMatch(/^\d+$/);
  return Number(header);
}

describe('Latch-Revision and Latch-Min-Revision over HTTP', () => {
  it('a write through A answers its revision; B answers from at least that revision when asked', async () => {
    // B loads the store's index before the write, then hears nothing of it.
    expect((await call(b, 'POST', `/stores/${store}/check`, { tuple_key: key('user:anne', 'doc:1') })).json).toEqual({
      allowed: false,
      resolution: '',
    });
    const revision = await writeOn(a, 'user:anne', 'doc:1');
    expect(revision).toBe(1);
    const plain = await call(b, 'POST', `/stores/${store}/check`, { tuple_key: key('user:anne', 'doc:1') });
    expect(plain.json).toEqual({ allowed: false, resolution: '' }); // MINIMIZE_LATENCY: B's own index, not yet moved
    expect(plain.headers.get('latch-revision')).toBeNull();
    const fresh = await call(
      b,
      'POST',
      `/stores/${store}/check`,
      { tuple_key: key('user:anne', 'doc:1') },
      { 'Latch-Min-Revision': String(revision) },
    );
    expect(fresh.status).toBe(200);
    expect(fresh.json).toEqual({ allowed: true, resolution: '' });
    const next = await writeOn(a, 'user:bob', 'doc:2');
    expect(next).toBe(2);
    const strong = await call(b, 'POST', `/stores/${store}/check`, {
      tuple_key: key('user:bob', 'doc:2'),
      consistency: 'HIGHER_CONSISTENCY',
    });
    expect(strong.json).toEqual({ allowed: true, resolution: '' });
  });

  it('every query and Read take the header', async () => {
    const revision = await writeOn(a, 'user:carl', 'doc:3');
    const h = { 'Latch-Min-Revision': String(revision) };
    const lo = await call(
      b,
      'POST',
      `/stores/${store}/list-objects`,
      { type: 'doc', relation: 'viewer', user: 'user:carl' },
      h,
    );
    expect(lo.json).toEqual({ objects: ['doc:3'] });
    const lu = await call(
      b,
      'POST',
      `/stores/${store}/list-users`,
      { object: { type: 'doc', id: 'doc:3'.slice(4) }, relation: 'viewer', user_filters: [{ type: 'user' }] },
      h,
    );
    expect(lu.json).toEqual({ users: [{ object: { type: 'user', id: 'carl' } }] });
    const ex = await call(
      b,
      'POST',
      `/stores/${store}/expand`,
      { tuple_key: { relation: 'viewer', object: 'doc:3' } },
      h,
    );
    expect(ex.status).toBe(200);
    expect(JSON.stringify(ex.json)).toContain('user:carl');
    const bc = await call(
      b,
      'POST',
      `/stores/${store}/batch-check`,
      { checks: [{ tuple_key: key('user:carl', 'doc:3'), correlation_id: 'c' }] },
      h,
    );
    expect(bc.json).toEqual({ result: { c: { allowed: true } } });
    const rd = await call(b, 'POST', `/stores/${store}/read`, { tuple_key: { object: 'doc:3' } }, h);
    expect((rd.json as { tuples: unknown[] }).tuples).toHaveLength(1);
    const st = await fetch(`${b}/stores/${store}/streamed-list-objects`, {
      method: 'POST',
      headers: h,
      body: JSON.stringify({ type: 'doc', relation: 'viewer', user: 'user:carl' }),
    });
    expect(await st.text()).toBe('{"result":{"object":"doc:3"}}\n');
  });

  it('a revision not committed by the deadline answers 422 throttled_timeout_error', async () => {
    const r = await call(
      b,
      'POST',
      `/stores/${store}/check`,
      { tuple_key: key('user:anne', 'doc:1') },
      { 'Latch-Min-Revision': '1000000' },
    );
    expect(r.status).toBe(422);
    expect((r.json as { code: string }).code).toBe('throttled_timeout_error');
  });

  it.each(['abc', '-1', '1.5', '1e3', '12345678901234567', '7 8', '+7', '0x10'])(
    'a malformed Latch-Min-Revision %j is 400 validation_error',
    async (value) => {
      for (const [path, body] of [
        ['check', { tuple_key: key('user:anne', 'doc:1') }],
        ['read', {}],
        ['list-objects', { type: 'doc', relation: 'viewer', user: 'user:anne' }],
      ] as const) {
        const r = await call(b, 'POST', `/stores/${store}/${path}`, body, { 'Latch-Min-Revision': value });
        expect(r.status).toBe(400);
        expect(r.json).toEqual({
          code: 'validation_error',
          message: 'invalid Latch-Min-Revision: value must be a revision, an integer in [0, 9007199254740991]',
        });
      }
    },
  );

  it('an empty header is no header; a write of ignored tuples answers the unchanged revision', async () => {
    expect(
      (
        await call(
          b,
          'POST',
          `/stores/${store}/check`,
          { tuple_key: key('user:anne', 'doc:1') },
          { 'Latch-Min-Revision': '' },
        )
      ).status,
    ).toBe(200);
    const before = await writeOn(a, 'user:dora', 'doc:4');
    const again = await call(a, 'POST', `/stores/${store}/write`, {
      writes: { tuple_keys: [key('user:dora', 'doc:4')], on_duplicate: 'ignore' },
    });
    expect(again.headers.get('latch-revision')).toBe(String(before));
  });
});

describe('revision on the msgpack channel and in latch/client', () => {
  it('write answers carry revision; min_revision makes B answer from that revision', async () => {
    const ca = await LatchChannelClient.connect(`ws://127.0.0.1:${nodes[0]?.port}/stream`);
    const cb = await LatchChannelClient.connect(`ws://127.0.0.1:${nodes[1]?.port}/stream`);
    try {
      const { revision } = await ca.write(store, { writes: { tuple_keys: [key('user:erin', 'doc:5')] } });
      expect(revision).toBeGreaterThan(0);
      const [w] = await ca.batch([
        { op: 'write', store_id: store, body: { writes: { tuple_keys: [key('user:erin', 'doc:6')] } } },
      ]);
      expect(w?.revision).toBe(revision + 1);
      expect(await cb.check(store, key('user:erin', 'doc:6'), { min_revision: revision + 1 })).toBe(true);
      const many = await cb.checkMany(store, [key('user:erin', 'doc:5'), key('user:erin', 'doc:6')], {
        min_revision: revision + 1,
      });
      expect([...many.results]).toEqual([1, 1]);
      expect(await cb.check(store, key('user:erin', 'doc:6'), { min_revision: revision + 1, context: {} })).toBe(true);
      const [bad] = await cb.batch([
        { op: 'check', store_id: store, body: { tuple_key: key('user:erin', 'doc:6') }, min_revision: -3 },
      ]);
      expect(bad?.status).toBe(400);
      expect(bad?.error?.code).toBe('validation_error');
      await expect(cb.check(store, key('user:erin', 'doc:6'), { min_revision: 1.5 })).rejects.toBeInstanceOf(
        ChannelError,
      );
    } finally {
      await ca.close();
      await cb.close();
    }
  });
});
