// Rate limits over HTTP (429 rate_limit_exceeded with Retry-After; repeated failed token requests
// → 429 auth_rate_limit_exceeded, even with the right secret afterwards), and clients made with
// `latch client` on a LevelDB data directory, as a real server sees them afterwards.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CredentialsMethod, OpenFgaClient } from '@openfga/sdk';
import { exportJWK, exportPKCS8, generateKeyPair, SignJWT } from 'jose';
import { main } from '../../src/cli/main.js';
import { ALL_SCOPES, bearer, call, MODEL, startAuthServer, type AuthServer } from './fixtures.js';

const form = (o: Record<string, string>): string => new URLSearchParams(o).toString();
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe('rate limits', () => {
  let s: AuthServer;
  let store = '';
  beforeAll(async () => {
    s = await startAuthServer({
      rateLimits: { check: { perSecond: 1, burst: 2 } },
      tokenFailures: { perSecond: 1 / 60, burst: 3 },
      authFailures: { perSecond: 1 / 60, burst: 3 },
    });
    const admin = bearer(await s.mint('*', ALL_SCOPES));
    store = (await call(s.base, 'POST', '/stores', { name: 'limits' }, admin)).json!.id as string;
    await call(s.base, 'POST', `/stores/${store}/authorization-models`, MODEL, admin);
  });
  afterAll(() => s.close());

  it('429 rate_limit_exceeded with Retry-After once the check bucket is empty; other classes unaffected', async () => {
    const h = bearer(await s.mint(store, ['check:tuples', 'read:tuples']));
    const body = { tuple_key: { user: 'user:a', relation: 'viewer', object: 'doc:1' } };
    const statuses: number[] = [];
    let last;
    for (let i = 0; i < 3; i++) {
      last = await call(s.base, 'POST', `/stores/${store}/check`, body, h);
      statuses.push(last.status);
    }
    expect(statuses).toEqual([200, 200, 429]);
    expect(last!.json?.code).toBe('rate_limit_exceeded');
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await call(s.base, 'POST', `/stores/${store}/read`, {}, h)).status).toBe(200);
  });

  it('repeated forged bearer tokens from one address → 429 auth_rate_limit_exceeded before any signature check', async () => {
    const cached = bearer(await s.mint(store, ['read:tuples']));
    expect((await call(s.base, 'POST', `/stores/${store}/read`, {}, cached)).status).toBe(200);
    const forged = bearer(`${(await s.mint(store, ['read:tuples'])).slice(0, -4)}AAAA`);
    for (let i = 0; i < 3; i++)
      expect((await call(s.base, 'POST', `/stores/${store}/read`, {}, forged)).json?.code).toBe(
        'auth_failed_invalid_bearer_token',
      );
    const blocked = await call(s.base, 'POST', `/stores/${store}/read`, {}, forged);
    expect({ status: blocked.status, code: blocked.json?.code }).toEqual({
      status: 429,
      code: 'auth_rate_limit_exceeded',
    });
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // A fresh valid token from that address waits too; an already verified (cached) one still works.
    expect(
      (await call(s.base, 'POST', `/stores/${store}/read`, {}, bearer(await s.mint(store, ['read:tuples'])))).status,
    ).toBe(429);
    expect((await call(s.base, 'POST', `/stores/${store}/read`, {}, cached)).status).toBe(200);
  });

  it('repeated failed token requests → 429 auth_rate_limit_exceeded, the right secret included', async () => {
    const { client, secret } = await s.auth.clients!.create({ storeId: store, scopes: ['check:tuples'] });
    const attempt = (pw: string) =>
      call(
        s.base,
        'POST',
        '/oauth/token',
        form({ grant_type: 'client_credentials', client_id: client.id, client_secret: pw, audience: s.audience }),
        FORM,
      );
    const ok = await attempt(secret);
    expect(ok.status).toBe(200);
    expect(ok.json).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'check:tuples' });
    expect(ok.headers.get('cache-control')).toBe('no-store');
    for (let i = 0; i < 3; i++) expect((await attempt(`guess-${i}`)).json?.error).toBe('invalid_client');
    const blocked = await attempt('guess-4');
    expect({ status: blocked.status, code: blocked.json?.code }).toEqual({
      status: 429,
      code: 'auth_rate_limit_exceeded',
    });
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await attempt(secret)).status).toBe(429);
  });
});

