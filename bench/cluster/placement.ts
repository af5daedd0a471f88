// Stores placed across nodes (`latch serve --placement`), measured on one machine:
//  - each placed node's resident memory against one node holding every store (same data, same run);
//  - JSON Check throughput through one node for a store it holds (direct) and for one it does not
//    (forwarded: one more hop), interleaved rounds, the same lean keep-alive client;
//  - the time from kill -9 of a node to every store served again by K live nodes, with its
//    timeline (the victim's lease lapsing, stores back at K over time), the survivors' CPU per
//    store they loaded (/proc utime + stime), and each node's longest gap between two lease
//    renewals (its /metrics): a lease lapses when that gap reaches the lease.
// The data goes into PostgreSQL by SQL (loadData: tuples by INSERT … generate_series, one image
// built by a node and copied to every store), not through the API, and no node loads 10M tuples
// from rows; every node then starts from the images like any restart. --keep-data reuses the
// database of the last run when it holds the same data.
//
//   npx tsx bench/cluster/placement.ts --postgres-url postgres://latch:latch@127.0.0.1:5433/postgres \
//     [--stores 100] [--tuples 100000] [--nodes 5] [--replicas 2] [--lease 2000] [--requests 4000] \
//     [--kills 3] [--keep-data] [--rss-after 10] [--mmap-threshold 131072]
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The nodes run as `npm start` runs them: the compiled CLI (build first: npm run build:ts) with the
// serve V8 flags, one process each (no tsx: its compiler in every process would add ≈ 47 MB of
// resident memory that a deployed node does not have).
const entry = path.join(root, 'bin/latch.js');
const NODE_FLAGS = ['--max-semi-space-size=4', '--no-parallel-scavenge'];
const { values: a } = parseArgs({
  options: {
    'postgres-url': { type: 'string' },
    stores: { type: 'string', default: '100' },
    tuples: { type: 'string', default: '100000' },
    nodes: { type: 'string', default: '5' },
    replicas: { type: 'string', default: '2' },
    lease: { type: 'string', default: '2000' },
    requests: { type: 'string', default: '4000' },
    kills: { type: 'string', default: '3' },
    // Seconds each node stays idle between ready and its RSS reading (the all-stores node and the
    // placed ones alike): V8 collects the load's garbage once the heap is idle.
    'rss-after': { type: 'string', default: '10' },
    // glibc's mmap threshold for every node (0: glibc's default, a threshold that rises after
    // each large free): what `latch serve` sets (docs/deployment.md, "Memory of a placed node").
    'mmap-threshold': { type: 'string', default: '131072' },
    'keep-data': { type: 'boolean', default: false },
  },
});
const STORES = Number(a.stores);
const TUPLES = Number(a.tuples);
const NODES = Number(a.nodes);
const K = Number(a.replicas);
const LEASE = Number(a.lease);
const REQUESTS = Number(a.requests);
const RSS_AFTER_MS = Number(a['rss-after']) * 1000;
const MMAP_THRESHOLD = Number(a['mmap-threshold']);
if (!a['postgres-url']) throw new Error('--postgres-url is required');
const server = new URL(a['postgres-url']);
const dbName = 'latch_bench_placement';
const dbUrl = Object.assign(new URL(server), { pathname: `/${dbName}` }).toString();

interface Node {
  proc: ChildProcess;
  port: number;
  base: string;
}

/** Every node started, killed when the bench ends however it ends. */
const started = new Set<ChildProcess>();
process.on('exit', () => {
  for (const p of started) p.kill('SIGKILL');
});

function start(args: string[]): Promise<Node> {
  const proc = spawn(
    process.execPath,
    [...NODE_FLAGS, entry, 'serve', '--port', '0', '--datastore', 'postgres', '--postgres-url', dbUrl, ...args],
    {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        ...process.env,
        LATCH_NO_REEXEC: '1',
        ...(MMAP_THRESHOLD > 0 ? { MALLOC_MMAP_THRESHOLD_: String(MMAP_THRESHOLD) } : {}),
      },
    },
  );
  started.add(proc);
  proc.on('exit', () => started.delete(proc));
  let err = '';
  return new Promise((resolve, reject) => {
    proc.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /"msg":"latch listening"[^\n]*"port":(\d+)/.exec(err);
      if (m) resolve({ proc, port: Number(m[1]), base: `http://127.0.0.1:${m[1]}` });
    });
    proc.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}

