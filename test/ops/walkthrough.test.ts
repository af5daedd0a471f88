// docs/deployment.md, "Two replicas on one machine: a walkthrough", run as written: the shell
// blocks of that section are read from the doc and run by bash, with `latch` on PATH (this
// checkout's bin/latch.js over dist/, which `npm test` builds first) and only the ports swapped
// for free ones. The first block's three
// long-running commands start one after the other (each once it is ready); the second block's
// last line, a Check on node 2 of a tuple written through node 1, must print allowed: true.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readlinkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { freePort } from '../support/postgres-server.js';

const root = join(import.meta.dirname, '../..');

/** The sh blocks of one section of a doc. */
function blocksOf(doc: string, heading: string): string[] {
  const text = readFileSync(join(root, doc), 'utf8');
  const start = text.indexOf(`### ${heading}`);
  const section = text.slice(start, text.indexOf('\n#', start + 4));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
}

const work = mkdtempSync(join(tmpdir(), 'latch-walkthrough-'));
const bin = join(work, 'bin');
const running: ChildProcess[] = [];

afterAll(async () => {
  for (const p of running.reverse()) {
    if (p.exitCode !== null || p.signalCode !== null) continue;
    const gone = new Promise((resolve) => p.once('exit', resolve));
    p.kill('SIGINT');
    await gone;
  }
  // As root the cluster may live under the temp directory, linked from ./pgdata (docs/cli.md).
  const link = join(work, 'pgdata');
  if (lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink())
    rmSync(dirname(readlinkSync(link)), { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

/** Starts one command line with bash and resolves once `ready` matches its output. */
function start(line: string, env: NodeJS.ProcessEnv, ready: RegExp): Promise<string> {
  const p = spawn('bash', ['-c', `exec ${line}`], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(p);
  let seen = '';
  return new Promise((resolve, reject) => {
    const look = (b: Buffer): void => {
      seen += b.toString();
      const m = ready.exec(seen);
      if (m) resolve(m[0]);
    };
    p.stdout.on('data', look);
    p.stderr.on('data', look);
    p.once('exit', (code) =>
      reject(new Error(`'${line}' exited (${code}) before it was ready:\n${seen.slice(-3000)}`)),
    );
  });
}

test('the two-replica walkthrough with latch dev-postgres works as written', async () => {
  const [servers, client] = blocksOf('docs/deployment.md', 'Two replicas on one machine: a walkthrough');
  expect(servers).toBeDefined();
  expect(client).toBeDefined();
  // `latch` on PATH: this checkout's installed entry point.
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'latch'), `#!/bin/sh\nexec "${process.execPath}" "${join(root, 'bin/latch.js')}" "$@"\n`, {
    mode: 0o755,
  });
  const ports = new Map([
    ['5433', String(await freePort())],
    ['8081', String(await freePort())],
    ['8082', String(await freePort())],
  ]);
  const swap = (text: string): string => text.replace(/\b(5433|8081|8082)\b/g, (p) => ports.get(p) as string);
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}` };
  delete env.LATCH_API_URL;
  delete env.LATCH_STORE_ID;
  const lines = swap(servers as string)
    .trim()
    .split('\n');
  expect(lines).toHaveLength(3);
  await start(lines[0] as string, env, /postgres:\/\/\S+/);
  await start(lines[1] as string, env, /"msg":"latch listening"/);
  await start(lines[2] as string, env, /"msg":"latch listening"/);
  const r = spawnSync('bash', ['-e', '-c', swap(client as string)], { cwd: work, env, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const out = r.stdout.trim();
  expect(JSON.parse(out.slice(out.lastIndexOf('{')))).toEqual({ allowed: true });
});
