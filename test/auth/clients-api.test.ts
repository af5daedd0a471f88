// Clients created for a RUNNING server: the /clients endpoints (client-credentials mode), guarded
// by an account-level credential with the scope `manage:clients` (a client's token or the
// operator's admin key), and `latch client … --api-url` using them, with `--datastore memory`
// (no offline way exists there) and with LevelDB while the server holds its lock.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveAuthConfig } from '../../src/api/auth/config.js';
import { resolveSettings, serveConfig } from '../../src/cli/settings-load.js';
import { latch, type Run } from '../cli/helpers.js';
import { bearer, call, startAuthServer, type AuthServer } from './fixtures.js';

const ADMIN_KEY = 'operator-admin-key-0123456789';
const STORE = '01J5Y0M8Q3ZKX7T9B2C4D6F8GH';

const json = <T>(r: Run): T => {
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.out) as T;
};

interface ClientView {
  client_id: string;
  client_secret?: string;
  store_id: string;
  scopes: string[];
  revoked_at: string | null;
}

/** A token from the server's own token endpoint for a client id and secret. */
async function token(s: AuthServer, id: string, secret: string): Promise<{ status: number; token?: string }> {
  const res = await fetch(`${s.base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: id, client_secret: secret }),
  });
  const body = (await res.json()) as { access_token?: string };
  return { status: res.status, token: body.access_token };
}

describe('the /clients endpoints on a memory-datastore server', () => {
  let s: AuthServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    s = await startAuthServer({ adminKey: ADMIN_KEY });
    env = { LATCH_API_URL: s.base, LATCH_API_TOKEN: ADMIN_KEY };
  });
  afterAll(async () => {
    await s?.close();
  });

  it('latch client create --api-url makes a client whose secret gets tokens at once', async () => {
    const c = json<ClientView>(
      await latch(['client', 'create', '--store', STORE, '--scopes', 'check:tuples,read:tuples', '--name', 'web'], env),
    );
    expect(c).toMatchObject({ store_id: STORE, scopes: ['check:tuples', 'read:tuples'] });
    const t = await token(s, c.client_id, c.client_secret as string);
    expect(t.status).toBe(200);
    // The new client's token works on its store and nowhere else.
    expect((await call(s.base, 'POST', `/stores/${STORE}/check`, {}, bearer(t.token as string))).status).not.toBe(401);
    expect((await call(s.base, 'GET', '/stores', undefined, bearer(t.token as string))).status).toBe(403);
  });

  it('list, rotate and revoke go through the running server', async () => {
    const c = json<ClientView>(await latch(['client', 'create', '--store', '*', '--scopes', 'read:stores'], env));
    const listed = json<{ clients: ClientView[] }>(await latch(['client', 'list'], env));
    expect(listed.clients.map((x) => x.client_id)).toContain(c.client_id);
    expect(JSON.stringify(listed)).not.toMatch(/scrypt|client_secret/);
    const rotated = json<ClientView>(await latch(['client', 'rotate', c.client_id], env));
    expect((await token(s, c.client_id, c.client_secret as string)).status).toBe(401);
    expect((await token(s, c.client_id, rotated.client_secret as string)).status).toBe(200);
    const revoked = json<ClientView>(await latch(['client', 'revoke', c.client_id], env));
    expect(revoked.revoked_at).not.toBeNull();
    expect((await token(s, c.client_id, rotated.client_secret as string)).status).toBe(401);
    const missing = await latch(['client', 'revoke', 'NoSuchClient000'], env);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("404 resource_not_found: no client 'NoSuchClient000'");
  });

  it('an account-level client with manage:clients may manage clients; others may not', async () => {
    const manager = bearer(await s.mint('*', ['manage:clients', 'check:tuples']));
    const made = await call(s.base, 'POST', '/clients', { store_id: STORE, scopes: ['check:tuples'] }, manager);
    expect(made.status).toBe(201);
    expect((made.json as unknown as ClientView).client_secret).toEqual(expect.any(String));
    // Every scope but manage:clients: refused.
    const allElse = bearer(await s.mint('*', ['read:stores', 'create:stores', 'write:tuples']));
    expect(await call(s.base, 'GET', '/clients', undefined, allElse)).toMatchObject({
      status: 403,
      json: { code: 'insufficient_permissions' },
    });
    // A store-bound token, even with the scope: refused (account-level only).
    const bound = bearer(await s.mint(STORE, ['manage:clients']));
    expect(await call(s.base, 'GET', '/clients', undefined, bound)).toMatchObject({
      status: 403,
      json: { code: 'insufficient_permissions' },
    });
    // No credential, a wrong key: 401.
    expect((await call(s.base, 'GET', '/clients')).status).toBe(401);
    expect((await call(s.base, 'GET', '/clients', undefined, bearer('operator-admin-key-wrong-000'))).status).toBe(401);
  });

  it('the admin key opens the client endpoints only', async () => {
    const admin = bearer(ADMIN_KEY);
    expect((await call(s.base, 'GET', '/clients', undefined, admin)).status).toBe(200);
    expect(await call(s.base, 'GET', '/stores', undefined, admin)).toMatchObject({
      status: 403,
      json: { code: 'insufficient_permissions' },
    });
    expect(await call(s.base, 'POST', `/stores/${STORE}/check`, {}, admin)).toMatchObject({ status: 403 });
  });

  it('bad bodies are 400 validation_error and create nothing', async () => {
    const admin = bearer(ADMIN_KEY);
    const before = ((await call(s.base, 'GET', '/clients', undefined, admin)).json as unknown as { clients: unknown[] })
      .clients.length;
    const cases: [unknown, string][] = [
      [{ scopes: ['check:tuples'] }, "'store_id' must be a store id or '*'"],
      [{ store_id: 'nope', scopes: ['check:tuples'] }, "'store_id' must be a store id or '*'"],
      [{ store_id: '*', scopes: [] }, "'scopes' must be a non-empty list of scopes"],
      [{ store_id: '*', scopes: ['fly:kites'] }, 'unknown scopes: fly:kites'],
      [
        { store_id: '*', scopes: ['check:tuples'], public_key: { kty: 'EC', d: 'secret' } },
        "'public_key' must be a public JWK (it contains private material)",
      ],
    ];
    for (const [body, message] of cases) {
      expect(await call(s.base, 'POST', '/clients', body, admin)).toMatchObject({
        status: 400,
        json: { code: 'validation_error', message },
      });
    }
    expect(
      ((await call(s.base, 'GET', '/clients', undefined, admin)).json as unknown as { clients: unknown[] }).clients,
    ).toHaveLength(before);
  });
});

describe('the /clients endpoints on a LevelDB server that holds its lock', () => {
  let s: AuthServer;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'latch-clients-api-'));
    s = await startAuthServer({}, { datastore: 'leveldb', dataDir: dir });
  });
  afterAll(async () => {
    await s?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an account-level client token creates a client while the server runs; it survives a restart', async () => {
    const offline = await latch(['client', 'list', '--data-dir', dir]);
    expect(offline.code).toBe(1); // the running server holds the lock
    const env = { LATCH_API_URL: s.base, LATCH_API_TOKEN: await s.mint('*', ['manage:clients', 'check:tuples']) };
    const c = json<ClientView>(await latch(['client', 'create', '--store', STORE, '--scopes', 'check:tuples'], env));
    expect((await token(s, c.client_id, c.client_secret as string)).status).toBe(200);
    await s.close();
    const listed = json<{ clients: ClientView[] }>(await latch(['client', 'list', '--data-dir', dir]));
    expect(listed.clients.map((x) => x.client_id)).toContain(c.client_id);
  });
});

describe('the admin key setting', () => {
  it('is refused outside client-credentials mode and when short', () => {
    expect(() =>
      resolveAuthConfig({ mode: 'preshared', presharedKeys: ['k'.repeat(16)], adminKey: ADMIN_KEY }, '127.0.0.1'),
    ).toThrow("an admin key manages the clients of auth mode 'client-credentials', not 'preshared'");
    expect(() =>
      resolveAuthConfig(
        { mode: 'client-credentials', issuer: 'http://a', audience: 'http://a', adminKey: 'short' },
        '127.0.0.1',
      ),
    ).toThrow('the admin key must be at least 16 characters');
  });

  it('latch serve takes it from LATCH_AUTH_ADMIN_KEY', () => {
    const resolved = resolveSettings(
      ['--auth-mode', 'client-credentials', '--auth-issuer', 'http://a', '--auth-audience', 'http://a'],
      { LATCH_AUTH_ADMIN_KEY: ADMIN_KEY },
    );
    expect(serveConfig(resolved).server.auth?.adminKey).toBe(ADMIN_KEY);
  });
});
