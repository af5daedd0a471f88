// vitest globalSetup: one PostgreSQL server per test run (see ./postgres-server.ts), its URL
// handed to the test files with `inject('latchPostgresUrl')`. Several projects list this setup
// (vitest.config.ts): the first to set up starts the server, the others share it, and the last
// to tear down stops it. A server that cannot be had never fails the setup (that would end the
// run with no results): its cause is handed on, and the PostgreSQL test files fail with it under
// CI=true, or report it and skip elsewhere (test/support/postgres.ts).

import type { TestProject } from 'vitest/node';
import { startPostgres, type PostgresServer } from './postgres-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    latchPostgresUrl: string;
    latchPostgresError: string;
  }
}

/**
 * The run's server, shared by the projects that set it up. Kept on globalThis, not in a module
 * variable: each project may load its own copy of this module, all in vitest's main process.
 */
interface Shared {
  started: Promise<PostgresServer>;
  users: number;
}
const KEY = Symbol.for('latch.test.postgres');
const registry = globalThis as unknown as Record<symbol, Shared | undefined>;

export async function setup(project: TestProject): Promise<void> {
  let shared = registry[KEY];
  if (!shared) {
    shared = { started: startPostgres(), users: 0 };
    registry[KEY] = shared;
  }
  shared.users++;
  try {
    const server = await shared.started;
    project.provide('latchPostgresUrl', server.url);
    project.provide('latchPostgresError', '');
  } catch (err) {
    project.provide('latchPostgresUrl', '');
    project.provide('latchPostgresError', err instanceof Error ? err.message : String(err));
  }
}

export async function teardown(): Promise<void> {
  const shared = registry[KEY];
  if (!shared || --shared.users > 0) return;
  registry[KEY] = undefined;
  await shared.started.then(
    (server) => server.stop(),
    () => undefined,
  );
}
