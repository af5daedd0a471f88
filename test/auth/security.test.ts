// The security suite against a real server on 127.0.0.1 (client-credentials mode): every attack
// of list B gets exactly its status and code, authentication precedes body parsing (docs/reference/decisions.md D1), every
// endpoint with and without its scope, and a token for store A never reads or writes store B.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTACKS, type AttackContext } from './attacks.js';
import { ENDPOINT_CASES, STREAMING_OPS, type EndpointCase } from './endpoints.js';
import { ALL_SCOPES, bearer, call, callLive, MODEL, startAuthServer, type AuthServer } from './fixtures.js';
import { nowS, sign, startIssuer, type TestIssuer } from './helpers.js';
import { startServer, type RunningServer } from '../../src/main.js';

let s: AuthServer;
let admin: Record<string, string>;
const ids = { A: '', B: '', C: '01JCCCCCCCCCCCCCCCCCCCCCCC', modelA: '', modelB: '' };
let ctx: AttackContext;

async function setupStore(name: string): Promise<{ id: string; model: string }> {
  const store = await call(s.base, 'POST', '/stores', { name }, admin);
  expect(store.status).toBe(201);
  const id = store.json!.id as string;
  const model = await call(s.base, 'POST', `/stores/${id}/authorization-models`, MODEL, admin);
  expect(model.status).toBe(201);
  const w = await call(
    s.base,
    'POST',
    `/stores/${id}/write`,
    { writes: { tuple_keys: [{ user: 'user:anne', relation: 'viewer', object: 'doc:1' }] } },
    admin,
  );
  expect(w.status).toBe(200);
  return { id, model: model.json!.authorization_model_id as string };
}

beforeAll(async () => {
  s = await startAuthServer();
  admin = bearer(await s.mint('*', ALL_SCOPES));
  const a = await setupStore('store-a');
  const b = await setupStore('store-b');
  Object.assign(ids, { A: a.id, B: b.id, modelA: a.model, modelB: b.model });
  const clients = s.auth.clients!;
  const { client } = await clients.create({ storeId: ids.A, scopes: ['check:tuples', 'read:tuples', 'write:tuples'] });
  const { client: revoked } = await clients.create({ storeId: ids.A, scopes: ['check:tuples'] });
  await clients.revoke(revoked.id);
  ctx = {
    issuer: s.base,
    audience: s.audience,
    clientId: client.id,
    revokedClientId: revoked.id,
    storeA: ids.A,
    signReal: (claims) => s.auth.keys!.sign(claims),
    publicJwk: s.auth.keys!.jwks().keys[0]!,
  };
});
afterAll(() => s.close());

describe('attacks (list B) over HTTP, with a malformed body: authentication comes first (D1)', () => {
  for (const row of ATTACKS) {
    it(`${row.name} → ${row.status} ${row.code}`, async () => {
      const header = await row.header(ctx);
      const store = ids[row.store ?? 'A'];
      const r = await call(
        s.base,
        'POST',
        `/stores/${store}/check`,
        '{not json',
        header === undefined ? {} : { authorization: header },
      );
      expect({ status: r.status, code: r.json?.code }).toEqual({ status: row.status, code: row.code });
    });
  }

  it('a valid token of the same client gets through to body validation (400)', async () => {
    const token = await ctx.signReal({
      iss: s.base,
      sub: ctx.clientId,
      aud: s.audience,
      exp: nowS() + 60,
      client_id: ctx.clientId,
      store_id: ids.A,
      scope: 'check:tuples',
    });
    const r = await call(s.base, 'POST', `/stores/${ids.A}/check`, '{not json', bearer(token));
    expect({ status: r.status, code: r.json?.code }).toEqual({ status: 400, code: 'validation_error' });
  });
});

function resolve(c: EndpointCase, store: string, deletable: string): string {
  return c.path
    .replace('{S}', store)
    .replace('{D}', deletable)
    .replace('{M}', store === ids.A ? ids.modelA : ids.modelB);
}

describe('scopes: each endpoint with and without its scope', () => {
  for (const c of ENDPOINT_CASES) {
    it(`${c.op} with ${c.scope} → ${c.ok}; without → 403 insufficient_permissions`, async () => {
      const d =
        c.op === 'DeleteStore'
          ? ((await call(s.base, 'POST', '/stores', { name: 'to-delete' }, admin)).json!.id as string)
          : '';
      const bound = c.account ? '*' : c.op === 'DeleteStore' ? d : ids.A;
      const path = resolve(c, ids.A, d);
      const send = c.live ? callLive : call;
      const without = await send(
        s.base,
        c.method,
        path,
        c.body,
        bearer(
          await s.mint(
            bound,
            ALL_SCOPES.filter((x) => x !== c.scope),
          ),
        ),
      );
      expect(without.status).toBe(403);
      if (STREAMING_OPS.has(c.op)) expect(without.text).toContain(`needs the scope '${c.scope}'`);
      else expect(without.json?.code).toBe('insufficient_permissions');
      const withScope = await send(s.base, c.method, path, c.body, bearer(await s.mint(bound, [c.scope])));
      expect(withScope.status, withScope.text).toBe(c.ok);
    });
  }

  it('store-less operations refuse a store-bound token', async () => {
    for (const c of ENDPOINT_CASES.filter((e) => e.account)) {
      const r = await call(s.base, c.method, c.path, c.body, bearer(await s.mint(ids.A, ALL_SCOPES)));
      expect({ op: c.op, status: r.status, code: r.json?.code }).toEqual({
        op: c.op,
        status: 403,
        code: 'insufficient_permissions',
      });
    }
  });
});

