// The command line against a server in client-credentials mode: a client registered with
// `latch client create` gets a token from the server's /oauth/token (form-encoded grant) and
// every command works with it; without credentials the server answers 401 and the command
// exits 1 with that message.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/main.js';
import { latch } from './helpers.js';

const ISSUER = 'https://latch.test/';
const AUDIENCE = 'https://latch.test';
const ALL_SCOPES =
  'check:tuples,create:stores,delete:stores,expand:tuples,list:objects,list:users,read:assertions,read:authorization_models,read:changes,read:stores,read:tuples,write:assertions,write:authorization_models,write:tuples';

let dir: string;
let server: RunningServer;
let env: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'latch-creds-'));
  const created = await latch(['client', 'create', '--store', '*', '--scopes', ALL_SCOPES, '--data-dir', dir]);
  expect(created.code).toBe(0);
  const client = JSON.parse(created.out) as { client_id: string; client_secret: string };
  server = await startServer({
    host: '127.0.0.1',
    port: 0,
    datastore: 'leveldb',
    dataDir: dir,
    auth: { mode: 'client-credentials', issuer: ISSUER, audience: AUDIENCE },
  });
  const base = `http://127.0.0.1:${server.port}`;
  env = {
    LATCH_API_URL: base,
    LATCH_CLIENT_ID: client.client_id,
    LATCH_CLIENT_SECRET: client.client_secret,
    LATCH_API_TOKEN_ISSUER: `${base}/oauth/token`,
    LATCH_API_AUDIENCE: `${AUDIENCE}/`,
  };
});

afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('client credentials', () => {
  it('store import, query and latch test --api-url work with a fetched token', async () => {
    const imported = await latch(['store', 'import', '--file', 'test/fixtures/multi-tenant-rbac.fga.yaml'], env);
    expect(imported.err).toBe('');
    expect(imported.code).toBe(0);
    const storeId = (JSON.parse(imported.out) as { store: { id: string } }).store.id;
    const check = await latch(
      ['query', 'check', '--store-id', storeId, 'user:alice', 'can_approve', 'invoice:a1'],
      env,
    );
    expect(JSON.parse(check.out)).toEqual({ allowed: true });
    const tests = await latch(
      ['test', 'test/fixtures/conditions.fga.yaml', '--api-url', env.LATCH_API_URL as string],
      env,
    );
    expect(tests.out).toMatch(/^PASS: /m);
    expect(tests.code).toBe(0);
  });

  it('without credentials the server refuses and the command exits 1', async () => {
    const r = await latch(['store', 'list'], { LATCH_API_URL: env.LATCH_API_URL });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/latch store list: 401 /);
  });

  it('a wrong secret fails at the token endpoint', async () => {
    const r = await latch(['store', 'list'], { ...env, LATCH_CLIENT_SECRET: 'not-the-secret' });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/latch store list: 401 invalid_client/);
  });

  it('half a set of client credentials is a usage error', async () => {
    const r = await latch(['store', 'list', '--client-id', 'x'], { LATCH_API_URL: env.LATCH_API_URL });
    expect(r.code).toBe(2);
    expect(r.err).toContain('client credentials need --client-id, --client-secret and --api-token-issuer together');
  });
});
