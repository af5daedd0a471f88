// Calls that fail authentication do not grow the store log one record each: per window they are
// one tally record per (store, error code, source) with the count and a sample, and at most
// MAX_KEYS such records, whatever store ids the caller makes up.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_KEYS } from '../../src/api/auth/failure-tally.js';
import { ALL_SCOPES, bearer, call, startAuthServer, type AuthServer } from './fixtures.js';

const STORE = '01JAAAAAAAAAAAAAAAAAAAAAAA';
const CHECK = { tuple_key: { user: 'user:a', relation: 'viewer', object: 'doc:1' } };
let server: AuthServer;

beforeAll(async () => {
  server = await startAuthServer();
});

afterAll(async () => {
  await server.close();
});

/** Every record of `store`'s log, oldest first. */
async function records(store: string): Promise<Record<string, unknown>[]> {
  await server.auth.logs.drainFailures();
  return (await server.auth.logs.search(store, { pageSize: 100 })).logs;
}

/** A ULID-shaped store id, different for each `i`. */
function storeId(i: number): string {
  const digits = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let s = '';
  for (let v = i; s.length < 23; v = Math.floor(v / 32)) s = digits[v % 32] + s;
  return '01K' + s;
}

describe('requests that fail authentication', () => {
  it('are tallied: one record per store, code and source, with the count and a sample request id', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) {
      const r = await call(server.base, 'POST', `/stores/${STORE}/check`, CHECK);
      expect(r.status).toBe(401);
      ids.push(r.headers.get('x-request-id') ?? '');
    }
    for (let i = 0; i < 20; i++) {
      expect((await call(server.base, 'POST', `/stores/${STORE}/check`, CHECK, bearer('not-a-jwt'))).status).toBe(401);
    }
    const logs = await records(STORE);
    expect(logs).toHaveLength(2);
    const byCode = new Map(logs.map((l) => [(l.response as { error_code: string }).error_code, l]));
    const missing = byCode.get('bearer_token_missing') ?? byCode.get('unauthenticated');
    expect(missing).toMatchObject({
      store_id: STORE,
      client_id: '',
      request: {
        operation: 'Check',
        request_id: ids[0],
        filter: { unauthenticated_calls: '300', source: '127.0.0.1' },
      },
      response: { status: 401 },
    });
    expect(
      [...byCode.values()]
        .map((l) => (l.request as { filter: { unauthenticated_calls: string } }).filter.unauthenticated_calls)
        .sort(),
    ).toEqual(['20', '300']);
    expect(server.auth.logs.failureCounts.total).toBe(320);
  });

  it('made-up store ids itemize at most MAX_KEYS records per window; the rest are counted', async () => {
    const before = server.auth.logs.failureCounts;
    const n = MAX_KEYS + 200;
    for (let i = 0; i < n; i += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, n - i) }, (_, k) => call(server.base, 'GET', `/stores/${storeId(i + k)}`)),
      );
    }
    await server.auth.logs.drainFailures();
    let itemized = 0;
    for (let i = 0; i < n; i++) itemized += (await server.auth.logs.search(storeId(i), { pageSize: 1 })).logs.length;
    expect(itemized).toBe(MAX_KEYS);
    const after = server.auth.logs.failureCounts;
    expect(after.total - before.total).toBe(n);
    expect(after.unitemized - before.unitemized).toBe(200);
  });

  it('an authenticated call is still one record with its client id', async () => {
    const created = await call(
      server.base,
      'POST',
      '/stores',
      { name: 'logged' },
      bearer(await server.mint('*', ALL_SCOPES)),
    );
    const id = (created.json as { id: string }).id;
    const token = await server.mint(id, ALL_SCOPES);
    expect((await call(server.base, 'GET', `/stores/${id}`, undefined, bearer(token))).status).toBe(200);
    expect((await call(server.base, 'GET', `/stores/${id}`)).status).toBe(401);
    const logs = await records(id);
    expect(
      logs.map((l) => [
        l.client_id,
        (l.request as { operation: string }).operation,
        (l.response as { status: number }).status,
      ]),
    ).toEqual([
      [server.clientId, 'GetStore', 200],
      ['', 'GetStore', 401],
    ]);
  });
});
