// What `latch serve` says and does at start-up, through the installed entry point bin/latch.js:
// the listening line names the uWS build that loaded (and its header limit) and the playground's
// URL; the server runs with the V8 flags and environment of `npm start` however it was started; a refused
// non-loopback bind names the flag that forces it; expected 503s are warnings; the schema
// messages in docs/configuration.md are the ones latch prints.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, test, vi } from 'vitest';
import { SERVE_ENV, SERVE_NODE_FLAGS } from '../../src/cli/node-flags.js';
import { AppError } from '../../src/errors.js';
import { logFailure } from '../../src/http/log.js';
import { configureLogging } from '../../src/log.js';
import {
  SCHEMA_VERSION,
  SchemaPreReleaseError,
  SchemaTooNewError,
  SchemaTooOldError,
} from '../../src/storage/postgres/migrations.js';

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'bin/latch.js');

afterEach(() => vi.restoreAllMocks());

test('bin/latch.js serve: the listening line names the uWS build and the playground, and the server has the V8 flags', async () => {
  const p = spawn(process.execPath, [bin, 'serve', '--datastore', 'memory', '--port', '0'], {
    cwd: root,
    env: { ...process.env, LATCH_NO_REEXEC: '', MALLOC_ARENA_MAX: undefined },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => p.once('exit', resolve));
  let err = '';
  const line = await new Promise<Record<string, unknown>>((resolve, reject) => {
    p.stderr.on('data', (b: Buffer) => {
      err += b.toString();
      const m = /^\{.*"msg":"latch listening".*\}$/m.exec(err);
      if (m) resolve(JSON.parse(m[0]) as Record<string, unknown>);
    });
    void exited.then((code) => reject(new Error(`exited ${code}: ${err}`)));
  });
  expect(line.uws).toMatch(/^(@btc-vision\/uwebsockets\.js|@trufflesuite\/uws-js-unofficial|uWebSockets\.js) \d/);
  expect(line.uws_header_limit).toEqual(expect.any(String));
  expect(line.playground).toBe(`http://127.0.0.1:${line.port as number}/playground/`);
  expect((await fetch(line.playground as string)).status).toBe(200);
  // The server process (a child of bin/latch.js, which lacked the flags) runs with them.
  expect(line.pid).not.toBe(p.pid);
  const cmdline = readFileSync(`/proc/${line.pid as number}/cmdline`, 'utf8').split('\0');
  for (const flag of SERVE_NODE_FLAGS) expect(cmdline).toContain(flag);
  // And with the environment only the C library reads at start (MALLOC_ARENA_MAX).
  const environ = readFileSync(`/proc/${line.pid as number}/environ`, 'utf8').split('\0');
  for (const [k, v] of Object.entries(SERVE_ENV)) expect(environ).toContain(`${k}=${v}`);
  p.kill('SIGTERM'); // forwarded to the server, which shuts down gracefully
  expect(await exited).toBe(0);
});

test('auth mode none on a public address is refused, naming the flag that forces it', () => {
  const r = spawnSync(process.execPath, [bin, 'serve', '--host', '0.0.0.0', '--datastore', 'memory'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, LATCH_NO_REEXEC: '1' },
  });
  expect(r.status).toBe(2);
  expect(r.stderr).toContain('--auth-allow-non-loopback');
});

test('an expected 503 (datastore unavailable) is logged as a warning, a 500 as an error', () => {
  configureLogging({ level: 'info', format: 'json' });
  const lines: string[] = [];
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  logFailure('r1', 'Write', new AppError('unavailable', 'the datastore is unavailable'));
  logFailure('r2', 'Write', new AppError('internal_error', 'boom'));
  const levels = lines
    .join('')
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { level: string }).level);
  expect(levels).toEqual(['warn', 'error']);
});

test('docs/configuration.md shows the schema messages this latch prints', () => {
  const doc = readFileSync(join(root, 'docs/configuration.md'), 'utf8');
  expect(doc).toContain(new SchemaTooNewError(SCHEMA_VERSION + 1).message);
  expect(doc).toContain(new SchemaTooOldError(0).message);
  expect(doc).toContain(new SchemaPreReleaseError().message);
});
