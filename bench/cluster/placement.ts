// Stores placed across nodes (`latch serve --placement`), measured on one machine:
//  - each placed node's resident memory against one node holding every store (same data, same run);
//  - JSON Check throughput through one node for a store it holds (direct) and for one it does not
//    (forwarded: one more hop), interleaved rounds, the same lean keep-alive client;
//  - the time from kill -9 of a node to every store served again by K live nodes.
// The data goes into PostgreSQL by SQL (INSERT … generate_series), not through the API, so a
// large set is ready in seconds; the nodes then load it from the tuples like any first start.
//
//   npx tsx bench/cluster/placement.ts --postgres-url postgres://latch:latch@127.0.0.1:5433/postgres \
//     [--stores 100] [--tuples 100000] [--nodes 5] [--replicas 2] [--lease 2000] [--requests 4000]
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const entry = path.join(root, 'test/cli/latch-entry.ts');
const { values: a } = parseArgs({
  options: {
    'postgres-url': { type: 'string' },
    stores: { type: 'string', default: '100' },
    tuples: { type: 'string', default: '100000' },
    nodes: { type: 'string', default: '5' },
    replicas: { type: 'string', default: '2' },
    lease: { type: 'string', default: '2000' },
    requests: { type: 'string', default: '4000' },
  },
});
const STORES = Number(a.stores);
const TUPLES = Number(a.tuples);
const NODES = Number(a.nodes);
const K = Number(a.replicas);
const LEASE = Number(a.lease);
const REQUESTS = Number(a.requests);
if (!a['postgres-url']) throw new Error('--postgres-url is required');
const server = new URL(a['postgres-url']);
const dbName = 'latch_bench_placement';
const dbUrl = Object.assign(new URL(server), { pathname: `/${dbName}` }).toString();

interface Node {
  proc: ChildProcess;
  port: number;
  base: string;
}

function start(args: string[]): Promise<Node> {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', entry, 'serve', '--port', '0', '--datastore', 'postgres', '--postgres-url', dbUrl, ...args],
    { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] },
  );
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

const rssMb = (n: Node): number =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${n.proc.pid}/status`, 'utf8'))?.[1]) / 1024;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(what: string, fn: () => Promise<boolean>, ms = 600_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await fn().catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
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

async function main(): Promise<void> {
  const admin = new pg.Client({ connectionString: server.toString() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${dbName}`);
  await admin.end();
  const db = new pg.Client({ connectionString: dbUrl });

  // The data: stores and models through the API, tuples by SQL.
  const setup = await start(['--workers', '0']);
  await db.connect();
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
  const stores: string[] = [];
  for (let i = 0; i < STORES; i++) {
    const id = (JSON.parse((await post(setup.base, '/stores', `{"name":"bench-${i}"}`)).text) as { id: string }).id;
    await post(setup.base, `/stores/${id}/authorization-models`, model);
    stores.push(id);
  }
  setup.proc.kill('SIGKILL');
  const t0 = performance.now();
  await db.query(
    `INSERT INTO latch_tuples (store_id, object, object_type, relation, "user", condition, written_ms)
     SELECT s.id, 'doc:' || g, 'doc', 'viewer', 'user:' || (g % 1000), NULL, 0
     FROM latch_stores s, generate_series(0, $1 - 1) g`,
    [TUPLES],
  );
  console.log(
    `data: ${STORES} stores × ${TUPLES} tuples inserted in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );

  // One node holding every store (the replica topology), loaded from the tuples (and checkpointed at close).
  const all = await start(['--workers', '0']);
  const ta = performance.now();
  await until('all-stores node ready', async () => (await fetch(`${all.base}/readyz`)).status === 200);
  const loadAll = (performance.now() - ta) / 1000;
  const rssAll = rssMb(all);
  console.log(`one node, every store: ready in ${loadAll.toFixed(1)} s, RSS ${rssAll.toFixed(0)} MB`);
  all.proc.kill('SIGTERM'); // graceful: writes each store's checkpoint image, which the placed nodes load from
  await new Promise((r) => all.proc.on('exit', r));

  // N placed nodes.
  const flags = ['--workers', '0', '--placement', '--replicas', String(K), '--placement-lease', String(LEASE)];
  const nodes = await Promise.all(Array.from({ length: NODES }, () => start(flags)));
  const idOf = (n: Node): string => `127.0.0.1:${n.port}`;
  const readyHolders = async (): Promise<Map<string, string[]>> => {
    const rows = (await db.query('SELECT node_id, ready FROM latch_cluster_members WHERE lease_until > now()'))
      .rows as {
      node_id: string;
      ready: string[];
    }[];
    const out = new Map<string, string[]>();
    for (const r of rows) for (const s of r.ready) (out.get(s) ?? out.set(s, []).get(s))?.push(r.node_id);
    return out;
  };
  /** Every store ready on K live nodes, `gone` (a killed node whose lease has not lapsed yet) not counted. */
  const everyStoreAtK = async (gone = ''): Promise<boolean> => {
    const held = await readyHolders();
    return stores.every((s) => (held.get(s)?.filter((n) => n !== gone).length ?? 0) >= K);
  };
  const tp = performance.now();
  await until('placed nodes settled', async () => {
    if (!(await everyStoreAtK())) return false;
    const r = await Promise.all(nodes.map(async (n) => (await fetch(`${n.base}/readyz`)).status));
    return r.every((s) => s === 200);
  });
  await sleep(3 * LEASE); // past the release of stores a node loaded before the membership settled
  console.log(`${NODES} placed nodes settled in ${((performance.now() - tp) / 1000).toFixed(1)} s`);
  const held = await readyHolders();
  const rss = nodes.map((n) => ({
    node: idOf(n),
    stores: stores.filter((s) => held.get(s)?.includes(idOf(n))).length,
    rssMb: Math.round(rssMb(n)),
  }));
  for (const r of rss)
    console.log(
      `  ${r.node}: ${r.stores} stores, RSS ${r.rssMb} MB = ${(r.rssMb / rssAll).toFixed(2)} of the all-stores node`,
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

  // kill -9 of a node → every store served by K live nodes again.
  const victim = nodes[NODES - 1] as Node;
  const tk = performance.now();
  victim.proc.kill('SIGKILL');
  await until('re-replicated', () => everyStoreAtK(idOf(victim)));
  const reReplicated = (performance.now() - tk) / 1000;
  console.log(`kill -9 → every store on ${K} live nodes: ${reReplicated.toFixed(2)} s (lease ${LEASE / 1000} s)`);
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
      loadAll,
      rss,
      rounds,
      reReplicated,
    }),
  );
  for (const n of nodes) n.proc.kill('SIGKILL');
  await db.end();
  agent.destroy();
}

await main();
