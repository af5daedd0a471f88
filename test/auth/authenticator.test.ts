// The authenticator on its own (no HTTP): every attack row, the scope table, the four modes,
// the oidc JWKS failure (a real JWKS server that is down) and the configuration refusals.

import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openAuth, type AuthService } from '../../src/api/auth/service.js';
import { OPERATIONS, type Operation } from '../../src/api/auth/operations.js';
import { AuthConfigError } from '../../src/api/auth/config.js';
import { AppError } from '../../src/errors.js';
import { ATTACKS, goodClaims, type AttackContext } from './attacks.js';
import { nowS, sign, startIssuer, type TestIssuer } from './helpers.js';
import { LATCH_ENTRY } from '../support/latch-process.js';

const STORE_A = '01JAAAAAAAAAAAAAAAAAAAAAAA';
const STORE_B = '01JBBBBBBBBBBBBBBBBBBBBBBB';
const STORE_C = '01JCCCCCCCCCCCCCCCCCCCCCCC';
const ISSUER = 'http://127.0.0.1:9/';
const AUDIENCE = 'https://api.us1.fga.dev';

async function outcome(f: () => unknown): Promise<{ status: number; code: string }> {
  try {
    await f();
    return { status: 200, code: '' };
  } catch (err) {
    if (err instanceof AppError) return { status: err.status, code: err.code };
    throw err;
  }
}

describe('client-credentials authenticator', () => {
  let auth: AuthService;
  let ctx: AttackContext;

  beforeAll(async () => {
    auth = await openAuth({
      config: { mode: 'client-credentials', issuer: ISSUER, audience: AUDIENCE },
      host: '127.0.0.1',
    });
    const clients = auth.clients!;
    const { client } = await clients.create({ storeId: STORE_A, scopes: ['check:tuples'] });
    const { client: revoked } = await clients.create({ storeId: STORE_A, scopes: ['check:tuples'] });
    await clients.revoke(revoked.id);
    ctx = {
      issuer: ISSUER,
      audience: `${AUDIENCE}/`,
      clientId: client.id,
      revokedClientId: revoked.id,
      storeA: STORE_A,
      signReal: (claims) => auth.keys!.sign(claims),
      publicJwk: auth.keys!.jwks().keys[0]!,
    };
  });
  afterAll(() => auth.close());

  it('accepts a good token, then serves it from the cache synchronously', async () => {
    const h = `Bearer ${await ctx.signReal(goodClaims(ctx))}`;
    const first = auth.authenticator.authenticate(h, 'Check', STORE_A);
    expect(first).toBeInstanceOf(Promise);
    expect((await first).clientId).toBe(ctx.clientId);
    const second = auth.authenticator.authenticate(h, 'Check', STORE_A);
    expect(second).not.toBeInstanceOf(Promise);
    // The cache never widens what the token allows.
    expect(await outcome(() => auth.authenticator.authenticate(h, 'Check', STORE_B))).toEqual({
      status: 403,
      code: 'store_mismatch_in_bearer_token',
    });
  });

  const stores = { A: STORE_A, B: STORE_B, C: STORE_C };
  for (const row of ATTACKS) {
    it(`${row.name} → ${row.status} ${row.code}`, async () => {
      const header = await row.header(ctx);
      expect(await outcome(() => auth.authenticator.authenticate(header, 'Check', stores[row.store ?? 'A']))).toEqual({
        status: row.status,
        code: row.code,
      });
    });
  }

  it('revoking a client refuses its cached token at once', async () => {
    const { client } = await auth.clients!.create({ storeId: STORE_A, scopes: ['check:tuples'] });
    const h = `Bearer ${await ctx.signReal(goodClaims(ctx, { sub: client.id, client_id: client.id }))}`;
    await auth.authenticator.authenticate(h, 'Check', STORE_A);
    await auth.clients!.revoke(client.id);
    expect(await outcome(() => auth.authenticator.authenticate(h, 'Check', STORE_A))).toEqual({
      status: 403,
      code: 'unauthorized_principal',
    });
  });

  it('a cached token dies at exp', async () => {
    const h = `Bearer ${await ctx.signReal(goodClaims(ctx, { exp: nowS() + 1 }))}`;
    // The clock is moved, not waited for: Date alone is faked (timers stay real).
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      await auth.authenticator.authenticate(h, 'Check', STORE_A);
      vi.setSystemTime(Date.now() + 4000); // past exp but inside the 5 s clock tolerance
      expect((await auth.authenticator.authenticate(h, 'Check', STORE_A)).clientId).toBe(ctx.clientId);
      vi.setSystemTime(Date.now() + 2200); // past exp and the tolerance
      expect(await outcome(() => auth.authenticator.authenticate(h, 'Check', STORE_A))).toEqual({
        status: 401,
        code: 'invalid_claims',
      });
    } finally {
      vi.useRealTimers();
    }
  });

  it('rotation keeps the previous key verifying and publishes both', async () => {
    const h = `Bearer ${await ctx.signReal(goodClaims(ctx))}`;
    const kid = auth.keys!.currentKid;
    await auth.keys!.rotate();
    expect(auth.keys!.jwks().keys.map((k) => k.kid)).toEqual([auth.keys!.currentKid, kid]);
    expect((await auth.authenticator.authenticate(h, 'Check', STORE_A)).clientId).toBe(ctx.clientId);
  });
});

