// Client administration under attack: `manage:clients` is no longer root (a manager grants at most
// the scopes it holds and takes over no stronger client; `admin:clients`, held by the admin key,
// is the stated exception), private_key_jwt clients have no secret, public keys must hold a key,
// and replies carrying a secret are never cached.

import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, call, startAuthServer, type AuthServer } from './fixtures.js';

const ADMIN_KEY = 'operator-admin-key-0123456789';
const STORE = '01J5Y0M8Q3ZKX7T9B2C4D6F8GH';
const admin = { authorization: `Bearer ${ADMIN_KEY}` };

let s: AuthServer;
let manager: Record<string, string>;
beforeAll(async () => {
  s = await startAuthServer({ adminKey: ADMIN_KEY });
  manager = bearer(await s.mint('*', ['manage:clients', 'check:tuples']));
});
afterAll(() => s.close());

const create = (headers: Record<string, string>, body: Record<string, unknown>) =>
  call(s.base, 'POST', '/clients', body, headers);

describe('who may mint what', () => {
  it('attack: a client holding only manage:clients cannot mint a client with more scopes', async () => {
    const root = await create(manager, { store_id: '*', scopes: ['manage:clients', 'write:tuples', 'read:tuples'] });
    expect({ status: root.status, code: root.json?.code }).toEqual({ status: 403, code: 'insufficient_permissions' });
    const admin2 = await create(manager, { store_id: '*', scopes: ['manage:clients', 'admin:clients'] });
    expect(admin2.status).toBe(403);
    // Within what it holds, it may.
    const ok = await create(manager, { store_id: STORE, scopes: ['check:tuples'] });
    expect(ok.status).toBe(201);
  });

  it("attack: a manage:clients client cannot rotate or revoke a stronger client's secret", async () => {
    const strong = await create(admin, { store_id: '*', scopes: ['write:tuples', 'read:tuples'] });
    expect(strong.status).toBe(201);
    const id = strong.json?.client_id as string;
    const rotated = await call(s.base, 'POST', `/clients/${id}/rotate`, undefined, manager);
    expect({ status: rotated.status, code: rotated.json?.code }).toEqual({
      status: 403,
      code: 'insufficient_permissions',
    });
    expect(rotated.json?.client_secret).toBeUndefined();
    expect((await call(s.base, 'DELETE', `/clients/${id}`, undefined, manager)).status).toBe(403);
  });

  it('the admin key is the account administrator: it mints any scopes', async () => {
    const r = await create(admin, { store_id: '*', scopes: ['manage:clients', 'write:tuples'] });
    expect(r.status).toBe(201);
  });
});

describe('secrets', () => {
  it('attack: a private_key_jwt client gets no client_secret; a JWK without key material is refused', async () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const r = await create(admin, { store_id: STORE, scopes: ['check:tuples'], public_key: jwk });
    expect(r.status).toBe(201);
    expect(r.json?.client_secret).toBeUndefined();
    expect(r.json?.private_key_jwt).toBe(true);
    const rotate = await call(s.base, 'POST', `/clients/${r.json?.client_id as string}/rotate`, undefined, admin);
    expect({ status: rotate.status, code: rotate.json?.code }).toEqual({ status: 400, code: 'validation_error' });
    const empty = await create(admin, { store_id: STORE, scopes: ['check:tuples'], public_key: { kty: 'RSA' } });
    expect({ status: empty.status, code: empty.json?.code }).toEqual({ status: 400, code: 'validation_error' });
  });

  it('attack: replies carrying a client secret say Cache-Control: no-store', async () => {
    const r = await create(admin, { store_id: STORE, scopes: ['check:tuples'] });
    expect(r.json?.client_secret).toEqual(expect.any(String));
    expect(r.headers.get('cache-control')).toBe('no-store');
    const rotated = await call(s.base, 'POST', `/clients/${r.json?.client_id as string}/rotate`, undefined, admin);
    expect(rotated.json?.client_secret).toEqual(expect.any(String));
    expect(rotated.headers.get('cache-control')).toBe('no-store');
  });
});
