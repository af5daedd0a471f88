// Continuation tokens through the wire: Read pages cover every tuple once, ListStores pages keep
// their name filter, and ReadChanges follows docs/reference/http-api.md §4.13 (token after the last change even
// on a short page, the same token echoed when caught up, "" only when nothing ever matched).

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
type Changes = { changes: { tuple_key: { user: string } }[]; continuation_token: string };
let server: Server;
let store = '';

beforeAll(async () => {
  server = await start();
  store = await storeWithModel(server.base, 'pages');
});

afterAll(async () => {
  await server.close();
});

const changes = async (query: string): Promise<Changes> =>
  (await call(server.base, 'GET', `/stores/${store}/changes${query}`)).json as Changes;

describe('continuation tokens', () => {
  test('ReadChanges: empty store → no changes, empty token', async () => {
    expect(await changes('')).toEqual({ changes: [], continuation_token: '' });
  });

  test('ReadChanges: short pages, sticky token, polling picks up new writes', async () => {
    const writes = [1, 2, 3].map((i) => ({ user: `user:${i}`, relation: 'owner', object: 'doc:1' }));
    await call(server.base, 'POST', `/stores/${store}/write`, { writes: { tuple_keys: writes } });
    const p1 = await changes('?page_size=2');
    const p2 = await changes(`?page_size=2&continuation_token=${p1.continuation_token}`);
    const p3 = await changes(`?page_size=2&continuation_token=${p2.continuation_token}`);
    expect([p1.changes.length, p2.changes.length, p3.changes.length]).toEqual([2, 1, 0]);
    expect(p2.continuation_token).not.toBe('');
    expect(p3.continuation_token).toBe(p2.continuation_token);
    await call(server.base, 'POST', `/stores/${store}/write`, {
      writes: { tuple_keys: [{ user: 'user:4', relation: 'owner', object: 'doc:1' }] },
    });
    const p4 = await changes(`?page_size=2&continuation_token=${p3.continuation_token}`);
    expect(p4.changes.map((c) => c.tuple_key.user)).toEqual(['user:4']);
    expect(await changes('?type=group')).toEqual({ changes: [], continuation_token: '' });
  });

  test('Read: pages of 2 cover every tuple exactly once', async () => {
    const seen: string[] = [];
    let token = '';
    do {
      const r = (await call(server.base, 'POST', `/stores/${store}/read`, { page_size: 2, continuation_token: token }))
        .json as {
        tuples: { key: { user: string } }[];
        continuation_token: string;
      };
      seen.push(...r.tuples.map((t) => t.key.user));
      token = r.continuation_token;
    } while (token);
    expect(seen.sort()).toEqual(['user:1', 'user:2', 'user:3', 'user:4']);
  });

  test('ListStores: a token keeps its name filter', async () => {
    for (const name of ['same-name', 'same-name', 'same-name']) await call(server.base, 'POST', '/stores', { name });
    const p1 = (await call(server.base, 'GET', '/stores?name=same-name&page_size=2')).json as {
      stores: unknown[];
      continuation_token: string;
    };
    expect(p1.stores).toHaveLength(2);
    const p2 = (
      await call(server.base, 'GET', `/stores?name=same-name&page_size=2&continuation_token=${p1.continuation_token}`)
    ).json as { stores: unknown[] };
    expect(p2.stores).toHaveLength(1);
    const other = await call(server.base, 'GET', `/stores?name=other-name&continuation_token=${p1.continuation_token}`);
    expect(other.status).toBe(400);
    expect((other.json as { code: string }).code).toBe('invalid_continuation_token');
  });
});
