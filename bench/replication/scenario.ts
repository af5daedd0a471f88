// Replicas over one PostgreSQL database (scenario `replication`): latch nodes in their own processes
// (bench/replication/node.ts) on one PostgreSQL server (LATCH_TEST_POSTGRES_URL, else a throwaway
// embedded one: test/support/postgres-server.ts). Measures, in one run:
// - replication lag: a Write acknowledged by node A → the first MINIMIZE_LATENCY Check on node B
//   that sees it (B is asked back to back from the acknowledgement on, so the figure is an upper
//   bound by one Check round trip), p50/p99 at 100 and 1,000 offered writes/s;
// - HIGHER_CONSISTENCY Check vs plain Check on a caught-up node, p50/p99 (sequential requests);
// - JSON Check throughput (wrk) on a replica vs a single-node latch (memory) in the same run;
// - two latch processes vs one for JSON Check traffic (wrk against each);
// - cold start of a new replica from the checkpoint image in PostgreSQL at 1M tuples (10M with --big).
// Every answer a figure depends on is verified.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { SERVE_NODE_FLAGS } from '../../src/cli/node-flags.js';
import { openStorage } from '../../src/storage/index.js';
import { startPostgres } from '../../test/support/postgres-server.js';
import { cpuPerRequest, wrk } from '../http/scenario.js';
import { verify, type Metric, type RunOptions, type Scenario } from '../scenario.js';
import type { Trace } from './trace.js';
import { offer } from '../harness.js';
import { LeanClient } from '../http/lean-client.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

interface Node {
  readonly proc: ChildProcess;
  /** With a trace file (trace.ts): writes it and resolves with its contents. */
  readonly dump: () => Promise<Trace>;
  readonly base: string;
  readonly port: number;
  /** Resolves with the node's own clock (ms since its process started) once its indexes are loaded. */
  readonly ready: Promise<number>;
}

/**
 * A node in its own process; `cpus` pins it (taskset -c) when given; `trace` names its trace file.
 */
function startNode(
  pgUrl: string | undefined,
  o: { cpus?: string | undefined; trace?: string | undefined } = {},
): Promise<Node> {
  const env: Record<string, string> = { ...(process.env as Record<string, string>) };
  if (pgUrl) env.LATCH_BENCH_PG_URL = pgUrl;
  else delete env.LATCH_BENCH_PG_URL;
  if (o.trace) env.LATCH_BENCH_TRACE = o.trace;
  else delete env.LATCH_BENCH_TRACE;
  const argv = [process.execPath, ...SERVE_NODE_FLAGS, '--import', 'tsx', path.join(here, 'node.ts')];
  const cmd = o.cpus ? ['taskset', '-c', o.cpus, ...argv] : argv;
  const proc = spawn(cmd[0] as string, cmd.slice(1), { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
  let readyResolve: (ms: number) => void = () => undefined;
  const ready = new Promise<number>((r) => (readyResolve = r));
  let traced: (() => void) | undefined;
  const dump = async (): Promise<Trace> => {
    if (!o.trace) throw new Error('node started without a trace file');
    await new Promise<void>((r) => {
      traced = r;
      proc.kill('SIGUSR2');
    });
    return JSON.parse(readFileSync(o.trace, 'utf8')) as Trace;
  };
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`replication node exited (${code}) before listening`)));
    lines.on('line', (line) => {
      if (!line.startsWith('{')) return;
      const msg = JSON.parse(line) as { port?: number; ready?: number; traced?: string };
      if (msg.port) resolve({ proc, port: msg.port, base: `http://127.0.0.1:${msg.port}`, ready, dump });
      if (msg.ready !== undefined) readyResolve(msg.ready);
      if (msg.traced) traced?.();
    });
  });
}

function dropClient(n: Node): void {
  clients.get(n.base)?.close();
  clients.delete(n.base);
}

/** A graceful stop (the node writes its checkpoints at close); anything but exit code 0 fails the run. */
async function stopNode(n: Node): Promise<void> {
  dropClient(n);
  const { exitCode, signalCode } = n.proc;
  const how =
    exitCode !== null || signalCode !== null
      ? String(exitCode ?? signalCode)
      : await new Promise<string>((r) => {
          n.proc.once('exit', (code, signal) => r(String(code ?? signal)));
          n.proc.kill('SIGTERM');
        });
  if (how !== '0') throw new Error(`replication node stopped with ${how}, not 0`);
}

