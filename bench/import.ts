// Bulk import over HTTP (`POST /stores/{id}/tuples/import`, docs/operations.md "Bulk loading") on
// a real server: a generated NDJSON file of a realistic model (users, nested groups, a folder
// tree, documents with parent/owner/editor/viewer), written once to /tmp, imported in chunks
// while a client sends one Check after another (their latency percentiles during the import);
// then 1,000 random Checks against the reference evaluator over the generator's own tuples (a
// view computed from the generator, not read back from latch); then the export stream. A
// same-run baseline imports the first `--baseline` tuples of the file as plain 100-tuple Writes.
// CPU per tuple is this process's (server and importing client) user+system time from
// /proc/self/stat; the Checks during the import come from a child process, not counted. On an
// embedded PostgreSQL (this machine's /proc) the database's CPU per tuple is reported beside it:
// its postmaster's own and reaped children's time plus its live processes'.
//
//   npx tsx bench/import.ts                                  # 10M on LevelDB
//   npx tsx bench/import.ts --tuples 1000000                 # 1M
//   npx tsx bench/import.ts --backend postgres --tuples 1000000 --chunk 10000 --baseline 10000
//
// PostgreSQL: LATCH_TEST_POSTGRES_URL, else a throwaway embedded server.

import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { missingServeFlags, SERVE_ENV } from '../src/cli/node-flags.js';
import { startServer } from '../src/main.js';
import { compileModel } from '../src/model/compile.js';
import { dslToModel } from '../src/model/dsl.js';
import type { AuthorizationModel, TupleKey } from '../src/domain/types.js';
import type { TupleEntry, TupleView } from '../src/index/types.js';
import { evalCheck } from '../test/oracle/reference.js';
import { startPostgres } from '../test/support/postgres-server.js';
import { DSL } from './import-model.js';

