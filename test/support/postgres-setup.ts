// vitest globalSetup: one PostgreSQL server per test run (see ./postgres-server.ts), its URL
// handed to the test files with `inject('latchPostgresUrl')`. Under CI=true a server that cannot
// be had fails the whole run; elsewhere the reason is handed on and the PostgreSQL suites report
// it as skipped with that reason.

import type { TestProject } from 'vitest/node';
import { startPostgres, type PostgresServer } from './postgres-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    latchPostgresUrl: string;
    latchPostgresError: string;
  }
}

let server: PostgresServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  try {
    server = await startPostgres();
    project.provide('latchPostgresUrl', server.url);
    project.provide('latchPostgresError', '');
  } catch (err) {
    if (process.env.CI === 'true') throw err;
    project.provide('latchPostgresUrl', '');
    project.provide('latchPostgresError', err instanceof Error ? err.message : String(err));
  }
}

export async function teardown(): Promise<void> {
  await server?.stop();
  server = undefined;
}