/** kill -9 (a node that only read), resolved once it has exited. */
async function killNode(n: Node): Promise<void> {
  dropClient(n);
  if (n.proc.exitCode !== null || n.proc.signalCode !== null) return;
  await new Promise<void>((r) => {
    n.proc.once('exit', () => r());
    n.proc.kill('SIGKILL');
  });
}

/** One lean keep-alive client per node (bench/http/lean-client.ts), closed with the node. */
const clients = new Map<string, LeanClient>();

async function post(
  base: string,
  p: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: Record<string, unknown> }> {
  let client = clients.get(base);
  if (!client) clients.set(base, (client = new LeanClient(base, 64)));
  const r = await client.post(p, body, headers);
  return { status: r.status, json: r.text ? (JSON.parse(r.text) as Record<string, unknown>) : {} };
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

async function newStore(base: string, name: string): Promise<{ store: string; model: string }> {
  const store = (await post(base, '/stores', { name })).json.id as string;
  const model = (await post(base, `/stores/${store}/authorization-models`, MODEL)).json
    .authorization_model_id as string;
  return { store, model };
}

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function percentile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

const median = (xs: readonly number[]): number =>
  percentile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );

/**
 * Offers `rate` writes/s of one new tuple each to A for `seconds`, round robin over `stores` (open
 * loop: each write leaves at its slot whatever the latency; one store's writes are serialized by
 * its revision order, so several stores carry high rates). Per store, one poller asks B, back to
 * back, whether the newest acknowledged write not yet seen is visible to a MINIMIZE_LATENCY Check;
 * revisions apply in order, so when it is, every earlier one of that store is too, and each of
 * them gets lag = now − its acknowledgement (an upper bound by one Check round trip).
 */
async function lag(
  a: Node,
  b: Node,
  stores: readonly string[],
  rate: number,
  seconds: number,
): Promise<{ lags: number[]; achieved: number; objects: string[] }> {
  const total = Math.round(rate * seconds);
  const lags: number[] = [];
  const objects: string[] = [];
  const queues = stores.map(() => [] as { key: { user: string; relation: string; object: string }; acked: number }[]);
  const wake: (() => void)[] = stores.map(() => () => undefined);
  let writing = true;
  const poller = async (s: number): Promise<void> => {
    const q = queues[s] as { key: { user: string; relation: string; object: string }; acked: number }[];
    for (;;) {
      if (q.length === 0) {
        if (!writing) return;
        await new Promise<void>((r) => (wake[s] = r));
        continue;
      }
      const newest = q[q.length - 1] as (typeof q)[number];
      const c = await post(b.base, `/stores/${stores[s]}/check`, {
        tuple_key: newest.key,
        consistency: 'MINIMIZE_LATENCY',
      });
      if (c.json.allowed !== true) continue;
      const now = performance.now();
      const seen = q.splice(0, q.indexOf(newest) + 1);
      for (const w of seen) lags.push(now - w.acked);
    }
  };
  const pollers = stores.map((_, s) => poller(s));
  const one = async (i: number): Promise<void> => {
    const s = i % stores.length;
    const key = { user: 'user:lag', relation: 'viewer', object: `doc:r${rate}-${i}` };
    objects.push(key.object);
    const w = await post(a.base, `/stores/${stores[s]}/write`, { writes: { tuple_keys: [key] } });
    verify(`write ${i}`, w.status, 200);
    queues[s]?.push({ key, acked: performance.now() });
    wake[s]?.();
  };
  // At most 64 writes in flight: past that the offered rate is not met (the achieved one is reported).
  const achieved = await offer(rate, total, 64, one);
  writing = false;
  for (const w of wake) w();
  await Promise.all(pollers);
  verify('every write seen on B', lags.length, total);
  return { lags: lags.sort((x, y) => x - y), achieved, objects };
}

/**
 * The same writes timed by the nodes themselves (trace.ts, epoch clocks of one machine): A's commit
 * → B's index applied it (0 when B applied it before A's storage call returned), and B's own
 * share, its commit event received → applied. Neither includes a client's or the network's time.
 */
