// Where replication lag goes: nodes A and B (bench/replication/node.ts with LATCH_BENCH_TRACE) on
// a throwaway PostgreSQL; writes to A at 100 and 1,000 offered writes/s over 8 stores; per write
// the timeline ack (A answered) → event on B → change-log read → applied → seen by a Check on B.
// `npx tsx bench/replication/diag.ts [seconds]`.

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { SERVE_NODE_FLAGS } from '../../src/cli/node-flags.js';
import { startPostgres } from '../../test/support/postgres-server.js';
import { LATENCY_BOUNDS_MS } from '../../src/engine/stats.js';
import type { Trace } from './trace.js';
import { offer } from '../harness.js';
import { LeanClient } from '../http/lean-client.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const at = (): number => performance.timeOrigin + performance.now();

interface Histogram {
  counts: number[];
  count: number;
  sumMs: number;
}
interface Stats {
  applyLag: Histogram;
  writes: Histogram;
  carried: number;
}
interface DiagNode {
  proc: ChildProcess;
  base: string;
  /** The node's in-process histograms now (cumulative). */
  stats: () => Promise<Stats>;
}

async function startNode(url: string, trace: string, pin?: string): Promise<DiagNode> {
  const env = { ...(process.env as Record<string, string>), LATCH_BENCH_PG_URL: url, LATCH_BENCH_TRACE: trace };
  const args = [...SERVE_NODE_FLAGS, '--import', 'tsx', path.join(here, 'node.ts')];
  const proc = pin
    ? spawn('taskset', ['-c', pin, process.execPath, ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] })
    : spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
  let base = '';
  let got: ((s: Stats) => void) | undefined;
  await new Promise<void>((resolve) =>
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return;
      const msg = JSON.parse(line) as { port?: number; ready?: number; stats?: Stats };
      if (msg.port) base = `http://127.0.0.1:${msg.port}`;
      if (msg.stats) got?.(msg.stats);
      if (msg.ready !== undefined) resolve();
    }),
  );
  const stats = (): Promise<Stats> =>
    new Promise<Stats>((resolve) => {
      got = resolve;
      proc.kill('SIGUSR1');
    });
  return { proc, base, stats };
}

/** One lean keep-alive client per node (bench/http/lean-client.ts): the scenario's request cost. */
const clients = new Map<string, LeanClient>();

async function post(base: string, p: string, body: unknown): Promise<Record<string, unknown>> {
  let client = clients.get(base);
  if (!client) clients.set(base, (client = new LeanClient(base, 64)));
  const r = await client.post(p, body);
  return r.text ? (JSON.parse(r.text) as Record<string, unknown>) : {};
}

const MODEL = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'doc',
      relations: { viewer: { this: {} } },
      metadata: { relations: { viewer: { directly_related_user_types: [{ type: 'user' }] } } },
    },
  ],
};

const ack: Record<string, number> = {};
const seen: Record<string, number> = {};
const sent: Record<string, number> = {};

async function lag(a: string, b: string, stores: readonly string[], rate: number, seconds: number): Promise<number> {
  const total = Math.round(rate * seconds);
  const queues = stores.map(() => [] as string[]);
  const wake: (() => void)[] = stores.map(() => () => undefined);
  let writing = true;
  const poller = async (s: number): Promise<void> => {
    const q = queues[s] as string[];
    for (;;) {
      if (q.length === 0) {
        if (!writing) return;
        await new Promise<void>((r) => (wake[s] = r));
        continue;
      }
      const newest = q[q.length - 1] as string;
      const c = await post(b, `/stores/${stores[s]}/check`, {
        tuple_key: { user: 'user:lag', relation: 'viewer', object: newest },
        consistency: 'MINIMIZE_LATENCY',
      });
      if (c.allowed !== true) continue;
      const now = at();
      for (const o of q.splice(0, q.indexOf(newest) + 1)) seen[o] = now;
    }
  };
  const pollers = process.env.DIAG_NOPOLL ? [] : stores.map((_, s) => poller(s));
  const one = async (i: number): Promise<void> => {
    const s = i % stores.length;
    const object = `doc:r${rate}-${i}`;
    sent[object] = at();
    const w = await post(a, `/stores/${stores[s]}/write`, {
      writes: { tuple_keys: [{ user: 'user:lag', relation: 'viewer', object }] },
    });
    if (w.code) throw new Error(JSON.stringify(w));
    ack[object] = at();
    queues[s]?.push(object);
    wake[s]?.();
  };
  const achieved = await offer(rate, total, Number(process.env.DIAG_CAP ?? 64), one);
  writing = false;
  for (const w of wake) w();
  await Promise.all(pollers);
  return achieved;
}

function minus(x: Histogram, y: Histogram): Histogram {
  return { counts: x.counts.map((c, i) => c - (y.counts[i] ?? 0)), count: x.count - y.count, sumMs: x.sumMs - y.sumMs };
}
const since = (x: Stats, y: Stats): Stats => ({
  applyLag: minus(x.applyLag, y.applyLag),
  writes: minus(x.writes, y.writes),
  carried: x.carried - y.carried,
});

/** A histogram's quantile as the upper bound of its bucket (LATENCY_BOUNDS_MS), and its mean. */
function hist(h: Histogram): string {
  const q = (p: number): string => {
    let seen = 0;
    for (let i = 0; i < h.counts.length; i++) {
      seen += h.counts[i] ?? 0;
      if (seen >= p * h.count) return i < LATENCY_BOUNDS_MS.length ? `≤${LATENCY_BOUNDS_MS[i]}` : '>10000';
    }
    return 'n/a';
  };
  return `n ${h.count} mean ${(h.sumMs / Math.max(1, h.count)).toFixed(2)} p50 ${q(0.5)} p99 ${q(0.99)}`;
}

