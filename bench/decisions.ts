// The decision log's cost (docs/audit.md), in one run: JSON Check throughput (wrk) with the log
// off, at sampling 0.01 and at 1.0 — three servers on LevelDB, rounds interleaved, medians and
// the ratios to "off" — then the bytes stored per decision (from the 1.0 server's /metrics), and
// a sustained load at sampling 1.0 against a server with a small cap, its stored bytes sampled
// every 100 ms: they never exceed the cap. Every server's answer is verified before timing.
//
//   npx tsx bench/decisions.ts [--seconds 3] [--rounds 3] [--connections 32] [--cap 4194304]

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { child, setup, wrk, type WrkRun } from './http/scenario.js';
import { median } from './harness.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    cap: { type: 'string', default: String(4 * 1024 * 1024) },
    'sustain-seconds': { type: 'string', default: '8' },
  },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = Number(values.connections);
const CAP = Number(values.cap);
const SUSTAIN = Number(values['sustain-seconds']);
const BODY = JSON.stringify({ tuple_key: { user: 'user:u7', relation: 'viewer', object: 'doc:107' } });

async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
}

interface Server {
  readonly mode: string;
  readonly base: string;
  readonly url: string;
  readonly dir: string;
  stop(): void;
}

async function server(mode: string, sampling: string | undefined, cap?: number): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'latch-bench-decisions-'));
  const env: Record<string, string> = { LATCH_BENCH_DATA_DIR: dir };
  if (sampling !== undefined) env.LATCH_BENCH_DECISION_LOG = sampling;
  if (cap !== undefined) env.LATCH_BENCH_DECISION_MAX_BYTES = String(cap);
  const { proc, port } = await child('serve.ts', env);
  const base = `http://127.0.0.1:${port}`;
  const store = await setup(base); // verifies an allowed and a denied answer
  return { mode, base, url: `${base}/stores/${store}/check`, dir, stop: () => proc.kill('SIGTERM') };
}

const du = (dir: string): number => Number(spawnSync('du', ['-sb', dir]).stdout.toString().split('\t')[0]);

async function throughput(): Promise<Record<string, unknown>> {
  const servers = [await server('off', undefined), await server('0.01', '0.01'), await server('1.0', '1')];
  try {
    for (const s of servers) await wrk(s.url, BODY, 1, CONNECTIONS); // warm-up
    const runs = new Map<string, WrkRun[]>(servers.map((s) => [s.mode, []]));
    for (let r = 0; r < ROUNDS; r++)
      for (const s of r % 2 === 0 ? servers : [...servers].reverse()) {
        const run = await wrk(s.url, BODY, SECONDS, CONNECTIONS);
        if (run.non2xx > 0) throw new Error(`${s.mode}: ${run.non2xx} non-2xx answers`);
        runs.get(s.mode)?.push(run);
      }
    const rps = (m: string): number => median((runs.get(m) ?? []).map((x) => x.rps));
    const full = servers[2] as Server;
    await new Promise((r) => setTimeout(r, 500)); // the last batch written
    const recorded = await metric(full.base, 'latch_decisions_recorded_total');
    const bytes = await metric(full.base, 'latch_decisions_bytes');
    return {
      rps: { off: Math.round(rps('off')), '0.01': Math.round(rps('0.01')), '1.0': Math.round(rps('1.0')) },
      ratio: { '0.01': +(rps('0.01') / rps('off')).toFixed(3), '1.0': +(rps('1.0') / rps('off')).toFixed(3) },
      roundsRps: Object.fromEntries([...runs].map(([m, rs]) => [m, rs.map((x) => Math.round(x.rps))])),
      recorded,
      dropped: await metric(full.base, 'latch_decisions_dropped_total'),
      bytesPerDecision: Math.round(bytes / recorded),
      leveldbBytesPerDecision: Math.round(du(join(full.dir, 'decisions')) / recorded),
    };
  } finally {
    for (const s of servers) s.stop();
    for (const s of servers) rmSync(s.dir, { recursive: true, force: true });
  }
}

async function sustained(): Promise<Record<string, unknown>> {
  const s = await server('capped', '1', CAP);
  try {
    let peak = 0;
    let samples = 0;
    const load = wrk(s.url, BODY, SUSTAIN, CONNECTIONS);
    let done = false;
    void load.finally(() => (done = true));
    while (!done) {
      peak = Math.max(peak, await metric(s.base, 'latch_decisions_bytes'));
      samples++;
      await new Promise((r) => setTimeout(r, 100));
    }
    const run = await load;
    await new Promise((r) => setTimeout(r, 500));
    const end = await metric(s.base, 'latch_decisions_bytes');
    return {
      cap: CAP,
      checks: run.requests,
      recorded: await metric(s.base, 'latch_decisions_recorded_total'),
      dropped: await metric(s.base, 'latch_decisions_dropped_total'),
      peakBytes: Math.max(peak, end),
      endBytes: end,
      samples,
      withinCap: Math.max(peak, end) <= CAP,
      leveldbDirBytes: du(join(s.dir, 'decisions')),
    };
  } finally {
    s.stop();
    rmSync(s.dir, { recursive: true, force: true });
  }
}

const loadBefore = loadavg()[0];
const result = { throughput: await throughput(), sustained: await sustained() };
console.log(
  JSON.stringify({ ...result, loadavg: [loadBefore, loadavg()[0]].map((x) => +(x ?? 0).toFixed(2)) }, null, 2),
);
process.exit(0);
