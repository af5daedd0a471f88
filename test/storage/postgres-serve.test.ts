// latch serve on PostgreSQL, end to end over HTTP: two nodes on one database share the
// continuation-token key and the authentication state; ReadChanges tokens survive a restart
// (LevelDB too); startup faults give one clear line; a database that goes away makes requests
// that need it answer 503 `unavailable` while Checks keep answering from the index, and the
// pool reconnects by itself once it is back.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuthConfig } from '../../src/api/auth/index.js';
import { SCOPES } from '../../src/api/auth/operations.js';
import { startServer, type RunningServer, type ServerOptions } from '../../src/main.js';
import { openPostgresStorage, SCHEMA_VERSION } from '../../src/storage/postgres/index.js';
import type { StorageEvent } from '../../src/storage/types.js';
import { call, MODEL } from '../http/helpers.js';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/postgres.js';

const run = hasPostgres();
const ISSUER = 'https://latch.test';
const AUTH: AuthConfig = { mode: 'client-credentials', issuer: ISSUER, audience: ISSUER };

type Node = RunningServer & { base: string };

async function node(options: ServerOptions): Promise<Node> {
  const s = await startServer({ host: '127.0.0.1', port: 0, ...options });
  return Object.assign(s, { base: `http://127.0.0.1:${s.port}` });
}

const pgNode = (url: string, extra: Partial<ServerOptions> = {}): Promise<Node> =>
  node({ datastore: 'postgres', postgres: { url, poolSize: 3, startTimeoutMs: 0 }, ...extra });

async function seed(base: string, headers: Record<string, string> = {}): Promise<string> {
  const store = ((await call(base, 'POST', '/stores', { name: 'pg-test' }, headers)).json as { id: string }).id;
  expect((await call(base, 'POST', `/stores/${store}/authorization-models`, MODEL, headers)).status).toBe(201);
  for (let i = 0; i < 3; i++) {
    const w = await call(
      base,
      'POST',
      `/stores/${store}/write`,
      { writes: { tuple_keys: [{ user: `user:u${i}`, relation: 'owner', object: `doc:${i}` }] } },
      headers,
    );
    expect(w.status).toBe(200);
  }
  return store;
}

/** The first ReadChanges page of one change and its token. */
async function firstPage(base: string, store: string, headers: Record<string, string> = {}): Promise<string> {
  const r = await call(base, 'GET', `/stores/${store}/changes?page_size=1`, undefined, headers);
  expect(r.status).toBe(200);
  return (r.json as { continuation_token: string }).continuation_token;
}

const users = (json: unknown): string[] =>
  (json as { changes: { tuple_key: { user: string } }[] }).changes.map((c) => c.tuple_key.user);

