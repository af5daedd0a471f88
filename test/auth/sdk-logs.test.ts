// The official @openfga/sdk with ClientCredentials against latch's built-in issuer, end to end,
// including a refresh after the (2 s) token expired; then the store log of those calls, and a
// grep of every log line and every stored byte for the client secret and the tokens.

import { CredentialsMethod, OpenFgaClient } from '@openfga/sdk';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RawReply, TokenRequest } from '../../src/api/auth/token-endpoint.js';
import { ALL_SCOPES, bearer, call, MODEL, startAuthServer, type AuthServer } from './fixtures.js';

let s: AuthServer;
let dir: string;
let store = '';
let model = '';
let clientId = '';
let secret = '';
const tokens: string[] = [];
const output: string[] = [];
const originals = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };

function capture(stream: NodeJS.WriteStream, original: typeof process.stdout.write): void {
  stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    output.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return (original as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
}

async function files(d: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(d, { withFileTypes: true })) {
    const p = join(d, e.name);
    if (e.isDirectory()) out.push(...(await files(p)));
    else out.push(p);
  }
  return out;
}

beforeAll(async () => {
  capture(process.stdout, originals.out);
  capture(process.stderr, originals.err);
  dir = await mkdtemp(join(tmpdir(), 'latch-auth-sdk-'));
  s = await startAuthServer({ tokenTtlSeconds: 2, clockToleranceSeconds: 0 }, { datastore: 'leveldb', dataDir: dir });
  // Keep every token the issuer hands out, to grep for them afterwards.
  const issue = s.auth.issuer.issueToken.bind(s.auth.issuer);
  s.auth.issuer.issueToken = async (req: TokenRequest): Promise<RawReply> => {
    const r = await issue(req);
    const t = (r.body as { access_token?: string }).access_token;
    if (t) tokens.push(t);
    return r;
  };
  const admin = bearer(await s.mint('*', ALL_SCOPES));
  store = (await call(s.base, 'POST', '/stores', { name: 'sdk-store' }, admin)).json!.id as string;
  model = (await call(s.base, 'POST', `/stores/${store}/authorization-models`, MODEL, admin)).json!
    .authorization_model_id as string;
  const created = await s.auth.clients!.create({
    storeId: store,
    scopes: ['check:tuples', 'write:tuples', 'read:tuples'],
  });
  clientId = created.client.id;
  secret = created.secret;
});

afterAll(async () => {
  vi.useRealTimers();
  process.stdout.write = originals.out;
  process.stderr.write = originals.err;
  await s.close();
  await rm(dir, { recursive: true, force: true });
});

describe('official SDK, ClientCredentials, built-in issuer', () => {
  it('writes, checks, and keeps working after its token expired (refresh)', async () => {
    const fga = new OpenFgaClient({
      apiUrl: s.base,
      storeId: store,
      authorizationModelId: model,
      credentials: {
        method: CredentialsMethod.ClientCredentials,
        config: { apiTokenIssuer: s.base, apiAudience: s.audience, clientId, clientSecret: secret },
      },
    });
    await fga.write({ writes: [{ user: 'user:bob', relation: 'viewer', object: 'doc:2' }] });
    expect((await fga.check({ user: 'user:bob', relation: 'viewer', object: 'doc:2' })).allowed).toBe(true);
    const first = tokens[0] as string;
    const issued = s.auth.issuer.issued;
    // The 2 s token expires by moving the clock 2.6 s ahead instead of waiting. Date alone is faked
    // and keeps running from there (timers and I/O stay real) for the rest of this file, so the
    // store logs written from now on and their search agree on the time; afterAll restores it.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 2600, shouldAdvanceTime: true });
    await expiredThenRefreshed(fga, first, issued);
    // Two failed calls: a bad relation (400) and an operation outside the client's scopes (403).
    await expect(fga.check({ user: 'user:bob', relation: 'nope', object: 'doc:2' })).rejects.toThrow();
    await expect(fga.expand({ relation: 'viewer', object: 'doc:2' })).rejects.toThrow();
  }, 30_000);

  async function expiredThenRefreshed(fga: OpenFgaClient, first: string, issued: number): Promise<void> {
    const expired = await call(
      s.base,
      'POST',
      `/stores/${store}/check`,
      { tuple_key: { user: 'user:bob', relation: 'viewer', object: 'doc:2' } },
      bearer(first),
    );
    expect({ status: expired.status, code: expired.json?.code }).toEqual({ status: 401, code: 'invalid_claims' });
    expect((await fga.check({ user: 'user:bob', relation: 'viewer', object: 'doc:2' })).allowed).toBe(true);
    expect(s.auth.issuer.issued).toBeGreaterThan(issued);
  }

  it('a wrong secret gets 401 invalid_client from the token endpoint', async () => {
    const r = await call(
      s.base,
      'POST',
      '/oauth/token',
      `grant_type=client_credentials&client_id=${clientId}&client_secret=wrong&audience=${encodeURIComponent(s.audience)}`,
      { 'content-type': 'application/x-www-form-urlencoded' },
    );
    expect({ status: r.status, error: r.json?.error }).toEqual({ status: 401, error: 'invalid_client' });
    const jwks = await call(s.base, 'GET', '/.well-known/jwks.json');
    expect((jwks.json!.keys as { kty: string; d?: string }[]).map((k) => [k.kty, k.d])).toEqual([['EC', undefined]]);
  });
});

