// Overload and complexity (docs/reference/decisions.md D8, issue item 6) against a real server: a Check over its
// deadline answers 422 throttled_timeout_error on every path (Check, Check with contextual
// tuples, BatchCheck items, the msgpack channel); ListObjects and ListUsers over theirs answer 200
// with what they found; conflicting concurrent writes answer 409 with code "10" (D4).
//
// The slow data: every group is a member of every other group (a clique), so a Check for a user
// in none of them explores a factorial number of paths — far more than the 100 ms deadline.

import { transformer } from '@openfga/syntax-transformer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelError, LatchChannelClient } from '../../src/client/index.js';
import { CHECK_ALLOWED, CHECK_ERROR } from '../../src/engine/contract.js';
import { ALL_SCOPES, bearer, call, startAuthServer, type AuthServer } from './fixtures.js';

const DEADLINE_MESSAGE = 'timeout due to throttling on complex request';
const GROUPS = 12;

const GROUP_MODEL = transformer.transformDSLToJSONObject(`model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type doc
  relations
    define viewer: [group#member]`);

const CONDITION_MODEL = transformer.transformDSLToJSONObject(`model
  schema 1.1
type user
type doc
  relations
    define viewer: [user, user with recent]
condition recent(age: int) {
  age < 10
}`);

function clique(): { user: string; relation: string; object: string }[] {
  const t = [{ user: 'user:u', relation: 'member', object: 'group:0' }];
  for (let i = 0; i < GROUPS; i++)
    for (let j = 0; j < GROUPS; j++)
      if (i !== j) t.push({ user: `group:${j}#member`, relation: 'member', object: `group:${i}` });
  return t;
}

const key = (user: string, object = 'group:0') => ({ user, relation: 'member', object });
const SLOW = key('user:nobody');
const FAST = key('user:u');

describe('D8: deadlines on a real server (100 ms)', () => {
  let s: AuthServer;
  let store = '';
  let auth: Record<string, string> = {};
  beforeAll(async () => {
    s = await startAuthServer(
      {},
      { engine: { checkDeadlineMs: 100, listObjectsDeadlineMs: 100, listUsersDeadlineMs: 100 } },
    );
    auth = bearer(await s.mint('*', ALL_SCOPES));
    store = (await call(s.base, 'POST', '/stores', { name: 'overload' }, auth)).json!.id as string;
    expect((await call(s.base, 'POST', `/stores/${store}/authorization-models`, GROUP_MODEL, auth)).status).toBe(201);
    const tuples = clique();
    for (let i = 0; i < tuples.length; i += 100) {
      expect(
        (
          await call(
            s.base,
            'POST',
            `/stores/${store}/write`,
            { writes: { tuple_keys: tuples.slice(i, i + 100) } },
            auth,
          )
        ).status,
      ).toBe(200);
    }
  });
  afterAll(() => s.close());

  it('Check: 422 throttled_timeout_error (the deadline, not the step budget); a cheap Check still answers', async () => {
    const slow = await call(s.base, 'POST', `/stores/${store}/check`, { tuple_key: SLOW }, auth);
    expect({ status: slow.status, body: slow.json }).toEqual({
      status: 422,
      body: { code: 'throttled_timeout_error', message: DEADLINE_MESSAGE },
    });
    const fast = await call(s.base, 'POST', `/stores/${store}/check`, { tuple_key: FAST }, auth);
    expect({ status: fast.status, allowed: fast.json?.allowed }).toEqual({ status: 200, allowed: true });
  });

  it('Check with contextual tuples: 422 throttled_timeout_error', async () => {
    const body = {
      tuple_key: SLOW,
      contextual_tuples: { tuple_keys: [{ user: 'user:ctx', relation: 'member', object: 'group:3' }] },
    };
    const r = await call(s.base, 'POST', `/stores/${store}/check`, body, auth);
    expect({ status: r.status, body: r.json }).toEqual({
      status: 422,
      body: { code: 'throttled_timeout_error', message: DEADLINE_MESSAGE },
    });
    const ctx = await call(
      s.base,
      'POST',
      `/stores/${store}/check`,
      { ...body, tuple_key: key('user:ctx', 'group:7') },
      auth,
    );
    expect({ status: ctx.status, allowed: ctx.json?.allowed }).toEqual({ status: 200, allowed: true });
  });

  it('BatchCheck: items answered before the deadline keep their answers; the item it cuts short and every later one are the throttled timeout', async () => {
    const checks = [
      { correlation_id: 'fast', tuple_key: FAST },
      { correlation_id: 'slow', tuple_key: SLOW },
      { correlation_id: 'after', tuple_key: key('user:u', 'group:5') },
    ];
    const r = await call(s.base, 'POST', `/stores/${store}/batch-check`, { checks }, auth);
    expect(r.status).toBe(200);
    const timeout = { error: { input_error: 'validation_error', message: DEADLINE_MESSAGE } };
    expect(r.json?.result).toEqual({ fast: { allowed: true }, slow: timeout, after: timeout });
  });

  it('msgpack channel: the slow check answers 422 throttled_timeout_error, the cheap one of the same frame 200', async () => {
    const c = await LatchChannelClient.connect(`ws://127.0.0.1:${s.port}/stream`, {
      token: await s.mint(store, ['check:tuples']),
    });
    try {
      const [fast, slow] = await c.batch([
        { op: 'check', store_id: store, body: { tuple_key: FAST } },
        { op: 'check', store_id: store, body: { tuple_key: SLOW } },
      ]);
      expect(fast).toMatchObject({ status: 200, body: { allowed: true } });
      expect(slow).toMatchObject({
        status: 422,
        error: { code: 'throttled_timeout_error', message: DEADLINE_MESSAGE },
      });
      // The client's plain check() and checkMany() travel as interned ids (check-ids): same deadline.
      const thrown = await c.check(store, SLOW).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(thrown).toBeInstanceOf(ChannelError);
      expect({
        status: (thrown as ChannelError).status,
        code: (thrown as ChannelError).code,
        message: (thrown as ChannelError).message,
      }).toEqual({ status: 422, code: 'throttled_timeout_error', message: DEADLINE_MESSAGE });
      const many = await c.checkMany(store, [FAST, SLOW, key('user:u', 'group:5')]);
      expect([...many.results]).toEqual([CHECK_ALLOWED, CHECK_ERROR, CHECK_ERROR]);
      expect([...many.errors.keys()]).toEqual([1, 2]);
      for (const e of many.errors.values())
        expect({ status: e.status, code: e.code, message: e.message }).toEqual({
          status: 422,
          code: 'throttled_timeout_error',
          message: DEADLINE_MESSAGE,
        });
    } finally {
      await c.close();
    }
  });

  it('ListObjects and ListUsers over their deadline: 200 with what they found (a subset of the full answer)', async () => {
    const all = Array.from({ length: GROUPS }, (_, i) => `group:${i}`);
    const lo = await call(
      s.base,
      'POST',
      `/stores/${store}/list-objects`,
      { type: 'group', relation: 'member', user: 'user:nobody' },
      auth,
    );
    expect(lo.status).toBe(200);
    expect(lo.json?.objects).toEqual([]);
    const found = await call(
      s.base,
      'POST',
      `/stores/${store}/list-objects`,
      { type: 'group', relation: 'member', user: 'user:u' },
      auth,
    );
    expect(found.status).toBe(200);
    for (const o of found.json?.objects as string[]) expect(all).toContain(o);
    const lu = await call(
      s.base,
      'POST',
      `/stores/${store}/list-users`,
      { object: { type: 'group', id: '0' }, relation: 'member', user_filters: [{ type: 'user' }] },
      auth,
    );
    expect(lu.status).toBe(200);
    for (const u of lu.json?.users as { object: { type: string; id: string } }[])
      expect(u.object).toEqual({ type: 'user', id: 'u' });
  });
});