describe('ReadChanges tokens across a restart (LevelDB)', () => {
  it('a token made before a restart pages on after it, without --token-secret', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'latch-token-'));
    try {
      const a = await node({ datastore: 'leveldb', dataDir: dir });
      const store = await seed(a.base);
      const token = await firstPage(a.base, store);
      await a.close();
      const b = await node({ datastore: 'leveldb', dataDir: dir });
      const next = await call(b.base, 'GET', `/stores/${store}/changes?page_size=5&continuation_token=${token}`);
      expect(next.status).toBe(200);
      expect(users(next.json)).toEqual(['user:u1', 'user:u2']);
      await b.close();
      const c = await node({
        datastore: 'leveldb',
        dataDir: dir,
        tokenSecret: 'an explicit secret overrides the stored key',
      });
      const refused = await call(c.base, 'GET', `/stores/${store}/changes?page_size=5&continuation_token=${token}`);
      expect([refused.status, (refused.json as { code: string }).code]).toEqual([400, 'invalid_continuation_token']);
      await c.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe.runIf(run)('latch serve on PostgreSQL', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('two nodes share the token key and the clients and keys of the built-in issuer', async () => {
    const a = await pgNode(db.url, { auth: AUTH });
    const b = await pgNode(db.url, { auth: AUTH });
    try {
      const { client, secret } = await a.auth.clients!.create({ storeId: '*', scopes: [...SCOPES], name: 'shared' });
      // The client made through A gets a token from B (B reads the table on a miss).
      const form = new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: client.id,
        client_secret: secret,
        audience: `${ISSUER}/`,
      }).toString();
      const issued = await call(b.base, 'POST', '/oauth/token', form, {
        'content-type': 'application/x-www-form-urlencoded',
      });
      expect(issued.status).toBe(200);
      const bearer = { authorization: `Bearer ${(issued.json as { access_token: string }).access_token}` };
      // B's token works on A (A verifies every stored key), and A's ReadChanges token pages on B.
      const store = await seed(a.base, bearer);
      const token = await firstPage(a.base, store, bearer);
      const next = await call(
        b.base,
        'GET',
        `/stores/${store}/changes?page_size=5&continuation_token=${token}`,
        undefined,
        bearer,
      );
      expect(next.status).toBe(200);
      expect(users(next.json)).toEqual(['user:u1', 'user:u2']);
      // A revocation through A reaches B at its next refresh.
      await a.auth.clients!.revoke(client.id);
      await b.auth.clients!.reload();
      const refused = await call(b.base, 'GET', `/stores/${store}/changes`, undefined, bearer);
      expect([refused.status, (refused.json as { code: string }).code]).toEqual([403, 'unauthorized_principal']);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('startup faults: one clear line each; unreachable is retried with backoff, wrong credentials are not', async () => {
    const u = new URL(db.url);
    const refusedPort = new URL(db.url);
    refusedPort.port = '1';
    await expect(openPostgresStorage({ url: refusedPort.toString(), startTimeoutMs: 0 })).rejects.toThrow(
      new RegExp(`^PostgreSQL at postgres://postgres@127\\.0\\.0\\.1:1${u.pathname} is unreachable: `),
    );
    const wrong = new URL(db.url);
    wrong.password = 'wrong';
    const started = Date.now();
    await expect(openPostgresStorage({ url: wrong.toString(), startTimeoutMs: 60_000 })).rejects.toThrow(
      /: wrong credentials \(password authentication failed for user "postgres"\)$/,
    );
    expect(Date.now() - started).toBeLessThan(30_000); // not retried
    await expect(openPostgresStorage({ url: 'not a url' })).rejects.toThrow(
      '--postgres-url is not a valid URL (expected postgres://user:password@host:port/database)',
    );
    const retries: string[] = [];
    await expect(
      openPostgresStorage({ url: refusedPort.toString(), startTimeoutMs: 600, onError: (m) => retries.push(m) }),
    ).rejects.toThrow(/is unreachable/);
    expect(retries.length).toBeGreaterThanOrEqual(1);
    expect(retries[0]).toMatch(/is unreachable: .*; retrying in 250 ms$/);
    expect(retries.every((m) => /is unreachable: .*; retrying in \d+ ms$/.test(m))).toBe(true);
    expect(SCHEMA_VERSION).toBeGreaterThan(0);
  });
});

describe.runIf(run)('PostgreSQL going away under a serving node', () => {
  let pg: PostgresServer;
  let n: Node | undefined;
  beforeAll(async () => {
    // A server of its own, embedded even when LATCH_TEST_POSTGRES_URL is set: this test stops it.
    pg = await startPostgres({});
  });
  afterAll(async () => {
    await n?.close();
    await pg.stop();
  });

  it('answers 503 unavailable for what needs the database, keeps Checks, reconnects by itself', async () => {
    n = await pgNode(pg.url);
    const store = await seed(n.base);
    const check = { tuple_key: { user: 'user:u1', relation: 'viewer', object: 'doc:1' } };
    expect((await call(n.base, 'POST', `/stores/${store}/check`, check)).json).toMatchObject({ allowed: true });

    const dbUrl = pg.url;
    let lost: () => void = () => {};
    const listenerLost = new Promise<void>((resolve) => (lost = resolve));
    const watcher = await openPostgresStorage({
      url: dbUrl,
      poolSize: 1,
      onError: (m) => m.includes('event listener lost its connection') && lost(),
    });
    await watcher.listening();
    await pg.pause();
    const write = await call(n.base, 'POST', `/stores/${store}/write`, {
      writes: { tuple_keys: [{ user: 'user:x', relation: 'owner', object: 'doc:x' }] },
    });
    expect([write.status, (write.json as { code: string }).code]).toEqual([503, 'unavailable']);
    const read = await call(n.base, 'POST', `/stores/${store}/read`, {});
    expect([read.status, (read.json as { code: string }).code]).toEqual([503, 'unavailable']);
    const created = await call(n.base, 'POST', '/stores', { name: 'later' });
    expect([created.status, (created.json as { code: string }).code]).toEqual([503, 'unavailable']);
    const stillChecks = await call(n.base, 'POST', `/stores/${store}/check`, check);
    expect([stillChecks.status, stillChecks.json]).toMatchObject([200, { allowed: true }]);

    await pg.resume();
    // The listener of a storage object over the same database reconnects by itself too.
    await listenerLost;
    await watcher.listening();
    const event = new Promise<StorageEvent>((resolve) => watcher.subscribe(resolve));
    const other = await openPostgresStorage({ url: dbUrl, poolSize: 1 });
    const foreign = (await other.createStore('after-outage')).id;
    expect(await event).toEqual({ kind: 'store', storeId: foreign, deleted: false });
    await Promise.all([other.close(), watcher.close()]);
    const again = await call(n.base, 'POST', `/stores/${store}/write`, {
      writes: { tuple_keys: [{ user: 'user:x', relation: 'owner', object: 'doc:x' }] },
    });
    expect(again.status).toBe(200);
    const tuples = await call(n.base, 'POST', `/stores/${store}/read`, {});
    expect((tuples.json as { tuples: unknown[] }).tuples).toHaveLength(4);
    expect(
      (
        await call(n.base, 'POST', `/stores/${store}/check`, {
          tuple_key: { user: 'user:x', relation: 'viewer', object: 'doc:x' },
        })
      ).json,
    ).toMatchObject({ allowed: true });
  });
});
