// Failed credentials from other callers on one address (everyone behind one reverse proxy) spent
// the address's budget and locked the operator's admin key out. Admin-key failures are now
// counted apart, and a configured trusted proxy's X-Forwarded-For names the caller.

import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callerAddress, trustedProxies } from '../../src/http/peer.js';
import { startAuthServer, type AuthServer } from './fixtures.js';

const ADMIN_KEY = 'admin-key-for-the-lockout-test-0123456789';
let s: AuthServer;

beforeAll(async () => {
  s = await startAuthServer(
    { adminKey: ADMIN_KEY, authFailures: { perSecond: 0.001, burst: 5 } },
    { trustedProxies: ['127.0.0.5'] },
  );
});
afterAll(() => s.close());

/** GET /clients with `token`, from `localAddress`, with an optional X-Forwarded-For. */
function listClients(
  localAddress: string,
  token: string,
  forwardedFor?: string,
): Promise<{ status: number; code?: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (forwardedFor !== undefined) headers['x-forwarded-for'] = forwardedFor;
    const req = request({ host: '127.0.0.1', port: s.port, path: '/clients', localAddress, headers }, (res) => {
      let text = '';
      res.on('data', (d: Buffer) => void (text += d.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, code: (JSON.parse(text || '{}') as { code?: string }).code }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const forged = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';

describe('the admin key and the failed-credential budget', () => {
  it("attack: other callers' failed tokens on the admin's address do not lock out the admin key", async () => {
    const failures = await Promise.all(Array.from({ length: 8 }, () => listClients('127.0.0.2', forged)));
    expect(failures.map((r) => r.status).sort()).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    expect(await listClients('127.0.0.2', forged)).toEqual({ status: 429, code: 'auth_rate_limit_exceeded' });
    expect((await listClients('127.0.0.2', ADMIN_KEY)).status).toBe(200);
  });

  it('guesses at the admin key are limited by a budget of their own', async () => {
    const guesses = await Promise.all(Array.from({ length: 7 }, (_, i) => listClients('127.0.0.3', `guess-${i}`)));
    expect(guesses.map((r) => r.status).sort()).toEqual([401, 401, 401, 401, 401, 429, 429]);
    expect((await listClients('127.0.0.3', ADMIN_KEY)).status).toBe(429);
    // A JWT from the same address still has the address's own budget.
    expect(await listClients('127.0.0.3', await s.mint('*', ['manage:clients']))).toEqual({ status: 200 });
  });

  it('attack: behind a trusted proxy, one caller spending its budget leaves the others theirs', async () => {
    for (let i = 0; i < 5; i++) expect((await listClients('127.0.0.5', forged, '203.0.113.7')).status).toBe(401);
    expect((await listClients('127.0.0.5', forged, '203.0.113.7')).status).toBe(429);
    const other = await listClients('127.0.0.5', await s.mint('*', ['manage:clients']), '203.0.113.8');
    expect(other.status).toBe(200);
    // From an untrusted peer the header is ignored: the peer is the caller.
    for (let i = 0; i < 5; i++) expect((await listClients('127.0.0.6', forged, '198.51.100.1')).status).toBe(401);
    expect((await listClients('127.0.0.6', forged, '198.51.100.2')).status).toBe(429);
  });

  it('X-Forwarded-For is read from the nearest hop back to the first untrusted one', () => {
    const trusted = trustedProxies(['10.0.0.2', '10.0.0.3']);
    expect(callerAddress('10.0.0.2', '203.0.113.7, 10.0.0.3', trusted)).toBe('203.0.113.7');
    expect(callerAddress('10.0.0.2', 'spoofed, 203.0.113.7', trusted)).toBe('203.0.113.7');
    expect(callerAddress('::ffff:10.0.0.2', '203.0.113.7', trusted)).toBe('203.0.113.7');
    expect(callerAddress('10.0.0.9', '203.0.113.7', trusted)).toBe('10.0.0.9');
    expect(callerAddress('10.0.0.2', '', trusted)).toBe('10.0.0.2');
  });
});
