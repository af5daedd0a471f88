// `--http-threads`: Check over HTTP JSON (wrk, on the same cores) against one server process
// with 1 thread, 2 threads (main + 1 HTTP thread) and 2 HTTP threads beside an engine-only main
// thread, each of the two-thread layouts with Checks answered on the threads from the shared
// index and with every Check forwarded to the main thread, interleaved rounds in one run. Reports
// req/s (median of the rounds) and the ratio to 1 thread, the whole process's RSS (`rss`: read
// after the rounds, and the median of readings every 250 ms while wrk drives it; per process, per
// layout and per pair of processes opened side by side), the server's CPU µs
// per request split into its main thread and every other thread, and a projection to 16 cores
// from that split; with a layout repeated (`--configs 0,1,0,1,0,1`: one process each time), a
// summary per layout of the medians over its processes and their ratios to 1 thread. Every server
// runs with the environment of `latch serve` (SERVE_ENV: MALLOC_ARENA_MAX=2) except the "glibc
// default arenas" rows. Every answer is checked first (allowed and denied, on fresh connections so
// that every thread answers), and wrk's non-2xx count must be 0. wrk runs one thread with 64
// connections, unpinned, on the same cores (about 32 connections per server thread at 2 threads);
// its own CPU per request is reported too (`wrk_cpu_us`), and each layout's summary gives two
// ratios to 1 thread derived from CPU per request: with the clients on other machines (the
// layout's threads have both cores) and the most it can reach with wrk beside it on these cores.
// `--pipeline N` also runs, right after each plain wrk run, the same run with N requests per write
// on each connection (HTTP pipelining, check-pipeline.lua), which cuts wrk's CPU per request as
// HTTP benchmarks do; its rows and summary are reported beside the plain ones ("pipelined"), with
// ratios to the pipelined 1-thread rows, never mixed into the plain figures.
//
//   npx tsx bench/http/threads.ts [--seconds 3] [--connections 64] [--rounds 3] [--tuples 0] [--no-cache] [--dist]
//     [--configs 0,1] [--pipeline 16]

import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { child, round1, round2, setup, wrk, wrkPipelined, type WrkRun } from './scenario.js';
import { median } from '../harness.js';
import { SERVE_ENV } from '../../src/cli/node-flags.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '64' },
    rounds: { type: 'string', default: '3' },
    tuples: { type: 'string', default: '0' },
    // --no-cache: every server without a result cache, so that every Check walks the index.
    'no-cache': { type: 'boolean', default: false },
    // --dist: the compiled server (npm run build:ts first): RSS without a TypeScript loader per thread.
    dist: { type: 'boolean', default: false },
    // --configs 0,1: only these rows of CONFIGS (0 = 1 thread, 1 = 2 threads, …): a shorter run.
    configs: { type: 'string' },
    // --pipeline N: also a run with N requests per write after each plain run (0: none).
    pipeline: { type: 'string', default: '0' },
  },
});
const PIPELINE = Number(values.pipeline);
const NO_CACHE = values['no-cache'];
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const ROUNDS = Number(values.rounds);
/** Extra tuples written into the store first (RSS with a larger index: the threads share it). */
const TUPLES = Number(values.tuples);

/** glibc's own arena limit on 64-bit hosts (what a process gets without MALLOC_ARENA_MAX). */
const GLIBC_DEFAULT_ARENAS = { MALLOC_ARENA_MAX: String(8 * availableParallelism()) };

interface Config {
  readonly name: string;
  readonly env: Record<string, string>;
}
const ALL_CONFIGS: readonly Config[] = [
  { name: '1 thread', env: { LATCH_BENCH_HTTP_THREADS: '1' } },
  { name: '2 threads', env: { LATCH_BENCH_HTTP_THREADS: '2' } },
  { name: '2 HTTP threads + engine thread', env: { LATCH_BENCH_HTTP_THREADS: '2', LATCH_BENCH_MAIN_SERVES: '0' } },
  // The same two layouts with every Check forwarded to the main thread (before Checks ran on the threads).
  { name: '2 threads, forwarded', env: { LATCH_BENCH_HTTP_THREADS: '2', LATCH_BENCH_THREAD_CHECKS: '0' } },
  {
    name: '2 HTTP threads + engine thread, forwarded',
    env: { LATCH_BENCH_HTTP_THREADS: '2', LATCH_BENCH_MAIN_SERVES: '0', LATCH_BENCH_THREAD_CHECKS: '0' },
  },
  // 1 and 2 threads with glibc's default malloc arenas (8 per core) instead of SERVE_ENV's 2.
  { name: '1 thread, glibc default arenas', env: { LATCH_BENCH_HTTP_THREADS: '1', ...GLIBC_DEFAULT_ARENAS } },
  { name: '2 threads, glibc default arenas', env: { LATCH_BENCH_HTTP_THREADS: '2', ...GLIBC_DEFAULT_ARENAS } },
];
/**
 * The most req/s a layout can serve on this machine's two cores with wrk beside it: no thread
 * past one core, and the two cores shared by the server's and wrk's CPU per request (µs).
 */
