// `latch client …` picks its credential and its target as docs/cli.md says: an explicit
// `--api-token` beats client credentials from the environment, and without `--api-url` the
// command works on an auth database only when one is named (`--data-dir`, LATCH_DATA_DIR,
// --postgres-url), instead of creating ./data/auth wherever it runs.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/main.js';
import { latch } from './helpers.js';

const ADMIN = 'admin-key-0123456789abcdef';
let server: RunningServer;
let base: string;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'latch-client-prec-'));
  server = await startServer({
    host: '127.0.0.1',
    port: 0,
    datastore: 'memory',
    auth: {
      mode: 'client-credentials',
      issuer: 'https://latch.test/',
      audience: 'https://latch.test',
      adminKey: ADMIN,
    },
  });
  base = `http://127.0.0.1:${server.port}`;
});

afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const created = async (args: string[], env: Record<string, string> = {}) => {
  const r = await latch(['client', 'create', '--store', '*', '--scopes', 'read:stores', ...args], env);
  expect(r.err).toBe('');
  return JSON.parse(r.out) as { client_id: string; client_secret: string };
};

it('an explicit --api-token beats LATCH_CLIENT_ID/SECRET from the environment', async () => {
  const admin = ['--api-url', base, '--api-token', ADMIN];
  const reader = await created(admin);
  const victim = await created(admin);
  // The environment holds a client without manage:clients: had it won, the server would answer 403.
  const env = {
    LATCH_CLIENT_ID: reader.client_id,
    LATCH_CLIENT_SECRET: reader.client_secret,
    LATCH_API_TOKEN_ISSUER: `${base}/oauth/token`,
    LATCH_API_AUDIENCE: 'https://latch.test/',
  };
  const r = await latch(['client', 'revoke', victim.client_id, ...admin], env);
  expect(r.err).toBe('');
  expect(r.code).toBe(0);
  expect((JSON.parse(r.out) as { revoked_at: string | null }).revoked_at).not.toBeNull();
  // Half a set in the environment does not stand in the way of an explicit token either.
  const half = await latch(['client', 'list', ...admin], { LATCH_CLIENT_ID: reader.client_id });
  expect(half.code).toBe(0);
});

it('explicit client credentials beat LATCH_API_TOKEN from the environment', async () => {
  const admin = ['--api-url', base, '--api-token', ADMIN];
  const reader = await created(admin);
  const flags = [
    ...['--client-id', reader.client_id, '--client-secret', reader.client_secret],
    ...['--api-token-issuer', `${base}/oauth/token`, '--api-audience', 'https://latch.test/'],
  ];
  // The reader may list stores but not clients: its token, not the admin key, must be sent.
  const r = await latch(['client', 'list', '--api-url', base, ...flags], { LATCH_API_TOKEN: ADMIN });
  expect(r.code).toBe(1);
  expect(r.err).toMatch(/ 403 /);
  const stores = await latch(['store', 'list', '--api-url', base, ...flags], {
    LATCH_API_TOKEN: 'wrong-token-000000000',
  });
  expect(stores.err).toBe('');
  expect(stores.code).toBe(0);
});

it('client list without --api-url or a named data directory refuses (exit 2) and creates nothing', async () => {
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    const r = await latch(['client', 'list', '--api-token', ADMIN]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--api-url/);
    expect(r.err).toMatch(/--data-dir/);
    expect(existsSync(join(dir, 'data'))).toBe(false);
    const c = await latch(['client', 'create', '--store', '*', '--scopes', 'read:stores']);
    expect(c.code).toBe(2);
    expect(existsSync(join(dir, 'data'))).toBe(false);
    // Named explicitly, the offline form works.
    expect((await latch(['client', 'list', '--data-dir', join(dir, 'offline')])).code).toBe(0);
  } finally {
    process.chdir(cwd);
  }
});
