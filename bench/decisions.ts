// The decision log's cost (docs/audit.md), in one run, for the log off, at sampling 0.01 and at
// 1.0 (every server on LevelDB, the decisions' batches written to `<dataDir>/decisions`):
//
//   1. instructions per JSON Check under callgrind (bench/http/callgrind.ts): every thread of the
//      server counted, the recording on the request path AND the batched background writes to
//      LevelDB, which are waited for before the count stops and so are amortised over the checks;
//      independent of the machine's load;
//   2. server CPU µs per Check (utime + stime of the server process from /proc, all its threads,
//      the batch writes again waited for) and requests/s (wrk), in interleaved rounds with the
//      server pinned to core 0 and wrk to core 1 (two cores; LATCH_BENCH_PIN=0: unpinned), medians
//      and the ratios to "off" — the wall-clock figure moves with the machine's load, the CPU
//      figure much less;
//   3. the bytes stored per decision (the 1.0 server's /metrics and its LevelDB directory), and a
//      sustained load at sampling 1.0 against a server with a small cap, its stored bytes sampled
//      every 100 ms: they never exceed the cap.
// Every server's answer is verified before timing. Target: at 1.0, ≥ 0.75 of off (a cost ≤ 25 %).
//
//   npx tsx bench/decisions.ts [--seconds 3] [--rounds 5] [--connections 32] [--cap 4194304]
//                              [--only instructions|rounds|sustained] [--counted-requests 4000]
//   [LATCH_BENCH_BASE=/path/to/other/tree] npx tsx bench/decisions.ts --only instructions --modes off,1.0

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { countInstructions } from './http/callgrind.js';
import { child, setup, wrk, type WrkRun } from './http/scenario.js';
import { median } from './harness.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    cap: { type: 'string', default: String(4 * 1024 * 1024) },
    'sustain-seconds': { type: 'string', default: '8' },
    'counted-seconds': { type: 'string', default: '6' },
    'counted-requests': { type: 'string', default: '4000' },
    only: { type: 'string' },
    modes: { type: 'string' },
  },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CONNECTIONS = Number(values.connections);
const CAP = Number(values.cap);
const SUSTAIN = Number(values['sustain-seconds']);
const COUNTED = Number(values['counted-seconds']);
/** Counted Checks (0: a timed wrk run of --counted-seconds instead). */
const COUNTED_REQUESTS = Number(values['counted-requests']) || undefined;
const ONLY = values.only;
/** `--modes off,1.0`: count only these settings (instructions). */
const MODE_FILTER = values.modes?.split(',');
const BODY = JSON.stringify({ tuple_key: { user: 'user:u7', relation: 'viewer', object: 'doc:107' } });
const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
/** LATCH_BENCH_BASE: count another tree of latch (e.g. a checkout before a change, node_modules linked). */
const TREE = process.env.LATCH_BENCH_BASE ? resolve(process.env.LATCH_BENCH_BASE) : ROOT;
const SETTLE_MS = 3000;
const PIN = process.env.LATCH_BENCH_PIN !== '0' && availableParallelism() >= 2;
/** The settings compared: the log off, then each sampling rate. */
const MODES: readonly { mode: string; sampling: string | undefined }[] = [
  { mode: 'off', sampling: undefined },
  { mode: '0.01', sampling: '0.01' },
  { mode: '1.0', sampling: '1' },
];
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK']).stdout.toString()) || 100;

