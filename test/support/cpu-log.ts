// vitest setup file: with LATCH_TEST_CPU_LOG=<file>, each test file appends one line to <file>:
// its path, the CPU seconds it took (user + system of the worker process, plus the children it
// started and reaped: latch processes, npm, tar), its wall seconds and the 1-minute load average
// at its end. Without the variable it does nothing. `npm test` is CPU-bound on two cores, so CPU
// per file is the figure that says where the run's time goes, at any load (the wall times vitest
// prints grow with the load). Not counted: the run's shared servers (PostgreSQL, Chromium), which
// the global setups start. Linux only (/proc); elsewhere it writes nothing.
//
// Example: LATCH_TEST_CPU_LOG=/tmp/cpu.tsv npx vitest run, then
// sort -t$'\t' -k2 -rn /tmp/cpu.tsv | head -20
//
// With LATCH_TEST_CPU_PROF=<dir>, each test file also writes a V8 CPU profile of its worker's main
// thread (import and collection included) to <dir>/<path with / as _>.cpuprofile, for Chrome's
// profiler or `node scripts/cpu-profile-top.mjs <file>`. (`--execArgv=--cpu-prof` writes nothing:
// vitest ends its workers before Node writes the profile.)

import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { loadavg } from 'node:os';
import path from 'node:path';
import { afterAll, expect } from 'vitest';

const out = process.env.LATCH_TEST_CPU_LOG;
const profDir = process.env.LATCH_TEST_CPU_PROF;
/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on Linux). */
const HZ = 100;

/** CPU seconds of this process and its reaped children, from /proc/self/stat; undefined without /proc. */
function cpuSeconds(): number | undefined {
  let stat: string;
  try {
    stat = readFileSync('/proc/self/stat', 'utf8');
  } catch {
    return undefined;
  }
  // Fields after the command name (which may hold spaces), from field 3 (state): utime is 14.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = [11, 12, 13, 14].reduce((sum, i) => sum + Number(f[i]), 0);
  return ticks / HZ;
}

if (out) {
  // From the end of the worker's previous file (or from here, before the file is imported), so
  // that a file's import and collection count as its own.
  let cpu0 = cpuSeconds();
  let wall0 = performance.now();
  afterAll(() => {
    const cpu = cpuSeconds();
    const file = expect.getState().testPath;
    if (cpu === undefined || cpu0 === undefined || file === undefined) return;
    const rel = path.relative(process.cwd(), file).split(path.sep).join('/');
    const wall = (performance.now() - wall0) / 1000;
    appendFileSync(out, `${rel}\t${(cpu - cpu0).toFixed(2)}\t${wall.toFixed(1)}\t${(loadavg()[0] ?? 0).toFixed(1)}\n`);
    cpu0 = cpuSeconds();
    wall0 = performance.now();
  });
}

if (profDir) {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object): Promise<unknown> =>
    new Promise((resolve, reject) => {
      session.post(method, params, (err, result) => (err ? reject(err) : resolve(result)));
    });
  // Started here, before the test file is imported; stopped and written after its last test.
  const started = post('Profiler.enable').then(() => post('Profiler.start'));
  afterAll(async () => {
    await started;
    const { profile } = (await post('Profiler.stop')) as { profile: object };
    const file = expect.getState().testPath ?? 'unknown';
    const name = path.relative(process.cwd(), file).split(path.sep).join('_');
    mkdirSync(profDir, { recursive: true });
    writeFileSync(path.join(profDir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  });
}