describe('store isolation: a token for store A never reads or writes store B', () => {
  it('every store-scoped endpoint on B (and on a store that does not exist) → 403 store_mismatch_in_bearer_token', async () => {
    const tokenA = bearer(await s.mint(ids.A, ALL_SCOPES));
    for (const target of [ids.B, ids.C]) {
      for (const c of ENDPOINT_CASES.filter((e) => !e.account)) {
        const r = await (c.live ? callLive : call)(s.base, c.method, resolve(c, target, target), c.body, tokenA);
        expect({
          op: c.op,
          status: r.status,
          code: STREAMING_OPS.has(c.op) ? 'store_mismatch_in_bearer_token' : r.json?.code,
        }).toEqual({ op: c.op, status: 403, code: 'store_mismatch_in_bearer_token' });
      }
    }
    // B is exactly as set up: one tuple, one model, still there.
    const read = await call(s.base, 'POST', `/stores/${ids.B}/read`, {}, admin);
    expect((read.json!.tuples as unknown[]).length).toBe(1);
    const models = await call(s.base, 'GET', `/stores/${ids.B}/authorization-models`, undefined, admin);
    expect((models.json!.authorization_models as unknown[]).length).toBe(1);
    expect((await call(s.base, 'GET', `/stores/${ids.B}`, undefined, admin)).status).toBe(200);
  });
});

describe('preshared mode over HTTP', () => {
  let server: RunningServer;
  let url: string;
  const key = 'k-0123456789abcdef-preshared';
  beforeAll(async () => {
    server = await startServer({
      host: '127.0.0.1',
      port: 0,
      datastore: 'memory',
      auth: { mode: 'preshared', presharedKeys: [key] },
    });
    url = `http://127.0.0.1:${server.port}`;
  });
  afterAll(() => server.close());

  it('right key → 200; wrong key → 401 unauthenticated; none → 401 bearer_token_missing, even with an oversized body', async () => {
    expect((await call(url, 'GET', '/stores', undefined, bearer(key))).status).toBe(200);
    const wrong = await call(url, 'GET', '/stores', undefined, bearer(`${key}x`));
    expect({ status: wrong.status, code: wrong.json?.code }).toEqual({ status: 401, code: 'unauthenticated' });
    const big = await call(url, 'POST', '/stores', JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }));
    expect({ status: big.status, code: big.json?.code }).toEqual({ status: 401, code: 'bearer_token_missing' });
  });
});

describe('oidc mode against a real external issuer', () => {
  let issuer: TestIssuer;
  let server: RunningServer;
  let base: string;
  const claims = (extra = {}) => ({
    iss: issuer.url,
    sub: 'svc',
    aud: `${base}/`,
    exp: nowS() + 300,
    store_id: '*',
    scope: 'read:stores create:stores',
    ...extra,
  });

  beforeAll(async () => {
    issuer = await startIssuer();
    issuer.up = false;
    server = await startServer({
      host: '127.0.0.1',
      port: 0,
      datastore: 'memory',
      auth: { mode: 'oidc', issuer: issuer.url, audience: 'https://api.test.example' },
    });
    base = 'https://api.test.example';
  });
  afterAll(async () => {
    await server.close();
    await issuer.close();
  });

  it('JWKS endpoint down → 500 auth_failed_error_fetching_well_known_jwks, the request never runs', async () => {
    const url = `http://127.0.0.1:${server.port}`;
    const token = await sign(issuer.privateKey, 'RS256', issuer.kid, claims());
    const r = await call(url, 'POST', '/stores', { name: 'must-not-exist' }, bearer(token));
    expect({ status: r.status, code: r.json?.code }).toEqual({
      status: 500,
      code: 'auth_failed_error_fetching_well_known_jwks',
    });
    issuer.up = true;
    const list = await call(
      url,
      'GET',
      '/stores',
      undefined,
      bearer(await sign(issuer.privateKey, 'RS256', issuer.kid, claims({ jti: 'x' }))),
    );
    expect(list.status).toBe(200);
    expect(list.json!.stores).toEqual([]);
  });
});
