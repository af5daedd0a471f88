// AuthZEN evaluations under attack: the short-circuit semantics take no more items than a
// BatchCheck (a 1 MB body of 340,000 `{}` items is refused at once, never evaluated one by one
// on a loop that never yields), and within the limit they run under one deadline.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, start, storeWithModel } from './helpers.js';
import { probeLoop, timeOf } from '../support/stall.js';

let s: Awaited<ReturnType<typeof start>>;
let store = '';
const DEFAULTS = {
  subject: { type: 'user', id: 'anne' },
  resource: { type: 'doc', id: '1' },
  action: { name: 'owner' },
};

beforeAll(async () => {
  s = await start();
  store = await storeWithModel(s.base, 'authzen-attack');
  const w = await call(s.base, 'POST', `/stores/${store}/write`, {
    writes: { tuple_keys: [{ user: 'user:anne', relation: 'owner', object: 'doc:1' }] },
  });
  expect(w.status).toBe(200);
});
afterAll(() => s.close());

const evaluations = (body: unknown) =>
  call(s.base, 'POST', `/stores/${store}/access/v1/evaluations`, JSON.stringify(body), {
    'content-type': 'application/json',
  });

describe('AuthZEN short-circuit evaluations', () => {
  for (const semantic of ['deny_on_first_deny', 'permit_on_first_permit'] as const) {
    it(`attack: ${semantic} with 340,000 items in 1 MB is refused by the batch limit, the loop never held`, async () => {
      // Every item permitted (deny_on_first_deny) or denied (permit_on_first_permit): nothing stops early.
      const action = semantic === 'deny_on_first_deny' ? 'owner' : 'viewer';
      const body = { ...DEFAULTS, action: { name: action }, options: { evaluations_semantic: semantic } };
      const text = JSON.stringify({ ...body, evaluations: Array.from({ length: 340_000 }, () => ({})) });
      const parseMs = timeOf(() => JSON.parse(text) as unknown);
      const probe = probeLoop();
      const r = await call(s.base, 'POST', `/stores/${store}/access/v1/evaluations`, text, {
        'content-type': 'application/json',
      });
      const load = probe.stop();
      expect({ status: r.status, code: (r.json as { code?: string }).code }).toEqual({
        status: 400,
        code: 'validation_error',
      });
      // Evaluating them took seconds in one stall; decoding the body once is what is left.
      expect(load.maxStallMs).toBeLessThan(5 * parseMs + 50);
    });
  }

  it('within the limit every item is evaluated', async () => {
    const r = await evaluations({
      ...DEFAULTS,
      options: { evaluations_semantic: 'deny_on_first_deny' },
      evaluations: Array.from({ length: 50 }, () => ({})),
    });
    expect(r.status).toBe(200);
    expect((r.json as { evaluations: { decision: boolean }[] }).evaluations).toHaveLength(50);
    const over = await evaluations({
      ...DEFAULTS,
      options: { evaluations_semantic: 'permit_on_first_permit' },
      evaluations: Array.from({ length: 51 }, () => ({})),
    });
    expect({ status: over.status, code: (over.json as { code?: string }).code }).toEqual({
      status: 400,
      code: 'validation_error',
    });
  });
});
