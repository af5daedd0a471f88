// Live streams under attack (src/http/live-streams.ts): a Watch stream ends, with the catalog code
// of why in its last line, when the credential that opened it is revoked or expires and when it
// reaches its lifetime; streams are capped per client and per server (429 stream_limit_exceeded).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, bearer, call, MODEL, startAuthServer, type AuthServer } from './fixtures.js';

let s: AuthServer;
let store = '';

beforeAll(async () => {
  s = await startAuthServer({}, { liveStreams: { perClient: 2, total: 3, recheckMs: 20, maxLifetimeMs: 60_000 } });
  const admin = bearer(await s.mint('*', ALL_SCOPES));
  store = (await call(s.base, 'POST', '/stores', { name: 'streams' }, admin)).json!.id as string;
  await call(s.base, 'POST', `/stores/${store}/authorization-models`, MODEL, admin);
});
afterAll(() => s.close());

interface Line {
  result?: unknown;
  error?: { code: number; details: { reason?: string }[] };
}

/** Opens a Watch; `lines()` reads every line until the stream ends. */
async function watch(headers: Record<string, string>, base = s.base, id = store) {
  const abort = new AbortController();
  const r = await fetch(`${base}/stores/${id}/watch?heartbeat_ms=8000`, { headers, signal: abort.signal });
  return {
    status: r.status,
    abort: () => abort.abort(),
    async lines(): Promise<Line[]> {
      const text = await r.text();
      return text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Line);
    },
  };
}

/** A token from the token endpoint of a new client with `scopes` on the store. */
async function clientToken(scopes: string[]): Promise<{ id: string; token: string }> {
  const { client, secret } = await s.auth.clients!.create({ storeId: store, scopes });
  const res = await fetch(`${s.base}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.id, client_secret: secret }),
  });
  return { id: client.id, token: ((await res.json()) as { access_token: string }).access_token };
}

const reasonOf = (lines: Line[]): string | undefined => lines.at(-1)?.error?.details[0]?.reason;

describe('live streams and their credential', () => {
  it("attack: a revoked client's Watch stream ends with a reason", async () => {
    const c = await clientToken(['read:changes']);
    const w = await watch(bearer(c.token));
    expect(w.status).toBe(200);
    const done = w.lines();
    await s.auth.clients!.revoke(c.id);
    const lines = await done;
    expect(lines[0]?.result).toBeDefined();
    expect(reasonOf(lines)).toBe('unauthorized_principal');
  });

  it("attack: a revoked client's tuple export ends with a reason, not at its last tuple", async () => {
    const admin = bearer(await s.mint('*', ALL_SCOPES));
    // More than loopback's socket buffers hold, so the export is still running when the client goes.
    for (let chunk = 0; chunk < 3; chunk++) {
      const tuple_keys = Array.from({ length: 50_000 }, (_, i) => ({
        user: 'user:anne',
        relation: 'viewer',
        object: `doc:${chunk}_${i}`,
      }));
      const r = await call(s.base, 'POST', `/stores/${store}/tuples/import`, { tuple_keys }, admin);
      expect(r.status).toBe(200);
    }
    const c = await clientToken(['read:tuples']);
    const r = await fetch(`${s.base}/stores/${store}/tuples/export`, { headers: bearer(c.token) });
    expect(r.status).toBe(200);
    const reader = (r.body as ReadableStream<Uint8Array>).getReader();
    const chunks: Uint8Array[] = [];
    const first = await reader.read(); // the stream is running; the rest waits unread
    if (first.value) chunks.push(first.value);
    await s.auth.clients!.revoke(c.id);
    for (let next = await reader.read(); !next.done; next = await reader.read()) chunks.push(next.value);
    const lines = Buffer.concat(chunks)
      .toString('utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line);
    expect(lines[0]?.result).toBeDefined();
    expect(lines.length).toBeLessThan(150_000);
    expect(reasonOf(lines)).toBe('unauthorized_principal');
  });

  it('attack: a Watch stream ends when the token that opened it expires', async () => {
    const token = await s.mint(store, ['read:changes'], { exp: Math.floor(Date.now() / 1000) + 1 });
    const w = await watch(bearer(token));
    expect(w.status).toBe(200);
    expect(reasonOf(await w.lines())).toBe('invalid_claims');
  });
});

describe('stream caps and lifetime', () => {
  it('attack: a client cannot open more live streams than its cap, nor the server more than its total', async () => {
    const a = await s.mint(store, ['read:changes']);
    const b = (await clientToken(['read:changes'])).token;
    const first = await watch(bearer(a));
    const second = await watch(bearer(a));
    expect([first.status, second.status]).toEqual([200, 200]);
    const third = await watch(bearer(a));
    expect({ status: third.status, reason: reasonOf(await third.lines()) }).toEqual({
      status: 429,
      reason: 'stream_limit_exceeded',
    });
    const other = await watch(bearer(b)); // another client: its own cap, the server's third stream
    expect(other.status).toBe(200);
    const fourth = await watch(bearer(b));
    expect({ status: fourth.status, reason: reasonOf(await fourth.lines()) }).toEqual({
      status: 429,
      reason: 'stream_limit_exceeded',
    });
    for (const w of [first, second, other]) w.abort();
  });

  it('attack: a Watch stream that never ends meets its lifetime limit', async () => {
    const short = await startAuthServer({}, { liveStreams: { maxLifetimeMs: 200, recheckMs: 20 } });
    try {
      const admin = bearer(await short.mint('*', ALL_SCOPES));
      const id = (await call(short.base, 'POST', '/stores', { name: 'life' }, admin)).json!.id as string;
      const w = await watch(admin, short.base, id);
      expect(w.status).toBe(200);
      expect(reasonOf(await w.lines())).toBe('deadline_exceeded');
    } finally {
      await short.close();
    }
  });
});