function bound(threads: number, serverUs: number, wrkUs: number): number {
  return Math.min((threads * 1e6) / serverUs, 2e6 / (serverUs + wrkUs));
}

/** Threads serving HTTP in the layout named `name` (the main thread counted when it serves). */
function threadsOf(name: string): number {
  const env = ALL_CONFIGS.find((c) => c.name === name)?.env ?? {};
  return Number(env.LATCH_BENCH_HTTP_THREADS ?? 1);
}

/** Whether the main thread of the layout named `name` accepts API connections too. */
function mainServes(name: string): boolean {
  return ALL_CONFIGS.find((c) => c.name === name)?.env.LATCH_BENCH_MAIN_SERVES !== '0';
}
const CONFIGS: readonly Config[] = values.configs
  ? values.configs.split(',').map((i) => {
      const c = ALL_CONFIGS[Number(i)];
      if (!c) throw new Error(`--configs: no configuration ${i} (0 … ${ALL_CONFIGS.length - 1})`);
      return c;
    })
  : ALL_CONFIGS;

/** user + system ticks of one thread (/proc/<pid>/task/<tid>/stat fields 14 and 15). */
function ticks(path: string): number {
  const f = readFileSync(path, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return Number(f[11]) + Number(f[12]);
}

/** CPU ticks of the process's main thread and of all its other threads. */
function threadTicks(pid: number): { main: number; other: number } {
  let main = 0;
  let other = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let t = 0;
    try {
      t = ticks(`/proc/${pid}/task/${tid}/stat`);
    } catch {
      continue; // the thread ended meanwhile
    }
    if (Number(tid) === pid) main += t;
    else other += t;
  }
  return { main, other };
}

function rssMb(pid: number): number {
  const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);
  return kb / 1024;
}

async function verify(base: string, store: string): Promise<void> {
  const ask = async (user: string): Promise<unknown> => {
    const r = await fetch(`${base}/stores/${store}/check`, {
      method: 'POST',
      headers: { connection: 'close' },
      body: JSON.stringify({ tuple_key: { user, relation: 'viewer', object: 'doc:107' } }),
    });
    return ((await r.json()) as { allowed?: unknown }).allowed;
  };
  for (let i = 0; i < 32; i++) {
    if ((await ask('user:u7')) !== true || (await ask('user:u8')) !== false)
      throw new Error('a thread answers wrongly');
  }
}

async function grow(base: string, store: string): Promise<void> {
  const lane = async (first: number): Promise<void> => {
    for (let at = first; at < TUPLES; at += 400) {
      const tuple_keys = Array.from({ length: Math.min(100, TUPLES - at) }, (_, k) => ({
        user: `user:g${(at + k) % 5000}`,
        relation: 'viewer',
        object: `doc:g${at + k}`,
      }));
      const r = await fetch(`${base}/stores/${store}/write`, {
        method: 'POST',
        body: JSON.stringify({ writes: { tuple_keys } }),
      });
      if (r.status !== 200) throw new Error(`write: ${r.status} ${await r.text()}`);
    }
  };
  await Promise.all([0, 100, 200, 300].map(lane));
}

/** One way of driving a server (plain or pipelined wrk), summed over the rounds. */
interface Measure {
  readonly runs: WrkRun[];
  /** CPU ticks of the main thread and of the other threads during the runs. */
  main: number;
  other: number;
  requests: number;
  /** wrk's CPU µs over the rounds. */
  client: number;
}

function measure(): Measure {
  return { runs: [], main: 0, other: 0, requests: 0, client: 0 };
}

interface Server {
  readonly config: Config;
  readonly proc: ChildProcess;
  readonly url: string;
  readonly body: string;
  readonly plain: Measure;
  readonly piped: Measure;
  /** The process's RSS (MB) every RSS_SAMPLE_MS while wrk drives it, over the measured runs. */
  readonly rssUnderLoad: number[];
}

/**
 * How often RSS is read while a server is driven. One reading after the rounds lands anywhere in
 * the main thread's old-generation cycle (its garbage moved one process's figure by 10–30 MB);
 * the median of the readings under load is the same figure with that phase averaged out.
 */
const RSS_SAMPLE_MS = 250;