describe('token endpoint details', () => {
  let s: AuthServer;
  beforeAll(async () => {
    s = await startAuthServer();
  });
  afterAll(() => s.close());

  it('JSON bodies, HTTP Basic, wrong audience, wrong grant, revoked client', async () => {
    const { client, secret } = await s.auth.clients!.create({
      storeId: '01JAAAAAAAAAAAAAAAAAAAAAAA',
      scopes: ['check:tuples', 'read:tuples'],
    });
    const json = await call(s.base, 'POST', '/oauth/token', {
      grant_type: 'client_credentials',
      client_id: client.id,
      client_secret: secret,
      audience: s.audience,
      scope: 'read:tuples',
    });
    expect(json.status).toBe(200);
    expect(json.json?.scope).toBe('read:tuples');
    const basic = `Basic ${Buffer.from(`${client.id}:${secret}`).toString('base64')}`;
    expect(
      (
        await call(s.base, 'POST', '/oauth/token', form({ grant_type: 'client_credentials' }), {
          ...FORM,
          authorization: basic,
        })
      ).status,
    ).toBe(200);
    const region = await call(
      s.base,
      'POST',
      '/oauth/token',
      form({
        grant_type: 'client_credentials',
        client_id: client.id,
        client_secret: secret,
        audience: 'https://api.eu1.fga.dev/',
      }),
      FORM,
    );
    expect({ status: region.status, error: region.json?.error }).toEqual({ status: 403, error: 'access_denied' });
    const grant = await call(
      s.base,
      'POST',
      '/oauth/token',
      form({ grant_type: 'password', client_id: client.id, client_secret: secret }),
      FORM,
    );
    expect({ status: grant.status, error: grant.json?.error }).toEqual({
      status: 400,
      error: 'unsupported_grant_type',
    });
    await s.auth.clients!.revoke(client.id);
    const revoked = await call(
      s.base,
      'POST',
      '/oauth/token',
      form({ grant_type: 'client_credentials', client_id: client.id, client_secret: secret }),
      FORM,
    );
    expect({ status: revoked.status, error: revoked.json?.error }).toEqual({ status: 401, error: 'invalid_client' });
  });
});

describe('private_key_jwt client authentication', () => {
  let s: AuthServer;
  beforeAll(async () => {
    s = await startAuthServer();
  });
  afterAll(() => s.close());

  it('the official SDK authenticates with a signed assertion; a replayed assertion is refused', async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), alg: 'RS256' };
    const { client } = await s.auth.clients!.create({ storeId: '*', scopes: ['read:stores'], publicKey: jwk });
    const fga = new OpenFgaClient({
      apiUrl: s.base,
      credentials: {
        method: CredentialsMethod.ClientCredentials,
        config: {
          apiTokenIssuer: s.base,
          apiAudience: s.audience,
          clientId: client.id,
          clientAssertionSigningKey: await exportPKCS8(privateKey),
        },
      },
    });
    expect((await fga.listStores()).stores).toBeDefined();
    const assertion = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256' })
      .setIssuedAt()
      .setSubject(client.id)
      .setIssuer(client.id)
      .setJti('once')
      .setAudience(`${s.base}/`)
      .setExpirationTime('2m')
      .sign(privateKey);
    const body = form({
      grant_type: 'client_credentials',
      client_id: client.id,
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
      audience: s.audience,
    });
    expect((await call(s.base, 'POST', '/oauth/token', body, FORM)).status).toBe(200);
    const replay = await call(s.base, 'POST', '/oauth/token', body, FORM);
    expect({ status: replay.status, error: replay.json?.error }).toEqual({ status: 401, error: 'invalid_client' });
  });
});

// The command itself (arguments, output, exit codes) is tested once, in test/cli/auth-clients.test.ts;
// here it only sets up clients whose effect the server must honour.
describe('clients managed with `latch client` on a data directory, seen by the server', () => {
  let dir: string;
  const out: string[] = [];
  const run = async (...args: string[]): Promise<number> => {
    const write = process.stdout.write;
    process.stdout.write = ((c: string) => (out.push(c), true)) as typeof process.stdout.write;
    try {
      return await main(['client', ...args, '--data-dir', dir]);
    } finally {
      process.stdout.write = write;
    }
  };
  const last = (): Record<string, unknown> => JSON.parse(out[out.length - 1] as string) as Record<string, unknown>;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'latch-cli-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('the server honours create, rotate and revoke; a running server holds the lock', async () => {
    expect(await run('create', '--store', '*', '--scopes', 'read:stores,create:stores')).toBe(0);
    const created = last();
    const id = created.client_id as string;
    const first = created.client_secret as string;
    expect(await run('rotate', id)).toBe(0);
    const second = last().client_secret as string;
    expect(await run('create', '--store', '*', '--scopes', 'read:stores')).toBe(0);
    const other = last().client_id as string;
    expect(await run('revoke', other)).toBe(0);

    const s = await startAuthServer({}, { datastore: 'leveldb', dataDir: dir });
    try {
      const token = (pw: string, cid = id) =>
        call(
          s.base,
          'POST',
          '/oauth/token',
          form({ grant_type: 'client_credentials', client_id: cid, client_secret: pw, audience: s.audience }),
          FORM,
        );
      expect((await token(first)).status).toBe(401);
      const ok = await token(second);
      expect(ok.status).toBe(200);
      expect((await call(s.base, 'GET', '/stores', undefined, bearer(ok.json!.access_token as string))).status).toBe(
        200,
      );
      expect((await token(second, other)).status).toBe(401);
      expect(await run('list')).toBe(1); // the server holds <data-dir>/auth
    } finally {
      await s.close();
    }
  });

  it('signing keys persist: a token issued before a restart verifies after it', async () => {
    const first = await startAuthServer({}, { datastore: 'leveldb', dataDir: dir });
    const token = await first.mint('*', ['read:stores']);
    const kid = first.auth.keys!.currentKid;
    await first.close();
    const again = await startAuthServer({}, { datastore: 'leveldb', dataDir: dir, port: first.port });
    try {
      expect(again.auth.keys!.currentKid).toBe(kid);
      expect((await call(again.base, 'GET', '/stores', undefined, bearer(token))).status).toBe(200);
    } finally {
      await again.close();
    }
  });
});