async function metric(base: string, name: string): Promise<number> {
  const text = await (await fetch(`${base}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
}

/**
 * Resolves once the decision log has written everything queued: nothing queued and the recorded
 * count unchanged over two polls further apart than the log's flush delay (50 ms).
 */
async function settled(base: string, pollMs = 200): Promise<void> {
  let last = -1;
  for (;;) {
    const queued = await metric(base, 'latch_decisions_queued');
    const recorded = await metric(base, 'latch_decisions_recorded_total');
    if (Number.isNaN(queued) || (queued === 0 && recorded === last)) return;
    last = recorded;
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

const logEnv = (dir: string, sampling: string | undefined, cap?: number): Record<string, string> => {
  const env: Record<string, string> = { LATCH_BENCH_DATA_DIR: dir };
  if (sampling !== undefined) env.LATCH_BENCH_DECISION_LOG = sampling;
  if (cap !== undefined) env.LATCH_BENCH_DECISION_MAX_BYTES = String(cap);
  return env;
};

interface Server {
  readonly mode: string;
  readonly pid: number;
  readonly base: string;
  readonly url: string;
  readonly dir: string;
  stop(): void;
}

async function server(mode: string, sampling: string | undefined, cap?: number): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'latch-bench-decisions-'));
  const { proc, port } = await child('serve.ts', logEnv(dir, sampling, cap));
  if (PIN) execFileSync('taskset', ['-a', '-p', '-c', '0', String(proc.pid)], { stdio: 'ignore' });
  const base = `http://127.0.0.1:${port}`;
  const store = await setup(base); // verifies an allowed and a denied answer
  const url = `${base}/stores/${store}/check`;
  return { mode, pid: proc.pid as number, base, url, dir, stop: () => proc.kill('SIGTERM') };
}

const du = (dir: string): number => Number(spawnSync('du', ['-sb', dir]).stdout.toString().split('\t')[0]);

/** CPU time (µs) the process has used so far, every thread: utime + stime of /proc/<pid>/stat. */
function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLK_TCK;
}

async function instructions(): Promise<Record<string, unknown>> {
  const counted: Record<string, unknown> = {};
  let off = 0;
  for (const { mode, sampling } of MODES.filter((m) => MODE_FILTER === undefined || MODE_FILTER.includes(m.mode))) {
    const dir = mkdtempSync(join(tmpdir(), 'latch-bench-decisions-'));
    try {
      const c = await countInstructions({
        dir: TREE,
        file: 'bench/http/serve.ts',
        env: logEnv(dir, sampling),
        seconds: COUNTED,
        requests: COUNTED_REQUESTS,
        windows: 3,
        connections: 16,
        body: BODY,
        prepare: async (base) => `${base}/stores/${await setup(base)}/check`,
        // The same wait for every setting (the idle server's timers count alike): long enough
        // for the last batch's write, which is then confirmed below, outside the count.
        settle: () => new Promise((r) => setTimeout(r, SETTLE_MS)),
        after: async (base) => {
          const queued = await metric(base, 'latch_decisions_queued');
          if (queued > 0) throw new Error(`${mode}: ${queued} decisions still queued after the count`);
        },
      });
      if (mode === 'off') off = c.perRequest;
      counted[mode] = { ...c, ratioToOff: +(off / c.perRequest).toFixed(3) };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return counted;
}

async function rounds(): Promise<Record<string, unknown>> {
  const servers: Server[] = [];
  try {
    for (const m of MODES) servers.push(await server(m.mode, m.sampling));
    for (const s of servers) await wrk(s.url, BODY, 1, CONNECTIONS); // warm-up
    const runs = new Map<string, WrkRun[]>(servers.map((s) => [s.mode, []]));
    const cpu = new Map<string, number[]>(servers.map((s) => [s.mode, []]));
    for (let r = 0; r < ROUNDS; r++)
      for (const s of r % 2 === 0 ? servers : [...servers].reverse()) {
        await settled(s.base);
        const before = cpuMicros(s.pid);
        const run = await wrk(s.url, BODY, SECONDS, CONNECTIONS, 0, PIN ? '1' : undefined);
        await settled(s.base);
        const used = cpuMicros(s.pid) - before;
        if (run.non2xx > 0) throw new Error(`${s.mode}: ${run.non2xx} non-2xx answers`);
        runs.get(s.mode)?.push(run);
        cpu.get(s.mode)?.push(used / run.requests);
      }
    const rps = (m: string): number => median((runs.get(m) ?? []).map((x) => x.rps));
    const us = (m: string): number => median(cpu.get(m) ?? []);
    const full = servers[2] as Server;
    const recorded = await metric(full.base, 'latch_decisions_recorded_total');
    const bytes = await metric(full.base, 'latch_decisions_bytes');
    const per = (f: (m: string) => number, digits: number): Record<string, number> =>
      Object.fromEntries(MODES.map(({ mode }) => [mode, +f(mode).toFixed(digits)]));
    return {
      pinned: PIN,
      rps: per(rps, 0),
      rpsRatio: { '0.01': +(rps('0.01') / rps('off')).toFixed(3), '1.0': +(rps('1.0') / rps('off')).toFixed(3) },
      cpuMicrosPerCheck: per(us, 1),
      cpuRatio: { '0.01': +(us('off') / us('0.01')).toFixed(3), '1.0': +(us('off') / us('1.0')).toFixed(3) },
      roundsRps: Object.fromEntries([...runs].map(([m, rs]) => [m, rs.map((x) => Math.round(x.rps))])),
      roundsCpuMicros: Object.fromEntries([...cpu].map(([m, xs]) => [m, xs.map((x) => +x.toFixed(1))])),
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
    await settled(s.base);
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

const load = (): number => +(loadavg()[0] ?? 0).toFixed(2);
const result: Record<string, unknown> = {};
const parts = { instructions, rounds, sustained };
for (const [name, part] of Object.entries(parts)) {
  if (ONLY !== undefined && ONLY !== name) continue;
  const before = load();
  result[name] = { ...(await part()), loadavg: [before, load()] };
}
console.log(JSON.stringify(result, null, 2));
process.exit(0);