/** One wrk run against `s`, its server's CPU split by thread and wrk's CPU added to `m`. */
async function drive(s: Server, m: Measure, run: () => Promise<WrkRun>): Promise<void> {
  const pid = s.proc.pid as number;
  const sampler = setInterval(() => s.rssUnderLoad.push(rssMb(pid)), RSS_SAMPLE_MS);
  const t0 = threadTicks(pid);
  let r: WrkRun;
  try {
    r = await run();
  } finally {
    clearInterval(sampler);
  }
  const t1 = threadTicks(pid);
  if (r.non2xx !== 0) throw new Error(`${s.config.name}: ${r.non2xx} non-2xx answers`);
  m.runs.push(r);
  m.main += t1.main - t0.main;
  m.other += t1.other - t0.other;
  m.requests += r.requests;
  m.client += r.cpuUs;
}

async function open(config: Config): Promise<Server> {
  const { proc, port } = await child(values.dist ? 'serve-dist.mjs' : 'serve.ts', {
    // The environment `latch serve` runs with (bin/latch.js, npm start), unless the row says otherwise.
    ...SERVE_ENV,
    ...config.env,
    LATCH_BENCH_WORKERS: '0',
    ...(NO_CACHE ? { LATCH_BENCH_CACHE_SIZE: '0' } : {}),
  });
  const base = `http://127.0.0.1:${port}`;
  const store = await setup(base);
  await grow(base, store);
  await verify(base, store);
  const body = JSON.stringify({ tuple_key: { user: 'user:u7', relation: 'viewer', object: 'doc:107' } });
  return {
    config,
    proc,
    url: `${base}/stores/${store}/check`,
    body,
    plain: measure(),
    piped: measure(),
    rssUnderLoad: [],
  };
}

/**
 * The whole process's RSS per process, per layout (medians over its processes) and per pair: the
 * k-th process of each layout against the k-th of the first layout (`--configs 0,1,0,1,0,1`: the
 * processes opened side by side), both as read after every round and as the median under load.
 */
function rssReport(servers: readonly Server[], after: ReadonlyMap<Server, number>): Record<string, unknown> {
  const processes = servers.map((s) => ({
    config: s.config.name,
    after_rounds_mb: round1(after.get(s) ?? NaN),
    under_load_median_mb: round1(median(s.rssUnderLoad)),
    under_load_min_max_mb: [round1(Math.min(...s.rssUnderLoad)), round1(Math.max(...s.rssUnderLoad))],
  }));
  const names = [...new Set(processes.map((p) => p.config))];
  const of = (name: string): typeof processes => processes.filter((p) => p.config === name);
  const first = of(names[0] ?? '');
  const layouts = names.map((name) => ({
    config: name,
    processes: of(name).length,
    after_rounds_mb: round1(median(of(name).map((p) => p.after_rounds_mb))),
    under_load_median_mb: round1(median(of(name).map((p) => p.under_load_median_mb))),
  }));
  const base = layouts[0];
  const pairs = names.slice(1).map((name) => ({
    config: name,
    after_rounds_ratio: round2(
      (layouts.find((l) => l.config === name)?.after_rounds_mb ?? NaN) / (base?.after_rounds_mb ?? NaN),
    ),
    under_load_ratio: round2(
      (layouts.find((l) => l.config === name)?.under_load_median_mb ?? NaN) / (base?.under_load_median_mb ?? NaN),
    ),
    after_rounds_pairs: of(name).map((p, k) => round2(p.after_rounds_mb / (first[k]?.after_rounds_mb ?? NaN))),
    under_load_pairs: of(name).map((p, k) => round2(p.under_load_median_mb / (first[k]?.under_load_median_mb ?? NaN))),
  }));
  return { processes, layouts, ratios: pairs };
}