/** The process's CPU time so far (ms): utime + stime from /proc (clock ticks of 10 ms). */
function cpuMs(n: Node): number {
  const f = readFileSync(`/proc/${n.proc.pid}/stat`, 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) * 10;
}

/** The node's longest gap between two successful lease renewals (s), from its metrics. */
async function renewalGap(n: Node): Promise<number> {
  const text = await (await fetch(`${n.base}/metrics`)).text();
  return Number(/^latch_placement_lease_renewal_gap_max_seconds (\S+)$/m.exec(text)?.[1]);
}

const rssMb = (n: Node): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${n.proc.pid}/status`, 'utf8'))?.[1]) / 1024;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(
  what: string,
  fn: () => Promise<boolean>,
  ms = 600_000,
  why: () => Promise<string> = () => Promise.resolve(''),
): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn().catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out: ${what} ${await why().catch(String)}`);
    await sleep(50);
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
function post(base: string, p: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}${p}`,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Checks/s of `REQUESTS` Checks through `base` on `store`, 16 at a time. */
async function throughput(base: string, store: string): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  const worker = async (): Promise<void> => {
    while (next < REQUESTS) {
      const i = next++;
      const r = await post(
        base,
        `/stores/${store}/check`,
        `{"tuple_key":{"object":"doc:${(i * 7919) % TUPLES}","relation":"viewer","user":"user:${i % 1000}"}}`,
      );
      if (r.status !== 200) throw new Error(`check ${r.status} ${r.text}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return REQUESTS / ((performance.now() - t0) / 1000);
}

/** Whether `db` already holds this run's data (`--keep-data`): the stores, their tuples and images. */
async function dataReady(db: pg.Client): Promise<string[] | undefined> {
  const stores = (
    await db.query(
      `SELECT s.id FROM latch_stores s JOIN latch_checkpoints h ON h.store_id = s.id
       WHERE s.deleted_ms IS NULL AND s.name LIKE 'bench-%' ORDER BY s.name COLLATE "C"`,
    )
  ).rows as { id: string }[];
  if (stores.length !== STORES) return undefined;
  const n = Number(
    (
      await db.query(
        'SELECT count(*) AS n FROM latch_tuples WHERE store_key = (SELECT key FROM latch_stores WHERE id = $1)',
        [stores[0]?.id],
      )
    ).rows[0].n,
  );
  return n === TUPLES ? stores.map((r) => r.id) : undefined;
}

/**
 * The data, without a node loading 10M tuples from rows: stores and models through the API;
 * each store's tuples by one server-side INSERT … generate_series (no client round trip per row,
 * in key order); store 0's checkpoint image written by a node that loads it from its tuples and
 * stops gracefully; every other store's image a copy of store 0's chunks (the same model and the
 * same tuples give the same image: it names no store), at that store's revision.
 */