describe('409: conflicting concurrent writes', () => {
  // Writes to one store are serialized, so two writers never both see a tuple missing and both
  // insert it (OpenFGA's database race). What remains a conflict in latch: concurrent writers of
  // the same tuple under on_duplicate "ignore" with different conditions — the second to commit
  // finds the first's tuple with another condition, which it may neither ignore nor overwrite.
  let s: AuthServer;
  let store = '';
  let auth: Record<string, string> = {};
  beforeAll(async () => {
    s = await startAuthServer();
    auth = bearer(await s.mint('*', ALL_SCOPES));
    store = (await call(s.base, 'POST', '/stores', { name: 'conflicts' }, auth)).json!.id as string;
    expect((await call(s.base, 'POST', `/stores/${store}/authorization-models`, CONDITION_MODEL, auth)).status).toBe(
      201,
    );
  });
  afterAll(() => s.close());

  it('one writer wins (200), the other gets 409 with code "10"; the stored tuple is the winner\'s', async () => {
    for (let round = 0; round < 3; round++) {
      const object = `doc:${round}`;
      const plain = { user: 'user:anne', relation: 'viewer', object };
      const conditioned = { ...plain, condition: { name: 'recent', context: { age: round } } };
      const write = (t: object) =>
        call(s.base, 'POST', `/stores/${store}/write`, { writes: { tuple_keys: [t], on_duplicate: 'ignore' } }, auth);
      const [a, b] = await Promise.all([write(plain), write(conditioned)]);
      expect([a.status, b.status].sort()).toEqual([200, 409]);
      const loser = a.status === 409 ? a : b;
      expect(loser.json?.code).toBe('10');
      expect(loser.json?.message).toBe(
        `transactional write failed due to conflict: attempted to write a tuple which already exists with a different condition: user: 'user:anne', relation: 'viewer', object: '${object}'`,
      );
      const read = await call(s.base, 'POST', `/stores/${store}/read`, { tuple_key: { object } }, auth);
      const stored = (read.json?.tuples as { key: { condition?: unknown } }[]).map((t) => t.key.condition ?? null);
      expect(stored).toEqual([a.status === 200 ? null : { name: 'recent', context: { age: round } }]);
      // The same write again is an ignored duplicate, not a conflict.
      expect((await write(a.status === 200 ? plain : conditioned)).status).toBe(200);
    }
  });
});