describe('scope table', () => {
  let auth: AuthService;
  const account = '*';
  beforeAll(async () => {
    auth = await openAuth({
      config: {
        mode: 'preshared',
        presharedKeys: ['k'.repeat(16)].map((key) => ({ key, storeId: account, scopes: [] })),
      },
      host: '127.0.0.1',
    });
  });
  afterAll(() => auth.close());

  for (const [op, rule] of Object.entries(OPERATIONS)) {
    const scope: string | null = rule.scope;
    if (scope === null) continue;
    it(`${op} needs ${scope}`, async () => {
      const withScope = await openAuth({
        config: { mode: 'preshared', presharedKeys: [{ key: 'x'.repeat(16), storeId: account, scopes: [scope] }] },
        host: '127.0.0.1',
      });
      try {
        expect(
          await outcome(() =>
            withScope.authenticator.authenticate(`Bearer ${'x'.repeat(16)}`, op as Operation, STORE_A),
          ),
        ).toEqual({ status: 200, code: '' });
      } finally {
        await withScope.close();
      }
      expect(
        await outcome(() => auth.authenticator.authenticate(`Bearer ${'k'.repeat(16)}`, op as Operation, STORE_A)),
      ).toEqual({ status: 403, code: 'insufficient_permissions' });
    });
  }

  it('a wrong pre-shared key is 401 unauthenticated', async () => {
    expect(await outcome(() => auth.authenticator.authenticate(`Bearer ${'z'.repeat(16)}`, 'Check', STORE_A))).toEqual({
      status: 401,
      code: 'unauthenticated',
    });
  });
});

