// A route's admission decided once (routeGate) answers as `admit` does for every operation, and a
// mode-none server with rate limits still limits: only the unlimited mode none is a constant.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admit, admitted, routeGate, type Admission } from '../../src/api/auth/gate.js';
import { OPERATIONS } from '../../src/api/auth/operations.js';
import { openAuth, type AuthService } from '../../src/api/auth/service.js';
import { AppError } from '../../src/errors.js';

const STORE = '01JAAAAAAAAAAAAAAAAAAAAAAA';
const NAMES = [...Object.keys(OPERATIONS), 'Health', 'Token', 'NoSuchOperation'];

/** The principal admitted, or the refusal's code. */
function decision(a: Admission): string {
  try {
    const p = admitted(a);
    if (p instanceof Promise) throw new Error('mode none never verifies asynchronously');
    return `principal:${p.clientId}:${String(p.storeId)}`;
  } catch (err) {
    if (err instanceof AppError) return `error:${err.code}`;
    throw err;
  }
}

let open: AuthService;
let limited: AuthService;

beforeAll(async () => {
  open = await openAuth({ config: { mode: 'none', logRetentionDays: 0 }, host: '127.0.0.1' });
  limited = await openAuth({
    config: { mode: 'none', logRetentionDays: 0, rateLimits: { check: { perSecond: 1e-6, burst: 2 } } },
    host: '127.0.0.1',
  });
});

afterAll(async () => {
  await open.close();
  await limited.close();
});

describe('routeGate', () => {
  it('admits as admit does, for every operation, with and without an auth subsystem', () => {
    for (const auth of [undefined, open]) {
      for (const op of NAMES) {
        const seen = { principal: undefined };
        expect([op, decision(routeGate(auth, op)(undefined, STORE, seen))]).toEqual([
          op,
          decision(admit(auth, op, undefined, STORE, seen)),
        ]);
      }
    }
    expect(decision(routeGate(open, 'Check')(undefined, STORE))).toBe('principal:anonymous:*');
  });

  it('still takes from the rate limit in mode none when limits are set', () => {
    const gate = routeGate(limited, 'Check');
    expect([1, 2, 3].map(() => decision(gate(undefined, STORE)))).toEqual([
      'principal:anonymous:*',
      'principal:anonymous:*',
      'error:rate_limit_exceeded',
    ]);
  });
});