const pct = (xs: number[], q: number): number => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((x, y) => x - y);
  return Math.round((s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN) * 10) / 10;
};

const seconds = Number(process.argv[2] ?? 5);
const server = await startPostgres();
const admin = new pg.Client({ connectionString: server.url });
await admin.connect();
const dbName = `latch_diag_${Date.now()}`;
await admin.query(`CREATE DATABASE ${dbName}`);
const u = new URL(server.url);
u.pathname = `/${dbName}`;
const ta = path.join(tmpdir(), `diag-a-${process.pid}.json`);
const tb = path.join(tmpdir(), `diag-b-${process.pid}.json`);
const A = await startNode(u.toString(), ta, process.env.DIAG_PIN_A);
const B = await startNode(u.toString(), tb, process.env.DIAG_PIN_B);
const stores: string[] = [];
for (let i = 0; i < 8; i++) {
  const created = await post(A.base, '/stores', { name: `diag${i}` });
  const store = created.id as string;
  await post(A.base, `/stores/${store}/authorization-models`, MODEL);
  stores.push(store);
}
const achieved: Record<number, number> = {};
const inProcess: Record<number, { a: Stats; b: Stats }> = {};
let before = { a: await A.stats(), b: await B.stats() };
for (const rate of (process.env.DIAG_RATES ?? '100,1000').split(',').map(Number)) {
  achieved[rate] = await lag(A.base, B.base, stores, rate, seconds);
  const after = { a: await A.stats(), b: await B.stats() };
  inProcess[rate] = { a: since(after.a, before.a), b: since(after.b, before.b) };
  before = after;
}
for (const c of clients.values()) c.close();
for (const n of [A, B]) {
  const exited = new Promise((r) => n.proc.once('exit', r));
  n.proc.kill('SIGTERM');
  await exited;
}
await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
await admin.end();
await server.stop();
const a = JSON.parse(readFileSync(ta, 'utf8')) as Trace;
const b = JSON.parse(readFileSync(tb, 'utf8')) as Trace;
for (const rate of Object.keys(achieved).map(Number)) {
  const objs = Object.keys(ack).filter((o) => o.startsWith(`doc:r${rate}-`));
  const seg = (f: (o: string) => number): string => {
    const xs = objs.map(f);
    return `p50 ${pct(xs, 0.5)} p99 ${pct(xs, 0.99)} max ${pct(xs, 1)}`;
  };
  console.log(`rate ${rate}: achieved ${achieved[rate]?.toFixed(0)} writes/s, ${objs.length} writes`);
  const own = inProcess[rate];
  if (own) {
    console.log('  in-process: A storage write (ms)  ', hist(own.a.writes));
    console.log('  in-process: B event → applied (ms)', hist(own.b.applyLag), `carried ${own.b.carried}`);
  }
  console.log(
    '  write rtt (sent → ack)           ',
    seg((o) => (ack[o] ?? NaN) - (sent[o] ?? NaN)),
  );
  console.log(
    '  sent → A write start              ',
    seg((o) => (a.start[o] ?? NaN) - (sent[o] ?? NaN)),
  );
  console.log(
    '  A write start → commit            ',
    seg((o) => (a.commit[o] ?? NaN) - (a.start[o] ?? NaN)),
  );
  console.log(
    '  lag (ack → seen)                  ',
    seg((o) => (seen[o] ?? NaN) - (ack[o] ?? NaN)),
  );
  console.log(
    '  A commit → B event                ',
    seg((o) => (b.event[o] ?? NaN) - (a.commit[o] ?? NaN)),
  );
  console.log(
    '  B event → read start              ',
    seg((o) => (b.readStart[o] ?? NaN) - (b.event[o] ?? NaN)),
  );
  console.log(
    '  read start → read end             ',
    seg((o) => (b.readEnd[o] ?? NaN) - (b.readStart[o] ?? NaN)),
  );
  console.log(
    '  read end → applied                ',
    seg((o) => (b.applied[o] ?? NaN) - (b.readEnd[o] ?? NaN)),
  );
  console.log(
    '  A commit → B applied              ',
    seg((o) => (b.applied[o] ?? NaN) - (a.commit[o] ?? NaN)),
  );
  console.log(
    '  B applied → seen                  ',
    seg((o) => (seen[o] ?? NaN) - (b.applied[o] ?? NaN)),
  );
  console.log(
    '  A commit → ack                    ',
    seg((o) => (ack[o] ?? NaN) - (a.commit[o] ?? NaN)),
  );
  const worst = objs.sort((x, y) => (seen[y] ?? 0) - (ack[y] ?? 0) - ((seen[x] ?? 0) - (ack[x] ?? 0))).slice(0, 8);
  for (const o of worst) {
    const base = a.commit[o] ?? NaN;
    const r = (x: number | undefined): number => Math.round(((x ?? NaN) - base) * 10) / 10;
    console.log(
      `   ${o}: commit 0, ack ${r(ack[o])}, event ${r(b.event[o])}, read ${r(b.readStart[o])}–${r(b.readEnd[o])}, applied ${r(b.applied[o])}, seen ${r(seen[o])}`,
    );
  }
}
