// Per-file PostgreSQL databases for tests: each test file gets a fresh database on the run's
// server (test/support/postgres-setup.ts) and drops it at the end.

import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, inject } from 'vitest';

/** The run's server URL; throws (so the test fails) under CI=true when there is none. */
export function postgresUrl(): string | undefined {
  const url = inject('latchPostgresUrl');
  if (url) return url;
  const why = inject('latchPostgresError') || 'no PostgreSQL server';
  if (process.env.CI === 'true') throw new Error(`PostgreSQL is required under CI=true: ${why}`);
  process.stderr.write(`PostgreSQL suites skipped: ${why}\n`);
  return undefined;
}

/** Whether the PostgreSQL suites can run (false only outside CI, with the reason printed). */
export const hasPostgres = (): boolean => postgresUrl() !== undefined;

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const url = postgresUrl();
  if (!url) throw new Error('no PostgreSQL server');
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

/** A fresh, empty database on the run's server. */
export async function createTestDatabase(prefix = 'latch_test'): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = withDatabase(postgresUrl() ?? '', name);
  return {
    url,
    name,
    drop: () => admin(async (c) => void (await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
  };
}

/**
 * A fresh database for the calling test file: created in its beforeAll, dropped in its afterAll.
 * `run` is hasPostgres() (false only outside CI, and then nothing is created); `url` is read
 * inside tests. Example: `const pgdb = databasePerFile(); describe.runIf(pgdb.run)(…, () =>
 * … openPostgresStorage({ url: pgdb.url }) …)`.
 */
export function databasePerFile(): { readonly run: boolean; readonly url: string } {
  const run = hasPostgres();
  let db: TestDatabase | undefined;
  beforeAll(async () => {
    if (run) db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });
  return {
    run,
    get url(): string {
      if (!db) throw new Error('no test database: read `url` inside a test');
      return db.url;
    },
  };
}