async function loadData(db: pg.Client): Promise<string[]> {
  const model = JSON.stringify({
    schema_version: '1.1',
    type_definitions: [
      { type: 'user' },
      {
        type: 'doc',
        relations: { viewer: { this: {} } },
        metadata: { relations: { viewer: { directly_related_user_types: [{ type: 'user' }] } } },
      },
    ],
  });
  const t0 = performance.now();
  await db.query('SET synchronous_commit = off');
  const tuples = (id: string): Promise<unknown> =>
    db.query(
      `INSERT INTO latch_tuples (store_key, object, relation, "user", condition, written_ms)
       SELECT (SELECT key FROM latch_stores WHERE id = $1), 'doc:' || g, 'viewer', 'user:' || (g % 1000), NULL, 0
       FROM generate_series(0, $2 - 1) g ORDER BY 2`,
      [id, TUPLES],
    );
  const create = async (base: string, i: number): Promise<string> => {
    const id = (
      JSON.parse((await post(base, '/stores', `{"name":"bench-${String(i).padStart(4, '0')}"}`)).text) as {
        id: string;
      }
    ).id;
    const m = await post(base, `/stores/${id}/authorization-models`, model);
    if (m.status !== 201) throw new Error(`model ${m.status} ${m.text}`);
    return id;
  };
  // Store 0 and its image.
  let setup = await start(['--workers', '0']);
  const first = await create(setup.base, 0);
  await tuples(first);
  setup.proc.kill('SIGKILL');
  await new Promise((r) => setup.proc.on('exit', r));
  setup = await start(['--workers', '0']); // preloads store 0 from its tuples
  await until('store 0 loaded', async () => (await fetch(`${setup.base}/readyz`)).status === 200);
  setup.proc.kill('SIGTERM'); // graceful: writes store 0's image
  await new Promise((r) => setup.proc.on('exit', r));
  const head = (
    await db.query('SELECT revision, generation, chunks FROM latch_checkpoints WHERE store_id = $1', [first])
  ).rows[0] as { revision: string; generation: string; chunks: number } | undefined;
  if (!head) throw new Error('store 0 has no checkpoint image');
  // The other stores, their tuples and copies of the image.
  setup = await start(['--workers', '0']);
  const stores = [first];
  for (let i = 1; i < STORES; i++) stores.push(await create(setup.base, i));
  setup.proc.kill('SIGKILL');
  await new Promise((r) => setup.proc.on('exit', r));
  for (const id of stores.slice(1)) {
    await tuples(id);
    const rev = (await db.query('SELECT revision FROM latch_stores WHERE id = $1', [id])).rows[0].revision as string;
    if (rev !== head.revision) throw new Error(`store ${id} at revision ${rev}, the image at ${head.revision}`);
    const g = (await db.query(`SELECT nextval('latch_checkpoint_generation') AS g`)).rows[0].g as string;
    await db.query(
      `INSERT INTO latch_checkpoint_chunks (store_id, generation, idx, data)
       SELECT $1, $2, idx, data FROM latch_checkpoint_chunks WHERE store_id = $3 AND generation = $4`,
      [id, g, first, head.generation],
    );
    await db.query('INSERT INTO latch_checkpoints (store_id, revision, generation, chunks) VALUES ($1, $2, $3, $4)', [
      id,
      head.revision,
      g,
      head.chunks,
    ]);
  }
  await db.query('SET synchronous_commit = on');
  console.log(
    `data: ${STORES} stores × ${TUPLES} tuples (rows and images) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  return stores;
}

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: server.toString() });
  await admin.connect();
  let db = new pg.Client({ connectionString: dbUrl });
  let stores: string[] | undefined;
  if (a['keep-data'] && (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [dbName])).rows.length) {
    await db.connect();
    stores = await dataReady(db).catch(() => undefined);
    if (stores) await db.query('DELETE FROM latch_cluster_members');
    else await db.end();
  }
  if (!stores) {
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${dbName}`);
    const s = await start(['--workers', '0']); // creates the schema
    s.proc.kill('SIGKILL');
    await new Promise((r) => s.proc.on('exit', r));
    db = new pg.Client({ connectionString: dbUrl });
    await db.connect();
    stores = await loadData(db);
  } else console.log(`data: ${STORES} stores × ${TUPLES} tuples kept from the last run`);
  await admin.end();

  // One node holding every store (the replica topology), loaded from the same images.
  const all = await start(['--workers', '0']);
  const ta = performance.now();
  await until('all-stores node ready', async () => (await fetch(`${all.base}/readyz`)).status === 200);
  const loadAll = (performance.now() - ta) / 1000;
  const rssAllReady = rssMb(all);
  await sleep(RSS_AFTER_MS);
  const rssAll = rssMb(all);
  // Start-up included (≈ 0.3 s of CPU for an empty node): an upper bound of the load CPU per store.
  const loadCpuMsPerStore = cpuMs(all) / STORES;
  console.log(
    `one node, every store: ready in ${loadAll.toFixed(1)} s, RSS ${rssAllReady.toFixed(0)} MB at ready, ${rssAll.toFixed(0)} MB ${RSS_AFTER_MS / 1000} s later, CPU ${loadCpuMsPerStore.toFixed(0)} ms per store (start-up included; load ${loadavg()[0]?.toFixed(1)})`,
  );
  all.proc.kill('SIGKILL'); // the images are there already
  await new Promise((r) => all.proc.on('exit', r));

  // N placed nodes.
  const flags = ['--workers', '0', '--placement', '--replicas', String(K), '--placement-lease', String(LEASE)];
  const nodes = await Promise.all(Array.from({ length: NODES }, () => start(flags)));
  const idOf = (n: Node): string => `127.0.0.1:${n.port}`;
  const readyHolders = async (): Promise<Map<string, string[]>> => {
    const rows = (await db.query('SELECT node_id, ready FROM latch_cluster_members WHERE lease_until > now()'))
      .rows as { node_id: string; ready: string[] }[];
    const out = new Map<string, string[]>();
    for (const r of rows) for (const s of r.ready) (out.get(s) ?? out.set(s, []).get(s))?.push(r.node_id);
    return out;
  };
  /** Every store ready on K live nodes, `gone` (a killed node whose lease has not lapsed yet) not counted. */
  const everyStoreAtK = async (gone = ''): Promise<boolean> => {
    const held = await readyHolders();
    return stores.every((s) => (held.get(s)?.filter((n) => n !== gone).length ?? 0) >= K);
  };
  /** Every store on exactly K nodes (the handed-off copies dropped) and every node ready. */
  const settled = async (): Promise<boolean> => {
    const held = await readyHolders();
    if (!stores.every((s) => held.get(s)?.length === K)) return false;
    const r = await Promise.all(nodes.map(async (n) => (await fetch(`${n.base}/readyz`)).status));
    return r.every((s) => s === 200);
  };
  const tp = performance.now();
  /** Live members with their ready and loading counts (why a settle timed out). */
  const members = async (): Promise<string> =>
    JSON.stringify(
      (
        await db.query(
          'SELECT node_id, lease_until > now() AS live, cardinality(ready) AS ready, cardinality(loading) AS loading FROM latch_cluster_members',
        )
      ).rows,
    );
  await until('placed nodes settled', settled, 600_000, members);
  console.log(`${NODES} placed nodes settled in ${((performance.now() - tp) / 1000).toFixed(1)} s`);
  const held = await readyHolders();
  const rssReady = nodes.map((n) => Math.round(rssMb(n)));
  await sleep(RSS_AFTER_MS);
  const rss = nodes.map((n, i) => ({
    node: idOf(n),
    stores: stores.filter((s) => held.get(s)?.includes(idOf(n))).length,
    rssMbAtSettle: rssReady[i] as number,
    rssMb: Math.round(rssMb(n)),
  }));
  for (const r of rss)
    console.log(
      `  ${r.node}: ${r.stores} stores, RSS ${r.rssMb} MB = ${(r.rssMb / rssAll).toFixed(2)} of the all-stores node ${RSS_AFTER_MS / 1000} s after settling (at settling ${r.rssMbAtSettle} MB = ${(r.rssMbAtSettle / rssAllReady).toFixed(2)} of it at ready)`,
    );

  // Direct vs forwarded Checks through node 0, interleaved.
  const a0 = nodes[0] as Node;
  const mine = stores.find((s) => held.get(s)?.includes(idOf(a0))) as string;
  const theirs = stores.find((s) => !held.get(s)?.includes(idOf(a0))) as string;
  await throughput(a0.base, mine);
  await throughput(a0.base, theirs);
  const rounds: { direct: number; forwarded: number }[] = [];
  for (let i = 0; i < 3; i++)
    rounds.push({ direct: await throughput(a0.base, mine), forwarded: await throughput(a0.base, theirs) });
  for (const r of rounds)
    console.log(
      `  Checks/s direct ${r.direct.toFixed(0)}, forwarded ${r.forwarded.toFixed(0)} (${(r.forwarded / r.direct).toFixed(2)})`,
    );

  // kill -9 of a node → every store served by K live nodes again; then a new node joins and the
  // cluster settles before the next kill.
  const kills: {
    seconds: number;
    lapsed: number;
    fewestLive: number;
    storesLost: number;
    load1: number;
    /** [seconds after the kill, stores of the victim back on K live nodes] at each change. */
    timeline: [number, number][];
    /** The survivors' CPU during the take-over per store the victim held (ms). */
    cpuMsPerStore: number;
    /** Each survivor's longest gap between lease renewals so far (s). */
    renewalGapMax: number[];
  }[] = [];
  for (let k = 0; k < Number(a.kills); k++) {
    const victim = nodes.pop() as Node;
    const lostStores: string[] = [];
    for (const [s, ns] of await readyHolders()) if (ns.includes(idOf(victim))) lostStores.push(s);
    const storesLost = lostStores.length;
    const cpu0 = nodes.map(cpuMs);
    const timeline: [number, number][] = [];
    const tk = performance.now();
    victim.proc.kill('SIGKILL');
    // Where the time goes: the victim's lease lapsing, then the loads; and whether another
    // member's lease lapsed meanwhile (its heartbeats delayed by the loading).
    let lapsed = NaN;
    let fewestLive = NODES;
    await until('re-replicated', async () => {
      const live = (
        (await db.query('SELECT node_id FROM latch_cluster_members WHERE lease_until > now()')).rows as {
          node_id: string;
        }[]
      ).map((r) => r.node_id);
      if (Number.isNaN(lapsed) && !live.includes(idOf(victim))) lapsed = (performance.now() - tk) / 1000;
      fewestLive = Math.min(fewestLive, live.filter((n) => n !== idOf(victim)).length);
      const held = await readyHolders();
      const back = lostStores.filter(
        (s) => (held.get(s)?.filter((n) => n !== idOf(victim) && live.includes(n)).length ?? 0) >= K,
      ).length;
      if (timeline.length === 0 || timeline[timeline.length - 1]?.[1] !== back)
        timeline.push([Number(((performance.now() - tk) / 1000).toFixed(2)), back]);
      return everyStoreAtK(idOf(victim));
    });
    const seconds = (performance.now() - tk) / 1000;
    const cpu = nodes.reduce((sum, n, i) => sum + cpuMs(n) - (cpu0[i] as number), 0);
    const renewalGapMax = await Promise.all(nodes.map(renewalGap));
    kills.push({
      seconds,
      lapsed,
      fewestLive,
      storesLost,
      load1: loadavg()[0] as number,
      timeline,
      cpuMsPerStore: cpu / Math.max(1, storesLost),
      renewalGapMax,
    });
    console.log(
      `kill -9 of a node holding ${storesLost} stores → every store on ${K} live nodes: ${seconds.toFixed(2)} s (its lease lapsed after ${lapsed.toFixed(2)} s; fewest other live members meanwhile ${fewestLive} of ${NODES - 1}; lease ${LEASE / 1000} s, load ${loadavg()[0]?.toFixed(1)})`,
    );
    console.log(
      `  timeline [s, stores back at K]: ${timeline.map(([t, n]) => `${t}:${n}`).join(' ')}; survivors' CPU ${(cpu / 1000).toFixed(1)} s = ${(cpu / Math.max(1, storesLost)).toFixed(0)} ms per store lost; longest renewal gap per survivor ${renewalGapMax.map((g) => g.toFixed(2)).join(' ')} s`,
    );
    if (k + 1 < Number(a.kills)) {
      nodes.push(await start(flags));
      await until('settled after a join', settled, 600_000, members);
    }
  }
  const sorted = kills.map((x) => x.seconds).sort((x, y) => x - y);
  const median = sorted[Math.floor(sorted.length / 2)] ?? NaN;
  console.log(`kill -9 → K again, median of ${kills.length}: ${median.toFixed(2)} s`);
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(
    JSON.stringify({
      stores: STORES,
      tuples: TUPLES,
      nodes: NODES,
      k: K,
      leaseMs: LEASE,
      rssAll,
      rssAllReady,
      rssAfterMs: RSS_AFTER_MS,
      mmapThreshold: MMAP_THRESHOLD,
      loadAll,
      loadCpuMsPerStore,
      rss,
      rounds,
      kills,
      reReplicatedMedian: median,
    }),
  );
  for (const n of nodes) n.proc.kill('SIGKILL');
  await db.end();
  agent.destroy();
}

await main();