function nodeLags(
  objects: readonly string[],
  ta: Trace,
  tb: Trace,
): { commitToApplied: number[]; eventToApplied: number[]; noEvent: number } {
  const commitToApplied: number[] = [];
  const eventToApplied: number[] = [];
  let noEvent = 0;
  for (const o of objects) {
    const applied = tb.applied[o];
    const commit = ta.commit[o];
    verify(`trace of ${o}`, applied !== undefined && commit !== undefined, true);
    commitToApplied.push(Math.max(0, (applied as number) - (commit as number)));
    const event = tb.event[o];
    if (event === undefined || Number.isNaN(event)) noEvent++;
    else eventToApplied.push(Math.max(0, (applied as number) - event));
  }
  const sort = (xs: number[]): number[] => xs.sort((x, y) => x - y);
  return { commitToApplied: sort(commitToApplied), eventToApplied: sort(eventToApplied), noEvent };
}

/** Sequential Checks alternating plain and HIGHER_CONSISTENCY; latency of each (ms), sorted. */
async function consistencyLatency(
  n: Node,
  store: string,
  count: number,
): Promise<{ plain: number[]; higher: number[] }> {
  const key = { user: 'user:lag', relation: 'viewer', object: 'doc:r100-0' }; // written to the first store
  const plain: number[] = [];
  const higher: number[] = [];
  for (let i = 0; i < count; i++) {
    for (const [consistency, out] of [
      ['MINIMIZE_LATENCY', plain],
      ['HIGHER_CONSISTENCY', higher],
    ] as const) {
      const t = performance.now();
      const r = await post(n.base, `/stores/${store}/check`, { tuple_key: key, consistency });
      out.push(performance.now() - t);
      verify(`check ${consistency}`, r.json.allowed, true);
    }
  }
  return { plain: plain.sort((x, y) => x - y), higher: higher.sort((x, y) => x - y) };
}

/**
 * The same store as `fill`, made by PostgreSQL itself: the rows (tuples, change log, revision
 * times, the store's revision) that `count / 100` writes of 100 tuples leave, from
 * generate_series in one transaction. Used past 1M tuples, where writes through the API at ≈ 14k
 * tuples/s would take 12 minutes for 10M.
 */
async function bulkFill(url: string, count: number): Promise<string> {
  const storage = await openStorage({ postgres: { url, poolSize: 1 } });
  let store: string;
  try {
    store = (await storage.createStore('cold')).id;
    await storage.writeModel(store, MODEL);
  } finally {
    await storage.close();
  }
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const ms = Date.now();
    const revisions = Math.ceil(count / 100);
    await c.query('BEGIN');
    await c.query(
      `INSERT INTO latch_tuples (store_key, object, relation, "user", condition, written_ms)
       SELECT (SELECT key FROM latch_stores WHERE id = $1), 'doc:' || i, 'viewer', 'user:u' || (i % 1000), NULL, $2 FROM generate_series(0, $3 - 1) AS i`,
      [store, ms, count],
    );
    await c.query(
      `INSERT INTO latch_changes (store_id, revision, seq, deleted, object, object_type, relation, "user", condition, ms)
       SELECT $1, 1 + i / 100, i % 100, false, 'doc:' || i, 'doc', 'viewer', 'user:u' || (i % 1000), NULL, $2 FROM generate_series(0, $3 - 1) AS i`,
      [store, ms, count],
    );
    await c.query(
      'INSERT INTO latch_revisions (store_id, revision, ms) SELECT $1, r, $2 FROM generate_series(1, $3) AS r',
      [store, ms, revisions],
    );
    await c.query('UPDATE latch_stores SET revision = $2, last_ms = $3 WHERE id = $1', [store, revisions, ms]);
    await c.query('COMMIT');
    await c.query('ANALYZE latch_tuples');
  } finally {
    await c.end();
  }
  return store;
}