describe('store logs of those calls', () => {
  it('the write, the checks and the failed calls appear with the right fields', async () => {
    const search = bearer(await s.mint(store, ['search:logs']));
    await s.auth.logs.drainFailures(); // the expired token's 401 is tallied per window, not logged at once
    const r = await call(s.base, 'GET', `/stores/${store}/logs`, undefined, search);
    expect(r.status).toBe(200);
    const logs = r.json!.logs as {
      client_id: string;
      request: Record<string, unknown>;
      response: { status: number; error_code: string; latency_ms: number };
    }[];
    const tk = { user: 'user:bob', relation: 'viewer', object: 'doc:2' };
    const write = logs.find((l) => l.request.operation === 'Write');
    expect(write).toMatchObject({
      client_id: clientId,
      store_id: store,
      request: { authorization_model_id: model, tuple_keys: { writes: [tk], deletes: [] } },
      response: { status: 200, error_code: '' },
    });
    const checks = logs.filter((l) => l.request.operation === 'Check');
    expect(checks.map((l) => [l.response.status, l.response.error_code])).toEqual([
      [200, ''],
      [401, 'invalid_claims'],
      [200, ''],
      [400, 'validation_error'],
    ]);
    expect(checks[0]).toMatchObject({ request: { tuple_key: tk, authorization_model_id: model } });
    expect(checks[1]).toMatchObject({
      client_id: '',
      request: { filter: { unauthenticated_calls: '1', source: '127.0.0.1' } },
    }); // refused before a principal existed
    const expand = logs.find((l) => l.request.operation === 'Expand');
    expect(expand).toMatchObject({
      client_id: clientId,
      response: { status: 403, error_code: 'insufficient_permissions' },
    });
    expect(logs.every((l) => typeof l.response.latency_ms === 'number')).toBe(true);
    const failed = await call(
      s.base,
      'GET',
      `/stores/${store}/logs?query=${encodeURIComponent(`response.status:403 AND client_id:${clientId}`)}`,
      undefined,
      search,
    );
    expect((failed.json!.logs as { request: { operation: string } }[]).map((l) => l.request.operation)).toEqual([
      'Expand',
    ]);
  });

  it('the secret and the tokens appear in no log line and no stored byte', async () => {
    await s.auth.logs.flush();
    expect(tokens.length).toBeGreaterThanOrEqual(2);
    const needles = [secret, ...tokens, ...tokens.map((t) => t.split('.')[2] as string)];
    const lines = output.join('');
    const stored = await Promise.all((await files(dir)).map((f) => readFile(f)));
    const search = await s.auth.logs.search(store, { startTime: new Date(Date.now() - 3_600_000).toISOString() });
    expect(search.logs.length).toBeGreaterThan(0);
    for (const n of needles) {
      expect(lines.includes(n)).toBe(false);
      expect(JSON.stringify(search).includes(n)).toBe(false);
      for (const bytes of stored) expect(bytes.includes(n)).toBe(false);
    }
    expect(stored.length).toBeGreaterThan(0);
  });
});
