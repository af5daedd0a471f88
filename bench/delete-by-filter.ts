// Delete by filter over HTTP (`POST /stores/{id}/delete-tuples`) on a real server: tuples/s to
// remove N matching tuples in requests of `--limit`, the slowest request, and the CPU per tuple
// (this process: the server and this client; on PostgreSQL also the database's backends, from
// /proc: embedded server only); then the relation-only filter that matches nothing, sent back to
// back while ordinary one-tuple Writes to the same store run, with the longest Write round trip
// (how long the scans hold up the store's writes) against the same Writes alone in the same run.
// The store of that second part (`--others` tuples) is written first, so the table the deletes
// work in holds it too.
//
//   npx tsx bench/delete-by-filter.ts                                # 100k on LevelDB, limit 10000
//   npx tsx bench/delete-by-filter.ts --backend postgres --tuples 100000 --limit 10000
//   npx tsx bench/delete-by-filter.ts --tuples 20000 --limit 1000    # a quick run
//   npx tsx bench/delete-by-filter.ts --scans 0 --cpu-profile /tmp/d.cpuprofile  # V8 profile of part 1
//
// CPU is split: the main thread (the server's JavaScript, and this client's, whose JSON.parse of
// the replies is shown apart) and the process's other threads (LevelDB's, libuv's pool, V8's GC
// helpers).
//
// PostgreSQL: LATCH_TEST_POSTGRES_URL, else a throwaway embedded server.

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startServer } from '../src/main.js';
import type { TupleKey } from '../src/domain/types.js';
import { startPostgres } from '../test/support/postgres-server.js';
import { MODEL } from '../test/http/helpers.js';
import { databaseCpu, type DatabaseCpu } from './pg-cpu.js';

const { values } = parseArgs({
  options: {
    tuples: { type: 'string', default: '100000' },
    limit: { type: 'string', default: '10000' },
    backend: { type: 'string', default: 'leveldb' },
    others: { type: 'string', default: '300000' },
    scans: { type: 'string', default: '10' },
    'cpu-profile': { type: 'string' },
  },
});
const N = Number(values.tuples);
const LIMIT = Number(values.limit);
const OTHERS = Number(values.others);
const SCANS = Number(values.scans);

async function postgresUrl(): Promise<{ url: string; embedded: boolean; stop: () => Promise<void> }> {
  const given = process.env.LATCH_TEST_POSTGRES_URL;
  const server = given
    ? { url: given, embedded: false, stop: async () => undefined }
    : await startPostgres(process.env, { fsync: true });
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS latch_bench_delete WITH (FORCE)');
  await admin.query('CREATE DATABASE latch_bench_delete');
  await admin.end();
  const url = new URL(server.url);
  url.pathname = '/latch_bench_delete';
  return { url: url.toString(), embedded: server.embedded, stop: () => server.stop() };
}

