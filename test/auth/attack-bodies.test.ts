// Unauthenticated bodies are never decoded (D1): a server in client-credentials mode answers 401
// to a deeply nested 1 MB JSON body without parsing it, so 20 of them cost the event loop a small
// fraction of what decoding them costs (measured here, in the same process, as the baseline).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startAuthServer, type AuthServer } from './fixtures.js';
import { probeLoop, timeOf } from '../support/stall.js';

const STORE = '01JAAAAAAAAAAAAAAAAAAAAAAA';
const DEPTH = 499_000; // `[` × DEPTH + `]` × DEPTH: just under the 1 MiB body limit
const body = '['.repeat(DEPTH) + ']'.repeat(DEPTH);

let s: AuthServer;
beforeAll(async () => {
  s = await startAuthServer();
});
afterAll(() => s.close());

describe('unauthenticated bodies', () => {
  it('attack: 20 unauthenticated 1 MB nested bodies are refused without decoding them', async () => {
    // Baseline: what decoding one such body costs this process (≈ 0.5 s on a quiet core).
    const decodeMs = timeOf(() => JSON.parse(body) as unknown);
    const probe = probeLoop();
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(s.base, 'POST', `/stores/${STORE}/check`, body, {
          'content-type': 'application/json',
          ...(i % 2 === 0 ? {} : { authorization: 'Bearer not.a.token' }),
        }),
      ),
    );
    const load = probe.stop();
    for (const r of replies) expect({ status: r.status, code: r.json?.code }).toMatchObject({ status: 401 });
    // Decoding them all would keep the loop busy ≥ 20 × decodeMs, each stall ≈ decodeMs. The
    // loop's busy time also holds this process's own client sending the 20 MB and the server
    // receiving it (about 2 × decodeMs on a quiet machine), so the bound is a quarter of the
    // decoding: a server that decodes them exceeds it fourfold.
    expect(load.activeMs).toBeLessThan((20 * decodeMs) / 4);
    expect(load.maxStallMs).toBeLessThan(decodeMs);
    // The server still answers.
    expect((await call(s.base, 'GET', '/healthz')).status).toBe(200);
  });
});