describe('oidc', () => {
  let issuer: TestIssuer;
  let auth: AuthService;
  const claims = (extra = {}) => ({
    iss: issuer.url,
    sub: 'svc-1',
    aud: `${AUDIENCE}/`,
    exp: nowS() + 300,
    store_id: STORE_A,
    scope: 'check:tuples',
    ...extra,
  });

  beforeAll(async () => {
    issuer = await startIssuer();
    auth = await openAuth({
      config: { mode: 'oidc', issuer: issuer.url, audience: AUDIENCE, logRetentionDays: 0 },
      host: '127.0.0.1',
    });
  });
  afterAll(async () => {
    await auth.close();
    await issuer.close();
  });

  it('JWKS endpoint down → 500 auth_failed_error_fetching_well_known_jwks, never let through', async () => {
    issuer.up = false;
    const token = await sign(issuer.privateKey, 'RS256', issuer.kid, claims());
    expect(await outcome(() => auth.authenticator.authenticate(`Bearer ${token}`, 'Check', STORE_A))).toEqual({
      status: 500,
      code: 'auth_failed_error_fetching_well_known_jwks',
    });
    issuer.up = true;
  });

  it('verifies an RS256 token of the external issuer', async () => {
    const token = await sign(issuer.privateKey, 'RS256', issuer.kid, claims());
    expect((await auth.authenticator.authenticate(`Bearer ${token}`, 'Check', STORE_A)).clientId).toBe('svc-1');
  });

  it('wrong issuer, missing subject, unknown kid', async () => {
    const wrongIss = await sign(issuer.privateKey, 'RS256', issuer.kid, claims({ iss: 'https://other.example' }));
    expect(await outcome(() => auth.authenticator.authenticate(`Bearer ${wrongIss}`, 'Check', STORE_A))).toEqual({
      status: 401,
      code: 'auth_failed_invalid_issuer',
    });
    const noSub = await sign(issuer.privateKey, 'RS256', issuer.kid, claims({ sub: undefined }));
    expect(await outcome(() => auth.authenticator.authenticate(`Bearer ${noSub}`, 'Check', STORE_A))).toEqual({
      status: 401,
      code: 'auth_failed_invalid_subject',
    });
    const badKid = await sign(issuer.privateKey, 'RS256', 'other-kid', claims());
    expect(await outcome(() => auth.authenticator.authenticate(`Bearer ${badKid}`, 'Check', STORE_A))).toEqual({
      status: 401,
      code: 'auth_failed_invalid_bearer_token',
    });
  });
});

describe('configuration refusals', () => {
  const refuses = async (config: Parameters<typeof openAuth>[0]['config'], host = '127.0.0.1', pattern: RegExp) => {
    await expect(openAuth({ config, host })).rejects.toThrow(AuthConfigError);
    await expect(openAuth({ config, host })).rejects.toThrow(pattern);
  };
  it('oidc without issuer or audience', async () => {
    await refuses({ mode: 'oidc', audience: AUDIENCE }, undefined, /needs an issuer/);
    await refuses({ mode: 'oidc', issuer: ISSUER }, undefined, /needs an audience/);
  });
  it('client-credentials without issuer or audience', async () => {
    await refuses({ mode: 'client-credentials', audience: AUDIENCE }, undefined, /needs an issuer/);
    await refuses({ mode: 'client-credentials', issuer: ISSUER }, undefined, /needs an audience/);
  });
  it('the latch serve process refuses to start (exit 2) without issuer or audience', async () => {
    const serve = (...flags: string[]) =>
      new Promise<{ code: number | null; err: string }>((resolve) => {
        execFile(
          process.execPath,
          [...LATCH_ENTRY, 'serve', '--datastore', 'memory', '--port', '0', ...flags],
          { timeout: 120_000 }, // a hang guard, not a speed limit: three starts at once on a loaded machine
          (error, _out, err) => {
            resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, err });
          },
        );
      });
    const runs = await Promise.all([
      serve('--auth-mode', 'oidc', '--auth-audience', AUDIENCE),
      serve('--auth-mode', 'oidc', '--auth-issuer', ISSUER),
      serve('--auth-mode', 'client-credentials', '--auth-audience', AUDIENCE),
      serve('--auth-mode', 'client-credentials', '--auth-issuer', ISSUER),
    ]);
    expect(runs.map((r) => r.code)).toEqual([2, 2, 2, 2]);
    expect(runs.map((r) => /needs an (issuer|audience)/.exec(r.err)?.[0])).toEqual([
      'needs an issuer',
      'needs an audience',
      'needs an issuer',
      'needs an audience',
    ]);
  }, 60_000);
  it('none on a non-loopback address unless forced', async () => {
    await refuses({ mode: 'none' }, '0.0.0.0', /loopback/);
    const forced = await openAuth({
      config: { mode: 'none', allowNonLoopback: true, logRetentionDays: 0 },
      host: '0.0.0.0',
    });
    expect(forced.config.warning).toMatch(/AUTHENTICATION IS DISABLED/);
    await forced.close();
  });
});
