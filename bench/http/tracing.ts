// The cost of OpenTelemetry tracing on JSON Check throughput, in one run on one machine: latch
// without an SDK ("off", the shipped default), latch with an SDK recording every span ("on",
// bench/http/traced-serve.ts) and, when LATCH_BENCH_BASE names a directory holding an earlier
// tree of latch (e.g. `git archive <commit> | tar -x -C dir`, node_modules linked, build/ copied),
// that tree's server ("base"). Rounds are interleaved (base, off, on, base, …) so that the
// machine's drift hits every variant alike; the medians of the rounds are compared. Two figures
// per variant: requests/s at the maximum (wrk, 64 connections), and the server's CPU time per
// request meanwhile (/proc/<pid>/stat), which a busy shared machine disturbs far less: a
// single-threaded server's maximum is the inverse of it.
//
//   LATCH_BENCH_BASE=/tmp/latch-base npx tsx bench/http/tracing.ts [--seconds 4] [--rounds 7]

import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

import { parseArgs } from 'node:util';
import { SERVE_NODE_FLAGS } from '../../src/cli/node-flags.js';
import { median } from '../harness.js';
import { child, cpuPerRequest, round1, round2, setup, wrk } from './scenario.js';

/** `bench/http/serve.ts` of another tree, started from that tree's folder. */
async function baseServer(dir: string): Promise<{ proc: ChildProcess; port: number }> {
  const proc = spawn(
    process.execPath,
    [...SERVE_NODE_FLAGS, '--import', 'tsx', path.join(dir, 'bench/http/serve.ts')],
    { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  for await (const line of createInterface({ input: proc.stdout as NodeJS.ReadableStream })) {
    const msg = line.startsWith('{') ? (JSON.parse(line) as { port?: number }) : {};
    if (msg.port) return { proc, port: msg.port };
  }
  throw new Error(`${dir}: the server exited before listening`);
}

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '7' },
    connections: { type: 'string', default: '64' },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const baseDir = process.env.LATCH_BENCH_BASE;

const servers: { name: string; proc: ChildProcess; port: number }[] = [];
try {
  if (baseDir) servers.push({ name: 'base', ...(await baseServer(path.resolve(baseDir))) });
  servers.push({ name: 'off', ...(await child('serve.ts')) });
  servers.push({ name: 'on', ...(await child('traced-serve.ts')) });
  const targets = [];
  for (const s of servers) {
    const base = `http://127.0.0.1:${s.port}`;
    const store = await setup(base); // verifies an allowed and a denied answer
    const body = JSON.stringify({ tuple_key: { user: 'user:u7', relation: 'viewer', object: 'doc:107' } });
    targets.push({ name: s.name, proc: s.proc, url: `${base}/stores/${store}/check`, body });
  }
  for (const t of targets) await wrk(t.url, t.body, 1, connections); // warm-up
  const rps = new Map<string, number[]>(targets.map((t) => [t.name, []]));
  const cpu = new Map<string, number[]>(targets.map((t) => [t.name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const t of targets) {
      const { run, us } = await cpuPerRequest(t.proc, () => wrk(t.url, t.body, seconds, connections));
      if (run.non2xx > 0) throw new Error(`${t.name}: ${run.non2xx} non-2xx answers`);
      rps.get(t.name)?.push(run.rps);
      cpu.get(t.name)?.push(us);
    }
  }
  const med = (name: string): number => median(rps.get(name) ?? []);
  const us = (name: string): number => median(cpu.get(name) ?? []);
  const report: Record<string, unknown> = {
    seconds,
    rounds,
    connections,
    load: Number((await import('node:os')).loadavg()[0]?.toFixed(1)),
  };
  for (const t of targets) {
    report[t.name] = {
      medianRps: Math.round(med(t.name)),
      rps: rps.get(t.name)?.map(Math.round),
      medianCpuUsPerRequest: round2(us(t.name)),
      cpuUs: cpu.get(t.name)?.map(round2),
    };
  }
  // Throughput change: measured (rps) and implied by the CPU per request (max ∝ 1 / CPU per request).
  const pct = (a: number, b: number): number => round1((a / b - 1) * 100);
  if (baseDir)
    report.offVsBase = { rpsPct: pct(med('off'), med('base')), cpuImpliedThroughputPct: pct(us('base'), us('off')) };
  report.onVsOff = { rpsPct: pct(med('on'), med('off')), cpuImpliedThroughputPct: pct(us('off'), us('on')) };
  process.stdout.write(JSON.stringify(report, null, 2) + '\n');
} finally {
  for (const s of servers) s.proc.kill('SIGTERM');
}
