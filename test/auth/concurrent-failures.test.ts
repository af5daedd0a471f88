// Failed bearer verifications in flight together cannot overdraw an address's failure budget:
// each takes its failure before the signature work and gives it back only when the token is good.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, bearer, call, startAuthServer, type AuthServer } from './fixtures.js';

let s: AuthServer;
let store = '';

beforeAll(async () => {
  s = await startAuthServer({ authFailures: { perSecond: 0.001, burst: 5 } });
  store = (await s.latch.createStore('concurrent')).id;
});

afterAll(() => s.close());

describe('concurrent forged bearer tokens from one address', () => {
  it('only the budget (5) is verified; the rest get 429 before any signature work', async () => {
    const good = await s.mint(store, ALL_SCOPES);
    const forged = Array.from({ length: 40 }, (_, i) => bearer(`${good.slice(0, -6)}${String(i).padStart(6, 'A')}`));
    const codes = await Promise.all(
      forged.map(async (h) => (await call(s.base, 'POST', `/stores/${store}/read`, {}, h)).json?.code),
    );
    expect(codes.filter((c) => c === 'auth_failed_invalid_bearer_token')).toHaveLength(5);
    expect(codes.filter((c) => c === 'auth_rate_limit_exceeded')).toHaveLength(35);
  });

  it('good tokens verified together give their reservations back', async () => {
    const other = await startAuthServer({ authFailures: { perSecond: 0.001, burst: 3 } });
    try {
      const id = (await other.latch.createStore('good')).id;
      for (let round = 0; round < 3; round++) {
        const fresh = await Promise.all(
          Array.from({ length: 3 }, (_, i) => other.mint(id, ALL_SCOPES, { jti: `r${round}-${i}` })),
        );
        const statuses = await Promise.all(
          fresh.map(async (t) => (await call(other.base, 'POST', `/stores/${id}/read`, {}, bearer(t))).status),
        );
        expect(statuses).toEqual([200, 200, 200]);
      }
    } finally {
      await other.close();
    }
  });
});
