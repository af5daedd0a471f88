// Guarded writes through every front door, against a real server on 127.0.0.1: the JSON Write's
// `preconditions` (409 write_precondition_failed with `precondition_index`, 400 for each malformed
// shape), the msgpack channel's write op and `latch tuple write --precondition`.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChannelError, LatchChannelClient } from '../../src/client/index.js';
import { latch } from '../cli/helpers.js';
import { call, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;
let store = '';

const anne = { user: 'user:anne', relation: 'viewer', object: 'doc:1' };
const grant = (user: string, preconditions: unknown): Record<string, unknown> => ({
  writes: { tuple_keys: [{ user, relation: 'viewer', object: 'doc:1' }] },
  preconditions,
});
const viewers = async (): Promise<string[]> => {
  const r = await call(server.base, 'POST', `/stores/${store}/read`, {
    tuple_key: { object: 'doc:1', relation: 'viewer' },
  });
  return (r.json as { tuples: { key: { user: string } }[] }).tuples.map((t) => t.key.user).sort();
};

beforeAll(async () => {
  server = await start();
  store = await storeWithModel(server.base, 'guarded');
  const owner = { writes: { tuple_keys: [{ user: 'user:anne', relation: 'owner', object: 'doc:1' }] } };
  expect((await call(server.base, 'POST', `/stores/${store}/write`, owner)).status).toBe(200);
});
afterAll(() => server.close());

describe('guarded Write over HTTP', () => {
  it('applies when every precondition holds; names the first that fails with 409', async () => {
    const ok = await call(
      server.base,
      'POST',
      `/stores/${store}/write`,
      grant('user:bob', [{ check: { tuple_key: anne }, expect: true }]),
    );
    expect(ok.status).toBe(200);
    const failed = await call(
      server.base,
      'POST',
      `/stores/${store}/write`,
      grant('user:carl', [
        { tuple_exists: { user: 'user:anne', relation: 'owner', object: 'doc:1' } },
        { tuple_absent: { user: 'user:bob', relation: 'viewer', object: 'doc:1' } },
      ]),
    );
    expect(failed.status).toBe(409);
    expect(failed.json).toMatchObject({ code: 'write_precondition_failed', precondition_index: 1 });
    const changes = await call(server.base, 'GET', `/stores/${store}/changes`);
    expect((changes.json as { changes: unknown[] }).changes).toHaveLength(2);
    expect(await viewers()).toEqual(['user:bob']);
  });

  it('a check precondition carries contextual tuples and context', async () => {
    const body = grant('user:dora', [
      {
        check: {
          tuple_key: { user: 'user:dora', relation: 'viewer', object: 'doc:2' },
          contextual_tuples: { tuple_keys: [{ user: 'user:dora', relation: 'owner', object: 'doc:2' }] },
        },
        expect: true,
      },
      {
        check: { tuple_key: { user: 'user:dora', relation: 'viewer', object: 'doc:2' }, context: { ip: '10.0.0.1' } },
        expect: false,
      },
    ]);
    expect((await call(server.base, 'POST', `/stores/${store}/write`, body)).status).toBe(200);
    expect(await viewers()).toEqual(['user:bob', 'user:dora']);
  });

  it.each([
    ['not a list', { check: { tuple_key: anne }, expect: true }],
    ['two shapes in one', [{ check: { tuple_key: anne }, tuple_exists: anne, expect: true }]],
    ['an unknown shape', [{ tuple_maybe: anne }]],
    ['a check without expect', [{ check: { tuple_key: anne } }]],
    ['expect on a tuple shape', [{ tuple_exists: anne, expect: true }]],
    ['a tuple without a user', [{ tuple_absent: { relation: 'viewer', object: 'doc:1' } }]],
    ['a check of an unknown relation', [{ check: { tuple_key: { ...anne, relation: 'nope' } }, expect: true }]],
    ['more than 10', Array.from({ length: 11 }, () => ({ tuple_exists: anne }))],
  ])('%s → 400, nothing written', async (_what, preconditions) => {
    const r = await call(server.base, 'POST', `/stores/${store}/write`, grant('user:eve', preconditions));
    expect(r.status).toBe(400);
    expect(await viewers()).not.toContain('user:eve');
  });
});

describe('guarded Write over the msgpack channel', () => {
  it('answers 409 write_precondition_failed, and writes when the guard holds', async () => {
    const client = await LatchChannelClient.connect(`ws://127.0.0.1:${server.port}/stream`);
    try {
      const guard = [{ check: { tuple_key: { ...anne, user: 'user:fred' } }, expect: true }];
      const err = await client.write(store, grant('user:fred', guard)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ChannelError);
      expect((err as ChannelError).code).toBe('write_precondition_failed');
      expect((err as ChannelError).status).toBe(409);
      const ok = await client.write(store, grant('user:fred', [{ tuple_absent: { ...anne, user: 'user:fred' } }]));
      expect(ok.revision).toBeGreaterThan(0);
      expect(await viewers()).toContain('user:fred');
    } finally {
      await client.close();
    }
  });
});

describe('latch tuple write --precondition', () => {
  it('writes when it holds, fails with the catalog code when not', async () => {
    const env = { LATCH_API_URL: server.base, LATCH_STORE_ID: store };
    const refused = await latch(
      ['tuple', 'write', 'user:gil', 'viewer', 'doc:1', '--precondition', 'check user:gil viewer doc:1'],
      env,
    );
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('write_precondition_failed');
    expect(await viewers()).not.toContain('user:gil');
    const written = await latch(
      [
        'tuple',
        'write',
        'user:gil',
        'viewer',
        'doc:1',
        '--precondition',
        'not-check user:gil viewer doc:1',
        '--precondition',
        'exists user:anne owner doc:1',
      ],
      env,
    );
    expect(written.err).toBe('');
    expect(written.code).toBe(0);
    expect(await viewers()).toContain('user:gil');
    const bad = await latch(
      ['tuple', 'write', 'user:hal', 'viewer', 'doc:1', '--precondition', 'maybe user:hal viewer doc:1'],
      env,
    );
    expect(bad.code).toBe(2);
  });
});
