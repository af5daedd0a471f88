// vitest globalSetup: one PostgreSQL server per test run (see ./postgres-server.ts), its URL
// handed to the test files with `inject('latchPostgresUrl')`. A server that cannot be had never
// fails the setup (that would end the run with no results): its cause is handed on, and the
// PostgreSQL test files fail with it under CI=true, or report it and skip elsewhere
// (test/support/postgres.ts).

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
    project.provide('latchPostgresUrl', '');
    project.provide('latchPostgresError', err instanceof Error ? err.message : String(err));
  }
}

export async function teardown(): Promise<void> {
  await server?.stop();
  server = undefined;
}