// The server runs in this process, so this process must have the V8 flags and environment
// `latch serve` starts with (src/cli/node-flags.ts: a 4 MB young generation, scavenges on the main
// thread, MALLOC_ARENA_MAX=2): with Node's defaults the 3M import's main thread took 4.2 µs per
// tuple against 4.7 with the serve flags (same build, quiet), so the defaults overstated the
// speed. Started without them, the bench runs itself again in a child that has them.
// LATCH_BENCH_NODE_FLAGS adds flags (e.g. --cpu-prof) to that child.
{
  const missing = missingServeFlags(process.execArgv, process.env.NODE_OPTIONS);
  if (missing.length > 0 && process.env.LATCH_BENCH_SERVE_FLAGS !== '1') {
    const extra = (process.env.LATCH_BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
    const child = spawn(
      process.execPath,
      [...missing, ...extra, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
      { stdio: 'inherit', env: { ...SERVE_ENV, ...process.env, LATCH_BENCH_SERVE_FLAGS: '1' } },
    );
    const code = await new Promise<number>((done) => child.on('exit', (c, signal) => done(c ?? (signal ? 1 : 0))));
    process.exit(code);
  }
}

const { values } = parseArgs({
  options: {
    tuples: { type: 'string', default: '10000000' },
    backend: { type: 'string', default: 'leveldb' },
    chunk: { type: 'string', default: '50000' },
    inflight: { type: 'string', default: '2' },
    baseline: { type: 'string', default: '100000' },
    samples: { type: 'string', default: '1000' },
    out: { type: 'string' },
    // 'fetch': this process posts the chunks (its CPU counted with the server's); 'cli': `latch
    // tuple import` in a child process (its own CPU reported apart); `--cli-root` runs the CLI of
    // another checkout (a same-run baseline of the client).
    client: { type: 'string', default: 'fetch' },
    'cli-root': { type: 'string', default: '.' },
    // The embedded PostgreSQL's deployment settings, `name=value,name=value` (e.g.
    // `max_wal_size=8GB,shared_buffers=1GB`); none by default: the server's own defaults.
    'pg-settings': { type: 'string', default: '' },
    // PostgreSQL: the import's WAL split by relation (pg_walinspect over WAL kept for the purpose
    // by wal_keep_size; reading it back takes a while at 10M).
    'wal-detail': { type: 'boolean', default: false },
  },
});
const N = Number(values.tuples);
const CHUNK = Number(values.chunk);
const INFLIGHT = Number(values.inflight);
const BASELINE = Math.min(Number(values.baseline), N);
const SAMPLES = Number(values.samples);
const PG_SETTINGS: Record<string, string> = Object.fromEntries(
  String(values['pg-settings'])
    .split(',')
    .filter((kv) => kv !== '')
    .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
);
const WAL_DETAIL = values['wal-detail'] === true;
// Keeps every WAL segment of the run for pg_walinspect (not part of the reported settings).
const SERVER_SETTINGS = WAL_DETAIL ? { wal_keep_size: '64GB', ...PG_SETTINGS } : PG_SETTINGS;

/**
 * The data set, a pure function of N: per 100 tuples ≈ 80 document tuples (4 per document),
 * 16 group memberships (15 users per group, every tenth group nested in the next), 4 folder
 * tuples (a tree of fan-out 10 and one group viewer each). Every tuple is computable from its
 * object, which the oracle's view below relies on.
 */
class DataSet {
  readonly users: number;
  readonly groups: number;
  readonly folders: number;
  readonly documents: number;
  static readonly MEMBERS = 15;
  constructor(n: number) {
    this.documents = Math.max(1, Math.floor((n * 0.8) / 4));
    this.groups = Math.max(2, Math.floor((n * 0.16) / 15.1));
    this.folders = Math.max(2, Math.floor((n * 0.04) / 2));
    this.users = Math.max(1000, Math.floor(n / 10));
  }
  member(g: number, j: number): number {
    return (g * 7919 + j * 104729) % this.users;
  }
  *tuples(): Generator<TupleKey> {
    const { groups, folders, documents } = this;
    for (let g = 0; g < groups; g++) {
      for (let j = 0; j < DataSet.MEMBERS; j++)
        yield { object: `group:${g}`, relation: 'member', user: `user:${this.member(g, j)}` };
      if (g % 10 === 0) yield { object: `group:${g}`, relation: 'member', user: `group:${(g + 1) % groups}#member` };
    }
    for (let f = 0; f < folders; f++) {
      if (f > 0) yield { object: `folder:${f}`, relation: 'parent', user: `folder:${Math.floor((f - 1) / 10)}` };
      yield { object: `folder:${f}`, relation: 'viewer', user: `group:${(f * 31) % groups}#member` };
    }
    for (let d = 0; d < documents; d++) {
      yield { object: `document:${d}`, relation: 'parent', user: `folder:${d % folders}` };
      yield { object: `document:${d}`, relation: 'owner', user: `user:${(d * 13) % this.users}` };
      yield { object: `document:${d}`, relation: 'editor', user: `group:${(d * 7) % groups}#member` };
      yield { object: `document:${d}`, relation: 'viewer', user: `user:${(d * 17 + 1) % this.users}` };
    }
  }
  /** The tuples of `object#relation`, from the formulas above. */
  users_(object: string, relation: string): TupleEntry[] {
    const colon = object.indexOf(':');
    const type = object.slice(0, colon);
    const id = Number(object.slice(colon + 1));
    const e = (user: string): TupleEntry => ({ object, relation, user });
    if (type === 'group' && relation === 'member' && id < this.groups) {
      const out: TupleEntry[] = [];
      for (let j = 0; j < DataSet.MEMBERS; j++) out.push(e(`user:${this.member(id, j)}`));
      if (id % 10 === 0) out.push(e(`group:${(id + 1) % this.groups}#member`));
      return out;
    }
    if (type === 'folder' && id < this.folders) {
      if (relation === 'parent') return id > 0 ? [e(`folder:${Math.floor((id - 1) / 10)}`)] : [];
      if (relation === 'viewer') return [e(`group:${(id * 31) % this.groups}#member`)];
    }
    if (type === 'document' && id < this.documents) {
      if (relation === 'parent') return [e(`folder:${id % this.folders}`)];
      if (relation === 'owner') return [e(`user:${(id * 13) % this.users}`)];
      if (relation === 'editor') return [e(`group:${(id * 7) % this.groups}#member`)];
      if (relation === 'viewer') return [e(`user:${(id * 17 + 1) % this.users}`)];
    }
    return [];
  }
}

const data = new DataSet(N);
const file = join('/tmp', `latch-import-${N}.ndjson`);

/** Writes the file once (kept for later runs); its line count. */
async function ensureFile(): Promise<number> {
  if (existsSync(file)) return Number(readFileSync(`${file}.count`, 'utf8'));
  const out = createWriteStream(`${file}.tmp`);
  let n = 0;
  let buf = '';
  for (const t of data.tuples()) {
    buf += `{"user":"${t.user}","relation":"${t.relation}","object":"${t.object}"}\n`;
    n++;
    if (buf.length > 1 << 20) {
      if (!out.write(buf)) await new Promise<void>((r) => out.once('drain', () => r()));
      buf = '';
    }
  }
  out.end(buf);
  await new Promise<void>((r) => out.on('finish', () => r()));
  const { rename, writeFile } = await import('node:fs/promises');
  await writeFile(`${file}.count`, String(n));
  await rename(`${file}.tmp`, file);
  return n;
}

/** The file's lines in chunks of `size` lines, as NDJSON bytes, read as a stream. */
async function* chunksOf(path: string, size: number, limit = Infinity): AsyncGenerator<Buffer> {
  let pending: Buffer[] = [];
  let lines = 0;
  let total = 0;
  for await (const raw of createReadStream(path, { highWaterMark: 1 << 20 })) {
    let buf = raw as Buffer;
    let from = 0;
    for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) {
      lines++;
      total++;
      if (lines === size || total === limit) {
        pending.push(buf.subarray(from, i + 1));
        yield Buffer.concat(pending);
        pending = [];
        from = i + 1;
        lines = 0;
        if (total === limit) return;
      }
    }
    buf = buf.subarray(from);
    if (buf.length > 0) pending.push(buf);
  }
  if (pending.length > 0) yield Buffer.concat(pending);
}

/** User + system CPU (ms) of a /proc stat file: the whole process, or one of its threads. */
function statCpuMs(path: string): number {
  const f = readFileSync(path, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const tick = 100; // USER_HZ
  return ((Number(f[11]) + Number(f[12])) * 1000) / tick;
}
/** Every thread of this process (the server's JS thread, LevelDB's, libuv's pool, the walker's workers). */
const cpuMs = (): number => statCpuMs('/proc/self/stat');
/** The main thread alone: the server's JavaScript (and the fetch client's, with `--client fetch`). */
const mainCpuMs = (): number => statCpuMs(`/proc/self/task/${process.pid}/stat`);

/**
 * CPU (ms) of a local PostgreSQL server: its postmaster's own and reaped children's time
 * (utime, stime, cutime, cstime) plus each live child's (its backends, WAL writer, checkpointer).
 * Undefined when the server is not on this machine's /proc.
 */
function databaseCpuMs(postmaster: number | undefined): number | undefined {
  if (postmaster === undefined) return undefined;
  const fields = (pid: string): string[] | undefined => {
    try {
      return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ');
    } catch {
      return undefined;
    }
  };
  const own = fields(String(postmaster));
  if (!own) return undefined;
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    const f = fields(pid);
    if (f && Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks * 10;
}

/** The postmaster's pid: the parent of a backend serving `url`. */
async function postmasterOf(url: string): Promise<number | undefined> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const pid = Number((await c.query('SELECT pg_backend_pid() AS pid')).rows[0].pid);
    return Number(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
  } catch {
    return undefined;
  } finally {
    await c.end();
  }
}

async function postgresUrl(): Promise<{ url: string; stop: () => Promise<void> }> {
  const given = process.env.LATCH_TEST_POSTGRES_URL;
  const server = given
    ? { url: given, stop: async () => undefined }
    : await startPostgres(process.env, { fsync: true, settings: SERVER_SETTINGS });
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS latch_bench_import WITH (FORCE)');
  await admin.query('CREATE DATABASE latch_bench_import');
  await admin.end();
  const url = new URL(server.url);
  url.pathname = '/latch_bench_import';
  return { url: url.toString(), stop: () => server.stop() };
}

const t0 = performance.now();
const lines = await ensureFile();
console.error(`file ${file}: ${lines} tuples (${((performance.now() - t0) / 1000).toFixed(1)} s to make or find)`);

const dir = await mkdtemp(join(tmpdir(), 'latch-bench-import-'));
const pgs = values.backend === 'postgres' ? await postgresUrl() : undefined;
const server = await startServer({
  host: '127.0.0.1',
  port: 0,
  datastore: pgs ? 'postgres' : values.backend === 'memory' ? 'memory' : 'leveldb',
  dataDir: dir,
  postgres: pgs ? { url: pgs.url, poolSize: 4, startTimeoutMs: 0 } : undefined,
});
const base = `http://127.0.0.1:${server.port}`;
const postmaster = pgs ? await postmasterOf(pgs.url) : undefined;
const dbCpuMs = (): number => databaseCpuMs(postmaster) ?? NaN;

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(base + path, { method: 'POST', body: JSON.stringify(body) });
  const json = (await r.json()) as Record<string, unknown>;
  if (r.status >= 300) throw new Error(`${path}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}

const modelInput = dslToModel(DSL);
async function newStore(name: string): Promise<{ id: string; modelId: string }> {
  const id = (await post('/stores', { name })).id as string;
  const modelId = (await post(`/stores/${id}/authorization-models`, modelInput)).authorization_model_id as string;
  return { id, modelId };
}

/** Imports the file's first `limit` tuples; returns [ms, cpu ms]. */
async function importFile(
  storeId: string,
  limit = Infinity,
): Promise<{ ms: number; cpuMs: number; mainCpuMs: number; chunks: number }> {
  const c0 = cpuMs();
  const m0 = mainCpuMs();
  const s0 = performance.now();
  const inflight = new Set<Promise<void>>();
  let chunks = 0;
  for await (const body of chunksOf(file, CHUNK, limit)) {
    const p: Promise<void> = fetch(`${base}/stores/${storeId}/tuples/import`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-ndjson' },
      body,
    }).then(async (r) => {
      const text = await r.text();
      if (r.status !== 200) throw new Error(`import: ${r.status} ${text}`);
      inflight.delete(p);
    });
    inflight.add(p);
    chunks++;
    if (inflight.size >= INFLIGHT) await Promise.race(inflight);
    if (chunks % 20 === 0)
      console.error(`  ${chunks * CHUNK} tuples, ${((performance.now() - s0) / 1000).toFixed(1)} s`);
  }
  await Promise.all(inflight);
  return { ms: performance.now() - s0, cpuMs: cpuMs() - c0, mainCpuMs: mainCpuMs() - m0, chunks };
}

/**
 * The whole file through `latch tuple import` in a child process (chunks of CHUNK, INFLIGHT in
 * flight); the child's CPU (all its threads) from the start of the command to its end, module
 * loading excluded.
 */
async function importByCli(
  storeId: string,
): Promise<{ ms: number; cpuMs: number; mainCpuMs: number; clientCpuMs: number; chunks: number }> {
  const root = resolvePath(String(values['cli-root']));
  const main = pathToFileURL(join(root, 'src/cli/main.ts')).href;
  const code = `
    const { main } = await import(${JSON.stringify(main)});
    const c0 = process.cpuUsage();
    const code = await main(process.argv.slice(1));
    const c = process.cpuUsage(c0);
    process.stderr.write('CPU_MS ' + (c.user + c.system) / 1000 + '\\n');
    process.exit(code);`;
  const state = join(dir, `import-${storeId}.state`);
  const args = ['tuple', 'import', '--store-id', storeId, file, '--chunk-size', String(CHUNK), '--state', state];
  if (values['cli-root'] === '.') args.push('--in-flight', String(INFLIGHT));
  const c0 = cpuMs();
  const m0 = mainCpuMs();
  const s0 = performance.now();
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code, ...args], {
    cwd: root,
    env: { ...process.env, LATCH_API_URL: base },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  child.stdout.resume();
  const exit = await new Promise<number | null>((r) => child.once('close', (c) => r(c)));
  const ms = performance.now() - s0;
  const m = /CPU_MS ([\d.]+)/.exec(err);
  if (exit !== 0 || !m) throw new Error(`latch tuple import: exit ${exit}: ${err.slice(-2000)}`);
  return {
    ms,
    cpuMs: cpuMs() - c0,
    mainCpuMs: mainCpuMs() - m0,
    clientCpuMs: Number(m[1]),
    chunks: Math.ceil(lines / CHUNK),
  };
}

/** The first `count` tuples of the file as plain 100-tuple Writes, one after another. */
async function baselineWrites(storeId: string, count: number): Promise<{ ms: number; cpuMs: number; dbCpuMs: number }> {
  const c0 = cpuMs();
  const d0 = dbCpuMs();
  const s0 = performance.now();
  let batch: unknown[] = [];
  const flush = async (): Promise<void> => {
    await post(`/stores/${storeId}/write`, { writes: { tuple_keys: batch } });
    batch = [];
  };
  for await (const body of chunksOf(file, 10_000, count)) {
    for (const line of body.toString('utf8').split('\n')) {
      if (line === '') continue;
      batch.push(JSON.parse(line));
      if (batch.length === 100) await flush();
    }
  }
  if (batch.length > 0) await flush();
  return { ms: performance.now() - s0, cpuMs: cpuMs() - c0, dbCpuMs: dbCpuMs() - d0 };
}

function pct(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

/**
 * Checks one after another from a child process (so their client CPU is not counted as the
 * server's) until `stop()`: their latencies (ms), sorted.
 */
function checksFromChild(storeId: string): { stop: () => Promise<number[]> } {
  const code = `
    const [base, store, documents, users] = process.argv.slice(1);
    let stop = false;
    process.stdin.on('data', () => { stop = true; });
    process.stdin.resume();
    const out = [];
    for (let i = 0; !stop; i++) {
      const d = i % Number(documents);
      const body = JSON.stringify({ tuple_key: { user: 'user:' + ((d * 13) % Number(users)), relation: 'viewer', object: 'document:' + d } });
      const s = performance.now();
      const r = await fetch(base + '/stores/' + store + '/check', { method: 'POST', body });
      await r.text();
      out.push(performance.now() - s);
      if (r.status !== 200 && r.status !== 404) throw new Error('check ' + r.status);
    }
    process.stdout.write(JSON.stringify(out), () => process.exit(0));`;
  const child = spawn(
    process.execPath,
    ['--input-type=module', '-e', code, base, storeId, String(data.documents), String(data.users)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let text = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (text += c));
  // 'close', not 'exit': the child's stdout may still hold data when it has exited.
  const exited = new Promise<void>((r) => child.once('close', () => r()));
  return {
    stop: async () => {
      child.stdin.end('stop\n');
      await exited;
      return (JSON.parse(text) as number[]).sort((x, y) => x - y);
    },
  };
}

/** PostgreSQL's WAL position and counters (pg_stat_wal, pg_stat_checkpointer): the import's deltas. */
interface DbCounters {
  readonly lsn: string;
  readonly wal: Record<string, number>;
  readonly checkpointer: Record<string, number>;
}

async function dbCounters(c: pg.Client): Promise<DbCounters> {
  await c.query('SELECT pg_stat_clear_snapshot()');
  const lsn = (await c.query('SELECT pg_current_wal_lsn()::text AS l')).rows[0].l as string;
  const wal = (await c.query('SELECT wal_records, wal_fpi, wal_bytes FROM pg_stat_wal')).rows[0];
  const cp = (
    await c.query(
      'SELECT num_timed, num_requested, num_done, buffers_written, write_time, sync_time FROM pg_stat_checkpointer',
    )
  ).rows[0];
  const nums = (r: Record<string, unknown>): Record<string, number> =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Number(v)]));
  return { lsn, wal: nums(wal), checkpointer: nums(cp) };
}

const RELATIONS = [
  'latch_tuples',
  'latch_tuples_pkey',
  'latch_tuples_by_user',
  'latch_tuples_expiry',
  'latch_changes',
  'latch_changes_pkey',
  'latch_changes_by_type',
  'latch_checkpoint_chunks',
  'latch_checkpoint_chunks_pkey',
];

/** The database's work for the import: WAL bytes, full-page images, checkpoints, relation sizes, WAL by relation. */
async function dbReport(c: pg.Client, before: DbCounters, perTuple: number): Promise<Record<string, unknown>> {
  const after = await dbCounters(c);
  const walBytes = Number((await c.query('SELECT pg_wal_lsn_diff($1, $2) AS d', [after.lsn, before.lsn])).rows[0].d);
  const delta = (a: Record<string, number>, b: Record<string, number>): Record<string, number> =>
    Object.fromEntries(Object.keys(a).map((k) => [k, +((a[k] ?? 0) - (b[k] ?? 0)).toFixed(1)]));
  const sizes: Record<string, number> = {};
  for (const r of RELATIONS)
    sizes[r] = Number((await c.query('SELECT pg_relation_size(to_regclass($1)) AS s', [r])).rows[0].s ?? 0);
  const toast = (
    await c.query(
      `SELECT pg_relation_size(reltoastrelid) AS t, pg_indexes_size(reltoastrelid) AS ti FROM pg_class WHERE oid = 'latch_checkpoint_chunks'::regclass`,
    )
  ).rows[0];
  sizes.latch_checkpoint_chunks_toast = Number(toast.t);
  sizes.latch_checkpoint_chunks_toast_index = Number(toast.ti);
  // Everything latch's index checkpoints stored over the run (the chunks of every image, the
  // replaced ones included): their TOAST table's inserted rows, up to 1,996 bytes each.
  const written = (
    await c.query(
      `SELECT n_tup_ins FROM pg_stat_all_tables WHERE relid = (SELECT reltoastrelid FROM pg_class WHERE oid = 'latch_checkpoint_chunks'::regclass)`,
    )
  ).rows[0];
  const out: Record<string, unknown> = {
    walBytes,
    walBytesPerTuple: +(walBytes / perTuple).toFixed(1),
    wal: delta(after.wal, before.wal),
    checkpointer: delta(after.checkpointer, before.checkpointer),
    relationBytes: sizes,
    checkpointChunksToastRowsInserted: Number(written?.n_tup_ins ?? 0),
  };
  if (WAL_DETAIL) {
    await c.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    // Summed by relation file first, then named (a TOAST table or its index by its owner's name:
    // latch_changes.bulk, latch_checkpoint_chunks.data).
    const rows = (
      await c.query(
        `WITH f AS (
           SELECT pg_filenode_relation(b.reltablespace, b.relfilenode) AS oid, b.relfilenode,
                  sum(b.block_data_length)::bigint AS data, sum(b.block_fpi_length)::bigint AS fpi, count(*) AS blocks
             FROM pg_get_wal_block_info($1, $2, false) b GROUP BY b.reltablespace, b.relfilenode)
         SELECT coalesce((SELECT o.relname || ' TOAST' FROM pg_class o WHERE o.reltoastrelid = f.oid),
                         (SELECT o.relname || ' TOAST index' FROM pg_class o JOIN pg_index i ON i.indrelid = o.reltoastrelid
                           WHERE i.indexrelid = f.oid),
                         f.oid::regclass::text, f.relfilenode::text) AS rel, f.data, f.fpi, f.blocks
           FROM f ORDER BY f.data + f.fpi DESC`,
        [before.lsn, after.lsn],
      )
    ).rows;
    out.walByRelation = rows.slice(0, 12).map((r) => ({
      relation: r.rel,
      dataBytes: Number(r.data),
      fpiBytes: Number(r.fpi),
      blocks: Number(r.blocks),
    }));
  }
  return out;
}

const load = (): string => loadavg()[0]?.toFixed(1) ?? '?';
const result: Record<string, unknown> = {
  tuples: lines,
  backend: values.backend,
  chunk: CHUNK,
  inflight: INFLIGHT,
  client: values.client,
  nodeFlags: process.execArgv.filter(
    (f) => f.startsWith('--') && !f.includes('tsx') && f !== '--require' && f !== '--import',
  ),
  ...(values.backend === 'postgres' ? { postgresSettings: PG_SETTINGS } : {}),
};

// Baseline: plain 100-tuple Writes of the first BASELINE tuples.
const b = await newStore('bench-import-baseline');
const baseline = await baselineWrites(b.id, BASELINE);
result.baseline = {
  tuples: BASELINE,
  tuplesPerSecond: Math.round(BASELINE / (baseline.ms / 1000)),
  cpuMicrosPerTuple: +((baseline.cpuMs * 1000) / BASELINE).toFixed(2),
  ...(postmaster === undefined
    ? {}
    : { databaseCpuMicrosPerTuple: +((baseline.dbCpuMs * 1000) / BASELINE).toFixed(2) }),
  load: load(),
};
console.error('baseline', result.baseline);

// The import, with Checks throughout.
const store = await newStore('bench-import');
const checks = checksFromChild(store.id);
const stats = pgs ? new pg.Client({ connectionString: pgs.url }) : undefined;
await stats?.connect();
const counters0 = stats ? await dbCounters(stats) : undefined;
const importDb0 = dbCpuMs();
const elu0 = performance.eventLoopUtilization();
const imp: { ms: number; cpuMs: number; mainCpuMs: number; chunks: number; clientCpuMs?: number } =
  values.client === 'cli' ? await importByCli(store.id) : await importFile(store.id);
const importDbMs = dbCpuMs() - importDb0;
const elu = performance.eventLoopUtilization(elu0);
const latencies = await checks.stop();
result.import = {
  seconds: +(imp.ms / 1000).toFixed(1),
  tuplesPerSecond: Math.round(lines / (imp.ms / 1000)),
  cpuMicrosPerTuple: +((imp.cpuMs * 1000) / lines).toFixed(2),
  // The process's CPU split: its main (JavaScript) thread, and every other thread (LevelDB's
  // writer and compactions, libuv's pool, the walker's workers).
  mainThreadCpuMicrosPerTuple: +((imp.mainCpuMs * 1000) / lines).toFixed(2),
  otherThreadsCpuMicrosPerTuple: +(((imp.cpuMs - imp.mainCpuMs) * 1000) / lines).toFixed(2),
  // The share of the import's wall time the main thread's event loop was not waiting for I/O
  // (Node's event-loop utilization; time the thread was runnable but preempted counts as busy):
  // below 1, the main thread waited, on LevelDB's writes or on the next chunk.
  mainThreadBusyShare: +elu.utilization.toFixed(3),
  // PostgreSQL's processes (the embedded server on this machine), the Checks' reads included.
  ...(postmaster === undefined ? {} : { databaseCpuMicrosPerTuple: +((importDbMs * 1000) / lines).toFixed(2) }),
  ...(imp.clientCpuMs === undefined
    ? {}
    : { client: values['cli-root'], clientCpuMicrosPerTuple: +((imp.clientCpuMs * 1000) / lines).toFixed(2) }),
  chunks: imp.chunks,
  checksDuring: latencies.length,
  checkP50Ms: +pct(latencies, 0.5).toFixed(2),
  checkP99Ms: +pct(latencies, 0.99).toFixed(2),
  checkMaxMs: +(latencies[latencies.length - 1] ?? 0).toFixed(2),
  load: load(),
};
console.error('import', result.import);
if (stats && counters0) {
  result.database = await dbReport(stats, counters0, lines);
  console.error('database', JSON.stringify(result.database));
  await stats.end();
}

// Differential: random Checks against the reference evaluator over the generator's own tuples.
const stored: AuthorizationModel = { id: store.modelId, ...modelInput } as AuthorizationModel;
const compiled = compileModel(stored);
const view: TupleView = {
  revision: 0,
  users: (object, relation) => data.users_(object, relation),
  objects: () => {
    throw new Error('the oracle view answers forward lookups only');
  },
};
let seed = 42;
const rand = (n: number): number => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed % n;
};
let mismatches = 0;
let allowed = 0;
for (let i = 0; i < SAMPLES; i++) {
  const kind = rand(3);
  const object =
    kind === 0
      ? `document:${rand(data.documents)}`
      : kind === 1
        ? `folder:${rand(data.folders)}`
        : `group:${rand(data.groups)}`;
  const relation = kind === 0 ? ['viewer', 'editor', 'owner'][rand(3)]! : kind === 1 ? 'viewer' : 'member';
  // Half the samples ask about a user the data relates to the object (directly, through a group,
  // or through the folder it sits in), half about a random user.
  const id = Number(object.slice(object.indexOf(':') + 1));
  const group =
    kind === 0
      ? [(id * 7) % data.groups, ((id % data.folders) * 31) % data.groups][rand(2)]!
      : kind === 1
        ? (id * 31) % data.groups
        : id;
  const near = [data.member(group, rand(DataSet.MEMBERS)), (id * 13) % data.users, (id * 17 + 1) % data.users][
    kind === 0 ? rand(3) : 0
  ]!;
  const user = `user:${rand(2) === 0 ? near : rand(data.users)}`;
  const want = evalCheck(
    { model: compiled, view, resolveDepth: 25, deadline: Date.now() + 60_000 },
    object,
    relation,
    user,
  );
  const got = await server.latch.check({
    storeId: store.id,
    tupleKey: { object, relation, user },
    contextualTuples: [],
    consistency: 'HIGHER_CONSISTENCY',
  } as never);
  if (got.allowed) allowed++;
  if (got.allowed !== want) mismatches++;
}
result.differential = { samples: SAMPLES, allowed, mismatches };
console.error('differential', result.differential);

// Export: the whole store as one stream.
{
  const c0 = cpuMs();
  const d0 = dbCpuMs();
  const s0 = performance.now();
  const r = await fetch(`${base}/stores/${store.id}/tuples/export`);
  let n = 0;
  const reader = r.body!.getReader();
  for (;;) {
    const { done: end, value } = await reader.read();
    if (end) break;
    for (let i = value.indexOf(10); i !== -1; i = value.indexOf(10, i + 1)) n++;
  }
  const ms = performance.now() - s0;
  result.export = {
    tuples: n,
    seconds: +(ms / 1000).toFixed(1),
    tuplesPerSecond: Math.round(n / (ms / 1000)),
    cpuMicrosPerTuple: +(((cpuMs() - c0) * 1000) / n).toFixed(2),
    ...(postmaster === undefined ? {} : { databaseCpuMicrosPerTuple: +(((dbCpuMs() - d0) * 1000) / n).toFixed(2) }),
    load: load(),
  };
  console.error('export', result.export);
}

result.ratio = +(
  (result.import as { tuplesPerSecond: number }).tuplesPerSecond /
  (result.baseline as { tuplesPerSecond: number }).tuplesPerSecond
).toFixed(1);
console.log(JSON.stringify(result, null, 2));
if (values.out) {
  const { writeFile } = await import('node:fs/promises');
  await writeFile(values.out, JSON.stringify(result, null, 2) + '\n');
}
await server.close();
await pgs?.stop();
await rm(dir, { recursive: true, force: true });