const dir = await mkdtemp(join(tmpdir(), 'latch-bench-delete-'));
const pgs = values.backend === 'postgres' ? await postgresUrl() : undefined;
const server = await startServer({
  host: '127.0.0.1',
  port: 0,
  datastore: pgs ? 'postgres' : 'leveldb',
  dataDir: dir,
  postgres: pgs ? { url: pgs.url, poolSize: 4, startTimeoutMs: 0 } : undefined,
  engine: { maxTuplesPerWrite: 10_000 },
});
const base = `http://127.0.0.1:${server.port}`;

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(base + path, { method: 'POST', body: JSON.stringify(body) });
  const json = (await r.json()) as Record<string, unknown>;
  if (r.status >= 300) throw new Error(`${path}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}

/** A store of `count` tuples made by `make(i)`, written 10,000 per storage write. */
async function storeOf(count: number, make: (i: number) => TupleKey): Promise<string> {
  const id = (await post('/stores', { name: 'bench-delete' })).id as string;
  await post(`/stores/${id}/authorization-models`, MODEL);
  for (let i = 0; i < count; i += 10_000) {
    const writes: TupleKey[] = [];
    for (let j = i; j < Math.min(count, i + 10_000); j++) writes.push(make(j));
    await server.latch.write({ storeId: id, writes, deletes: [], onDuplicate: 'error', onMissing: 'error' });
  }
  return id;
}

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
/** User + system CPU (ms) of one thread of this process, from /proc (0 once it has exited). */
const threadCpuMs = (tid: string): number => {
  try {
    const f = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(f[11]) + Number(f[12])) * 10;
  } catch {
    return 0;
  }
};
const mainCpuMs = (): number => threadCpuMs(String(process.pid));
/** CPU (ms) of every thread now, by thread id. */
const threadsCpuMs = (): Map<string, number> =>
  new Map(readdirSync('/proc/self/task').map((tid) => [tid, threadCpuMs(tid)]));

// The store of part 2 first: the deletes below work in a table that holds it too.
const wide = await storeOf(OTHERS, (i) => ({ object: `doc:w${i}`, relation: 'viewer', user: `user:u${i % 1000}` }));
const dbCpu: DatabaseCpu | undefined = pgs?.embedded ? await databaseCpu(pgs.url) : undefined;

/** Part 1 once: N viewers of `doc` (plus as many owners that stay), deleted by {object_type, relation}. */
async function deleteRun(label: string): Promise<void> {
  const store = await storeOf(2 * N, (i) => ({
    object: `doc:d${i >> 1}`,
    relation: i % 2 ? 'owner' : 'viewer',
    user: `user:u${i}`,
  }));
  await server.latch.ready();
  let deleted = 0;
  let requests = 0;
  let slowest = 0;
  let parseMs = 0;
  const session = values['cpu-profile'] === undefined ? undefined : new Session();
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const m0 = mainCpuMs();
  const t0s = threadsCpuMs();
  const c0 = cpuMs();
  const d0 = dbCpu?.read() ?? 0;
  const v0 = dbCpu?.readVacuum() ?? 0;
  const t0 = performance.now();
  for (;;) {
    const a = performance.now();
    const res = await fetch(`${base}/stores/${store}/delete-tuples`, {
      method: 'POST',
      body: JSON.stringify({ filter: { object_type: 'doc', relation: 'viewer' }, limit: LIMIT }),
    });
    const text = await res.text();
    const p0 = cpuMs();
    const r = JSON.parse(text) as Record<string, unknown>;
    parseMs += cpuMs() - p0;
    if (res.status !== 200) throw new Error(`delete-tuples: ${res.status} ${text}`);
    slowest = Math.max(slowest, performance.now() - a);
    requests++;
    deleted += (r.tuple_keys as unknown[]).length;
    if (r.more !== true) break;
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuMs() - c0;
  const main = mainCpuMs() - m0;
  // The other threads that used CPU, busiest first (V8's GC helpers, libuv's pool that runs
  // LevelDB's reads and writes, LevelDB's compaction thread), in µs per tuple.
  const others = [...threadsCpuMs()]
    .filter(([tid]) => tid !== String(process.pid))
    .map(([tid, ms]) => ms - (t0s.get(tid) ?? 0))
    .filter((ms) => ms > 0)
    .sort((a, b) => b - a)
    .map((ms) => ((ms * 1000) / N).toFixed(1));
  if (session && values['cpu-profile']) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(values['cpu-profile'], JSON.stringify(profile));
    session.disconnect();
  }
  const db = (dbCpu?.read() ?? 0) - d0;
  const vacuum = (dbCpu?.readVacuum() ?? 0) - v0;
  if (deleted !== N) throw new Error(`deleted ${deleted} of ${N}`);
  const left = await post(`/stores/${store}/delete-tuples`, {
    filter: { object_type: 'doc' },
    dry_run: true,
    limit: 1,
  });
  if ((left.tuple_keys as TupleKey[])[0]?.relation !== 'owner') throw new Error('an owner tuple went');
  console.log(
    `${label}: ${N} tuples deleted in ${requests} requests of ≤ ${LIMIT}: ${seconds.toFixed(2)} s = ` +
      `${Math.round(N / seconds)} tuples/s; slowest request ${slowest.toFixed(0)} ms; ` +
      `process CPU ${((cpu * 1000) / N).toFixed(1)} µs/tuple (server and this client; main thread ` +
      `${((main * 1000) / N).toFixed(1)}, of which the client's JSON.parse ${((parseMs * 1000) / N).toFixed(1)}; ` +
      `other threads ${(((cpu - main) * 1000) / N).toFixed(1)}: ${others.join(' ')})` +
      (dbCpu
        ? `, PostgreSQL backends ${((db * 1000) / N).toFixed(1)} µs/tuple ` +
          `(of which autovacuum ${((vacuum * 1000) / N).toFixed(1)})`
        : '') +
      `; load ${loadavg()[0]?.toFixed(1)}`,
  );
}

await deleteRun(String(values.backend));

// 2. Filters with neither object nor type (relation + user) that match nothing, on a store of OTHERS tuples, with Writes beside them.
let n = 0;
async function writes(until: () => boolean): Promise<number[]> {
  const times: number[] = [];
  while (!until()) {
    const a = performance.now();
    await post(`/stores/${wide}/write`, {
      writes: { tuple_keys: [{ object: `doc:x${n++}`, relation: 'owner', user: 'user:w' }] },
    });
    times.push(performance.now() - a);
  }
  return times;
}
const alone = await writes(() => n >= 50);
let scanning = true;
let scanMs = 0;
const beside = writes(() => !scanning);
for (let i = 0; i < SCANS; i++) {
  const a = performance.now();
  // The index knows both names (owner tuples of user:w, user:u5 a viewer), so this is a full scan.
  const r = await post(`/stores/${wide}/delete-tuples`, {
    filter: { relation: 'owner', user: 'user:u5' },
    limit: LIMIT,
  });
  scanMs = Math.max(scanMs, performance.now() - a);
  if ((r.tuple_keys as unknown[]).length !== 0) throw new Error('owner@user:u5 matched');
}
scanning = false;
const during = await beside;
const max = (xs: number[]): number => xs.reduce((m, x) => Math.max(m, x), 0);
console.log(
  `relation-only filter matching nothing over ${OTHERS} tuples: slowest request ${scanMs.toFixed(0)} ms; ` +
    `one-tuple Writes beside ${SCANS} of them: ${during.length} writes, longest ${max(during).toFixed(0)} ms ` +
    `(alone, same run: longest ${max(alone).toFixed(0)} ms)`,
);
console.log(
  `load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
await dbCpu?.close();
await server.close();
await pgs?.stop();
await rm(dir, { recursive: true, force: true });