/** Rows per process, the summary per layout and the 16-core projection of one kind of run. */
function report(measured: readonly { name: string; m: Measure; rss: number }[]): {
  rows: Row[];
  summary: Record<string, number | string>[];
  projections: Record<string, number | string>[];
} {
  const base = median(measured[0]?.m.runs.map((r) => r.rps) ?? []);
  const rows: Row[] = measured.map(({ name, m, rss }) => {
    const rps = median(m.runs.map((r) => r.rps));
    const us = (t: number): number => round2((t * 1e4) / m.requests); // 100 ticks/s
    return {
      config: name,
      rps: Math.round(rps),
      ratio: round2(rps / base),
      p99_ms: round2(median(m.runs.map((r) => r.p99))),
      rss_mb: round1(rss),
      rss_ratio: NaN,
      cpu_us_per_request: us(m.main + m.other),
      main_thread_us: us(m.main),
      other_threads_us: us(m.other),
      wrk_cpu_us: round2(m.client / m.requests),
    };
  });
  const rssBase = rows[0]?.rss_mb ?? NaN;
  for (const row of rows) row.rss_ratio = round2(row.rss_mb / rssBase);
  // 16 cores, the clients elsewhere: every thread a core, so 16e6 / the CPU per request, unless
  // one thread is the bottleneck. That is the main thread only when it serves no HTTP (the engine
  // thread of "2 HTTP threads + engine thread": what it spends per Check answered elsewhere caps
  // the process at 1e6 / main_thread_us); where it also serves, its figure is its share of the
  // requests and caps nothing.
  const projections = rows
    .filter((row) => threadsOf(row.config) > 1)
    .map((row) => ({
      config: row.config,
      linear_16: Math.round((16 * 1e6) / row.cpu_us_per_request),
      ...(mainServes(row.config) ? {} : { engine_thread_cap: Math.round(1e6 / row.main_thread_us) }),
    }));
  // Per layout, over its processes (RSS moves by ±10–25 MB from one process to the next).
  const names = [...new Set(rows.map((r) => r.config))];
  const first = rows[0]?.config ?? '';
  const of = (name: string, key: 'rps' | 'rss_mb' | 'cpu_us_per_request' | 'wrk_cpu_us'): number =>
    median(rows.filter((r) => r.config === name).map((r) => r[key]));
  const oneUs = of(first, 'cpu_us_per_request');
  const summary = names.map((name) => ({
    config: name,
    processes: rows.filter((r) => r.config === name).length,
    rps: Math.round(of(name, 'rps')),
    rps_ratio: round2(of(name, 'rps') / of(first, 'rps')),
    rss_mb: round1(of(name, 'rss_mb')),
    rss_ratio: round2(of(name, 'rss_mb') / of(first, 'rss_mb')),
    cpu_us_per_request: round2(of(name, 'cpu_us_per_request')),
    wrk_cpu_us: round2(of(name, 'wrk_cpu_us')),
    // From the CPU per request (load-independent): what this layout serves over 1 thread when its
    // threads have the two cores to themselves (the clients on other machines), and the most it
    // can serve with wrk on the same two cores (1 thread is held by its one thread, the other
    // layouts by both cores shared with wrk's CPU per request).
    two_core_ratio_clients_elsewhere: round2((Math.min(2, threadsOf(name)) * oneUs) / of(name, 'cpu_us_per_request')),
    two_core_ratio_wrk_beside: round2(
      bound(threadsOf(name), of(name, 'cpu_us_per_request'), of(name, 'wrk_cpu_us')) /
        bound(1, oneUs, of(first, 'wrk_cpu_us')),
    ),
  }));
  return { rows, summary, projections };
}

interface Row {
  readonly config: string;
  readonly rps: number;
  readonly ratio: number;
  readonly p99_ms: number;
  readonly rss_mb: number;
  rss_ratio: number;
  readonly cpu_us_per_request: number;
  readonly main_thread_us: number;
  readonly other_threads_us: number;
  readonly wrk_cpu_us: number;
}

const load0 = loadavg()[0] ?? 0;
const servers: Server[] = [];
for (const c of CONFIGS) servers.push(await open(c));
try {
  for (const s of servers) await wrk(s.url, s.body, 1, CONNECTIONS); // warm-up
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of servers) {
      await drive(s, s.plain, () => wrk(s.url, s.body, SECONDS, CONNECTIONS));
      if (PIPELINE > 0) await drive(s, s.piped, () => wrkPipelined(s.url, s.body, SECONDS, CONNECTIONS, PIPELINE));
    }
  }
  // RSS once, after every round (both kinds of run), of every process at the same moment.
  const rss = new Map(servers.map((s) => [s, rssMb(s.proc.pid as number)]));
  const plain = report(servers.map((s) => ({ name: s.config.name, m: s.plain, rss: rss.get(s) ?? NaN })));
  const pipelined =
    PIPELINE > 0
      ? report(servers.map((s) => ({ name: s.config.name, m: s.piped, rss: rss.get(s) ?? NaN })))
      : undefined;
  console.log(
    JSON.stringify(
      {
        seconds: SECONDS,
        connections: CONNECTIONS,
        rounds: ROUNDS,
        result_cache: !NO_CACHE,
        compiled: values.dist,
        load_before: round2(load0),
        load_after: round2(loadavg()[0] ?? 0),
        pipeline_depth: PIPELINE,
        rss: rssReport(servers, rss),
        ...plain,
        ...(pipelined ? { pipelined } : {}),
      },
      null,
      2,
    ),
  );
} finally {
  for (const s of servers) s.proc.kill('SIGTERM');
}
