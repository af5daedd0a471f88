// Failed token requests are limited per source address and per (client, address): failures sent
// from another address, naming the client, never refuse that client's right secret.

import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAuthServer, type AuthServer } from './fixtures.js';

let s: AuthServer;
let store = '';

beforeAll(async () => {
  // A budget of 10 failures that refills once an hour instead of every 6 s: the second test reads
  // the address's budget the first one spent, however long the machine takes in between.
  s = await startAuthServer({ tokenFailures: { perSecond: 1 / 3600, burst: 10 } });
  store = (await s.latch.createStore('lockout')).id;
});

afterAll(() => s.close());

/** POST /oauth/token from `localAddress` (any 127.0.0.0/8 address reaches the server on Linux). */
function token(
  localAddress: string,
  clientId: string,
  secret: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: clientId,
    client_secret: secret,
    audience: s.audience,
  }).toString();
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: s.port,
        method: 'POST',
        path: '/oauth/token',
        localAddress,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => void (text += d.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }),
        );
      },
    );
    req.on('error', reject);
    req.end(form);
  });
}

describe('failed token requests', () => {
  it("a client's correct token request succeeds while another address sends failures naming it", async () => {
    const { client, secret } = await s.auth.clients!.create({ storeId: store, scopes: ['check:tuples'] });
    const attacker = Array.from({ length: 60 }, (_, i) => token('127.0.0.2', client.id, `guess-${i}`));
    const legit = Array.from({ length: 10 }, () => token('127.0.0.1', client.id, secret));
    const [bad, good] = await Promise.all([Promise.all(attacker), Promise.all(legit)]);
    expect(good.map((r) => r.status)).toEqual(Array(10).fill(200));
    const statuses = bad.map((r) => r.status);
    expect(statuses.filter((x) => x === 401)).toHaveLength(10); // the address's budget (burst 10)
    expect(statuses.filter((x) => x === 429)).toHaveLength(50);
    // After the attack, still: the right secret from its own address.
    expect((await token('127.0.0.1', client.id, secret)).status).toBe(200);
  });

  it('the failing address is limited whatever client it names', async () => {
    const { client, secret } = await s.auth.clients!.create({ storeId: store, scopes: ['check:tuples'] });
    const r = await token('127.0.0.2', client.id, secret);
    expect({ status: r.status, code: r.body.code }).toEqual({ status: 429, code: 'auth_rate_limit_exceeded' });
    expect((await token('127.0.0.3', client.id, secret)).status).toBe(200);
  });
});