/** A store of `count` tuples (user:u<i % 1000> views doc:<i>) written straight through storage, 100 per write, 8 at once. */
async function fill(url: string, count: number): Promise<string> {
  const storage = await openStorage({ postgres: { url, poolSize: 8 } });
  try {
    const store = (await storage.createStore('cold')).id;
    await storage.writeModel(store, MODEL);
    let next = 0;
    const worker = async (): Promise<void> => {
      for (;;) {
        const start = next;
        next += 100;
        if (start >= count) return;
        const writes = Array.from({ length: Math.min(100, count - start) }, (_, k) => ({
          user: `user:u${(start + k) % 1000}`,
          relation: 'viewer',
          object: `doc:${start + k}`,
        }));
        await storage.writeTuples(store, { writes, deletes: [], onDuplicate: 'error', onMissing: 'error' });
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    return store;
  } finally {
    await storage.close();
  }
}

async function checkpointRevision(url: string, store: string): Promise<{ image: number | undefined; head: number }> {
  const storage = await openStorage({ postgres: { url, poolSize: 1 } });
  try {
    const head = await storage.revision(store);
    const cp = await storage.readCheckpoint(store);
    // Not read: giving the iterator back ends the read transaction and frees the connection.
    await cp?.chunks[Symbol.asyncIterator]().return?.();
    return { image: cp?.revision, head };
  } finally {
    await storage.close();
  }
}

export const replication: Scenario = {
  name: 'replication',
  description:
    'replicas over one PostgreSQL: lag, HIGHER_CONSISTENCY cost, replica vs single-node Check throughput, 2 processes vs 1, cold start from the image',
  async run(opts: RunOptions): Promise<Metric[]> {
    const out: Metric[] = [];
    const m = (metric: string, value: number, unit: string): void => {
      out.push({ scenario: 'replication', metric, value: Math.round(value * 1000) / 1000, unit });
      process.stderr.write(`  ${metric}: ${Math.round(value * 1000) / 1000} ${unit}\n`);
    };
    const step = (what: string): void => void process.stderr.write(`  … ${what}\n`);
    step('starting PostgreSQL');
    const server = await startPostgres();
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    const dbName = `latch_bench_${Date.now()}`;
    await admin.query(`CREATE DATABASE ${dbName}`);
    const u = new URL(server.url);
    u.pathname = `/${dbName}`;
    const url = u.toString();
    const nodes: Node[] = [];
    try {
      step('starting nodes A and B');
      const a = await startNode(url, { trace: path.join(tmpdir(), `latch-bench-trace-a-${process.pid}.json`) });
      nodes.push(a);
      const b = await startNode(url, { trace: path.join(tmpdir(), `latch-bench-trace-b-${process.pid}.json`) });
      nodes.push(b);
      await Promise.all([a.ready, b.ready]);
      const stores: string[] = [];
      for (let i = 0; i < 8; i++) stores.push((await newStore(a.base, `lag${i}`)).store);
      const store = stores[0] as string;
      // B loads each store's index at its first query: done here, so the lag is the steady state's.
      for (const s of stores)
        verify(
          'warm-up Check on B',
          (
            await post(b.base, `/stores/${s}/check`, {
              tuple_key: { user: 'user:lag', relation: 'viewer', object: 'doc:warm' },
            })
          ).json.allowed,
          false,
        );
      const seconds = opts.quick ? 2 : 5;
      // LATCH_BENCH_COLD_ONLY=1: only the cold start (the 10M fill and load take minutes);
      // LATCH_BENCH_LAG_ONLY=1: only the replication lag.
      const lagOnly = process.env.LATCH_BENCH_LAG_ONLY === '1';
      if (process.env.LATCH_BENCH_COLD_ONLY !== '1') {
        for (const rate of [100, 1000]) {
          step(`lag at ${rate} writes/s`);
          const r = await lag(a, b, stores, rate, seconds);
          m(`lag p50 @${rate} writes/s`, percentile(r.lags, 0.5), 'ms');
          m(`lag p99 @${rate} writes/s`, percentile(r.lags, 0.99), 'ms');
          m(`lag max @${rate} writes/s`, r.lags[r.lags.length - 1] ?? NaN, 'ms');
          m(`writes/s achieved @${rate} offered`, r.achieved, 'writes/s');
          const n = nodeLags(r.objects, await a.dump(), await b.dump());
          m(`lag p50 @${rate}, node clocks: A commit → B applied`, percentile(n.commitToApplied, 0.5), 'ms');
          m(`lag p99 @${rate}, node clocks: A commit → B applied`, percentile(n.commitToApplied, 0.99), 'ms');
          m(`follower p50 @${rate}, B: commit event → applied`, percentile(n.eventToApplied, 0.5), 'ms');
          m(`follower p99 @${rate}, B: commit event → applied`, percentile(n.eventToApplied, 0.99), 'ms');
          m(`writes applied by B without their event @${rate}`, n.noEvent, 'writes');
        }
        if (lagOnly) return out;
        const c = await consistencyLatency(b, store, opts.quick ? 300 : 2000);
        m('plain Check p50 (replica, sequential)', percentile(c.plain, 0.5), 'ms');
        m('plain Check p99 (replica, sequential)', percentile(c.plain, 0.99), 'ms');
        m('HIGHER_CONSISTENCY Check p50 (replica, sequential)', percentile(c.higher, 0.5), 'ms');
        m('HIGHER_CONSISTENCY Check p99 (replica, sequential)', percentile(c.higher, 0.99), 'ms');

        // Throughput: a replica on PostgreSQL vs a single node on memory, same store shape.
        const single = await startNode(undefined);
        nodes.push(single);
        await single.ready;
        const one = await newStore(single.base, 'single');
        const key = { user: 'user:lag', relation: 'viewer', object: 'doc:r100-0' };
        verify(
          'single write',
          (await post(single.base, `/stores/${one.store}/write`, { writes: { tuple_keys: [key] } })).status,
          200,
        );
        const body = JSON.stringify({ tuple_key: key });
        const per = opts.quick ? 2 : 4;
        const replicaRps: number[] = [];
        const singleRps: number[] = [];
        const replicaP99: number[] = [];
        const singleP99: number[] = [];
        for (let round = 0; round < 3; round++) {
          const r1 = await wrk(`${b.base}/stores/${store}/check`, body, per, 32);
          const r2 = await wrk(`${single.base}/stores/${one.store}/check`, body, per, 32);
          verify('wrk replica non-2xx', r1.non2xx, 0);
          verify('wrk single non-2xx', r2.non2xx, 0);
          replicaRps.push(r1.rps);
          singleRps.push(r2.rps);
          replicaP99.push(r1.p99);
          singleP99.push(r2.p99);
        }
        m('JSON Check req/s, replica on PostgreSQL (median of 3)', median(replicaRps), 'req/s');
        m('JSON Check req/s, single node on memory (median of 3)', median(singleRps), 'req/s');
        m('JSON Check p99, replica (wrk, 32 conns)', median(replicaP99), 'ms');
        m('JSON Check p99, single node (wrk, 32 conns)', median(singleP99), 'ms');
        await stopNode(single);
        nodes.splice(nodes.indexOf(single), 1);

        // Two processes vs one: wrk on A alone, then wrk on A and on B at the same time. Unpinned,
        // wrk, PostgreSQL and the nodes share both cores; then pinned (taskset): the nodes on core 0,
        // wrk on core 1, so the nodes' core is theirs alone and the CPU per request is comparable.
        const alone: number[] = [];
        const both: number[] = [];
        for (let round = 0; round < 3; round++) {
          alone.push((await wrk(`${a.base}/stores/${store}/check`, body, per, 32)).rps);
          const [ra, rb] = await Promise.all([
            wrk(`${a.base}/stores/${store}/check`, body, per, 32),
            wrk(`${b.base}/stores/${store}/check`, body, per, 32),
          ]);
          verify('wrk 2 processes non-2xx', ra.non2xx + rb.non2xx, 0);
          both.push(ra.rps + rb.rps);
        }
        m('JSON Check req/s, 1 process (median of 3)', median(alone), 'req/s');
        m('JSON Check req/s, 2 processes (sum, median of 3)', median(both), 'req/s');
        if (hasTaskset()) {
          const pin = (n: Node, cpus: string): void =>
            void execFileSync('taskset', ['-a', '-p', '-c', cpus, String(n.proc.pid)], { stdio: 'ignore' });
          pin(a, '0');
          pin(b, '0');
          const pinnedAlone: number[] = [];
          const pinnedBoth: number[] = [];
          const usAlone: number[] = [];
          const usBoth: number[] = [];
          for (let round = 0; round < 3; round++) {
            const one = await cpuPerRequest(a.proc, () =>
              wrk(`${a.base}/stores/${store}/check`, body, per, 32, 0, '1'),
            );
            verify('wrk pinned non-2xx', one.run.non2xx, 0);
            pinnedAlone.push(one.run.rps);
            usAlone.push(one.us);
            const [ra, rb] = await Promise.all([
              cpuPerRequest(a.proc, () => wrk(`${a.base}/stores/${store}/check`, body, per, 16, 0, '1')),
              cpuPerRequest(b.proc, () => wrk(`${b.base}/stores/${store}/check`, body, per, 16, 0, '1')),
            ]);
            verify('wrk pinned 2 processes non-2xx', ra.run.non2xx + rb.run.non2xx, 0);
            pinnedBoth.push(ra.run.rps + rb.run.rps);
            usBoth.push((ra.us * ra.run.requests + rb.us * rb.run.requests) / (ra.run.requests + rb.run.requests));
          }
          m('JSON Check req/s, 1 process pinned to core 0, wrk on core 1 (median of 3)', median(pinnedAlone), 'req/s');
          m(
            'JSON Check req/s, 2 processes both on core 0, wrk on core 1 (sum, median of 3)',
            median(pinnedBoth),
            'req/s',
          );
          m('node CPU per Check, 1 process pinned (median of 3)', median(usAlone), 'µs');
          m('node CPU per Check, 2 processes on one core (median of 3)', median(usBoth), 'µs');
          pin(a, '0,1');
          pin(b, '0,1');
        }
      }

      // Cold start of a new replica from the checkpoint image.
      for (const size of opts.big ? [1_000_000, 10_000_000] : [opts.quick ? 100_000 : 1_000_000]) {
        const t0 = performance.now();
        const bulk = size > 1_000_000;
        const cold = bulk ? await bulkFill(url, size) : await fill(url, size);
        m(
          bulk
            ? `fill ${size} tuples (generated in PostgreSQL, one transaction)`
            : `fill ${size} tuples (100-tuple writes, 8 at once)`,
          (size / (performance.now() - t0)) * 1000,
          'tuples/s',
        );
        step(`filled ${size} tuples in ${Math.round(performance.now() - t0) / 1000} s`);
        // A first node scans the tuples and checkpoints the image in the background; a graceful
        // stop waits for that checkpoint.
        const t1 = performance.now();
        const first = await startNode(url);
        await first.ready;
        await stopNode(first);
        step(`first node: scan, checkpoint, stop in ${Math.round(performance.now() - t1) / 1000} s`);
        const cp = await checkpointRevision(url, cold);
        verify('checkpoint at the head', cp.image, cp.head);
        // LATCH_BENCH_COLD_RUNS (3) new nodes, one after the other, on the same image; each is
        // killed once it has answered (it only read: the image stays as it is).
        const walls: number[] = [];
        const owns: number[] = [];
        for (let run = 0; run < Number(process.env.LATCH_BENCH_COLD_RUNS ?? 3); run++) {
          const spawned = performance.now();
          const fresh = await startNode(url);
          nodes.push(fresh);
          owns.push(await fresh.ready);
          walls.push(performance.now() - spawned);
          const probe = await post(fresh.base, `/stores/${cold}/check`, {
            tuple_key: { user: `user:u${(size - 1) % 1000}`, relation: 'viewer', object: `doc:${size - 1}` },
          });
          verify('cold replica answer', probe.json.allowed, true);
          await killNode(fresh);
          nodes.splice(nodes.indexOf(fresh), 1);
        }
        step(`cold starts, ${size} tuples: ${walls.map((w) => (w / 1000).toFixed(2)).join(', ')} s`);
        m(`cold start from image, ${size} tuples (spawn → serving, median)`, median(walls) / 1000, 's');
        m(`cold start from image, ${size} tuples (spawn → serving, max)`, Math.max(...walls) / 1000, 's');
        m(`cold start from image, ${size} tuples (process clock at ready, median)`, median(owns) / 1000, 's');
      }
    } finally {
      for (const n of nodes) await stopNode(n).catch(() => undefined);
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
      await admin.end();
      await server.stop();
    }
    return out;
  },
};
