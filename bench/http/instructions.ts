// User-space instructions per JSON Check, counted by valgrind's callgrind: the bare uWS handler
// of bench/http/bare.ts, latch (bench/http/serve.ts) and, when LATCH_BENCH_BASE names another tree
// of latch (e.g. a checkout of main, node_modules linked), that tree's server. Unlike requests/s
// or CPU time, the count does not move with the load of other processes on a shared machine, so
// a change of a few hundred instructions per request shows in one run. Each server is warmed with
// wrk under valgrind (uninstrumented), then counted over the next wrk run (16 connections; the
// same body as bench/http/scenario.ts, a result-cache hit). Kernel time (the socket calls, the
// same for every server) is not counted. `--cache-sim` also simulates the caches (valgrind's
// default model of this machine's L1 and last level) and adds L1 instruction, L1 data read and
// L1 data write misses per request. Needs `valgrind` on the PATH; records nothing.
//
//   [LATCH_BENCH_BASE=/path/to/main] npx tsx bench/http/instructions.ts [--seconds 8] [--cache-sim]

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SERVE_NODE_FLAGS } from '../../src/cli/node-flags.js';
import { setup, wrk } from './scenario.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const BODY = JSON.stringify({ tuple_key: { user: 'user:u7', relation: 'viewer', object: 'doc:107' } });
const CONNECTIONS = 16;

/** Starts `file` of tree `dir` under callgrind with instrumentation off; resolves once it listens. */
async function underCallgrind(dir: string, file: string, out: string): Promise<{ proc: ChildProcess; port: number }> {
  const args = [
    '--tool=callgrind',
    '--smc-check=all-non-file',
    '--instr-atstart=no',
    `--callgrind-out-file=${out}/cg.%p`,
    ...(cacheSim ? ['--cache-sim=yes'] : []),
  ];
  // --single-threaded: V8 compiles and collects on the counted thread, so nothing escapes the count.
  const node = [process.execPath, ...SERVE_NODE_FLAGS, '--single-threaded', '--import', 'tsx', path.join(dir, file)];
  const proc = spawn('valgrind', [...args, ...node], { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'] });
  for await (const line of createInterface({ input: proc.stdout as NodeJS.ReadableStream })) {
    const msg = line.startsWith('{') ? (JSON.parse(line) as { port?: number }) : {};
    if (msg.port) return { proc, port: msg.port };
  }
  throw new Error(`${file}: exited before listening under valgrind (is valgrind installed?)`);
}

/** Per request: instructions, and with `--cache-sim` the L1 misses (instruction, data read, data write). */
interface Counted {
  perRequest: number;
  requests: number;
  l1iMisses?: number;
  l1dReadMisses?: number;
  l1dWriteMisses?: number;
}

/** Each event's total over callgrind's output files (`events:` names them, `totals:` counts them). */
function eventTotals(out: string): Map<string, number> {
  const totals = new Map<string, number>();
  for (const f of readdirSync(out)) {
    const text = readFileSync(path.join(out, f), 'utf8');
    const names = /^events: (.+)$/m.exec(text)?.[1]?.split(' ') ?? [];
    const values = /^totals: (.+)$/m.exec(text)?.[1]?.split(' ').map(Number) ?? [];
    names.forEach((name, i) => totals.set(name, (totals.get(name) ?? 0) + (values[i] ?? 0)));
  }
  return totals;
}

/** Instructions per request of one server: warm-up rounds uncounted, then one counted round. */
async function count(dir: string, file: string, seconds: number): Promise<Counted> {
  const out = mkdtempSync(path.join(tmpdir(), 'latch-callgrind-'));
  const { proc, port } = await underCallgrind(dir, file, out);
  try {
    const base = `http://127.0.0.1:${port}`;
    const url = file.endsWith('bare.ts') ? `${base}/stores/x/check` : `${base}/stores/${await setup(base)}/check`;
    for (let i = 0; i < 3; i++) await wrk(url, BODY, 5, CONNECTIONS); // the hot functions reach TurboFan
    const pid = String(proc.pid);
    execFileSync('callgrind_control', ['-i', 'on', pid], { stdio: 'ignore' });
    const run = await wrk(url, BODY, seconds, CONNECTIONS);
    execFileSync('callgrind_control', ['-i', 'off', pid], { stdio: 'ignore' });
    execFileSync('callgrind_control', ['-d', pid], { stdio: 'ignore' });
    if (run.non2xx > 0) throw new Error(`${file}: ${run.non2xx} non-2xx answers`);
    const totals = eventTotals(out);
    const per = (event: string): number => Math.round((totals.get(event) ?? 0) / run.requests);
    const counted: Counted = { perRequest: per('Ir'), requests: run.requests };
    if (cacheSim) {
      counted.l1iMisses = per('I1mr');
      counted.l1dReadMisses = per('D1mr');
      counted.l1dWriteMisses = per('D1mw');
    }
    return counted;
  } finally {
    proc.kill('SIGTERM');
    rmSync(out, { recursive: true, force: true });
  }
}

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '8' }, 'cache-sim': { type: 'boolean', default: false } },
});
const seconds = Number(values.seconds);
const cacheSim = values['cache-sim'];
const root = path.resolve(here, '../..');
const bare = await count(root, 'bench/http/bare.ts', seconds);
const report: Record<string, unknown> = { bare };
const latch = await count(root, 'bench/http/serve.ts', seconds);
report.latch = { ...latch, ratioToBare: Number((bare.perRequest / latch.perRequest).toFixed(3)) };
const baseDir = process.env.LATCH_BENCH_BASE;
if (baseDir) {
  const base = await count(path.resolve(baseDir), 'bench/http/serve.ts', seconds);
  report.base = { ...base, ratioToBare: Number((bare.perRequest / base.perRequest).toFixed(3)) };
}
process.stdout.write(JSON.stringify(report, null, 2) + '\n');
