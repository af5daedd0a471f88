// PostgreSQL's side of an import chunk alone (src/storage/postgres/import.ts importChunk), without
// HTTP or validation: the CPU the database spends per tuple, read from /proc for the one backend
// that runs the chunks, and for the whole server (its WAL writer, checkpointer and autovacuum
// workers too). Same run, interleaved chunk by chunk: this tree's importChunk and, with
// `--base <checkout>`, another checkout's (each into its own store of the same tables), so both
// meet the same table sizes and the same load.
//
//   npx tsx bench/import-pg-chunk.ts --tuples 200000 --chunk 10000 [--base /path/to/checkout] [--overlap]
//     [--set shared_buffers=2GB --set max_wal_size=16GB …]
//
// PostgreSQL: LATCH_TEST_POSTGRES_URL, else a throwaway embedded server (fsync on, as the
// import bench runs it). Tuples: the shapes of bench/import.ts (documents with four relations,
// group memberships), generated in order.

import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { TupleKey } from '../src/domain/types.js';
import { Db } from '../src/storage/postgres/db.js';
import { openPostgresStorage } from '../src/storage/postgres/index.js';
import { startPostgres } from '../test/support/postgres-server.js';
import { processCpuMs } from './pg-cpu.js';

const { values } = parseArgs({
  options: {
    tuples: { type: 'string', default: '200000' },
    chunk: { type: 'string', default: '10000' },
    base: { type: 'string' },
    // every chunk after the first also holds the previous chunk's first tuple (stored already):
    // data that overlaps what the store holds
    overlap: { type: 'boolean', default: false },
    // server settings for the run, `name=value` (ALTER SYSTEM, then a restart of the embedded server)
    set: { type: 'string', multiple: true, default: [] },
    out: { type: 'string' },
  },
});
const N = Number(values.tuples);
const CHUNK = Number(values.chunk);

/** One chunk into a store: its encoding (`prepareChunk`) and the write (`importChunk`), as one call. */
type ImportChunk = (
  db: Db,
  storeId: string,
  tuples: readonly TupleKey[],
  node: string,
  staged: boolean,
) => Promise<{ written: readonly unknown[] }>;

/** The two steps of src/storage/postgres/import.ts, as this tree declares them. */
interface ImportSteps {
  readonly prepareChunk: (storeId: string, key: number, tuples: readonly TupleKey[]) => Promise<unknown>;
  readonly importChunk: (
    db: Db,
    chunk: never,
    node: string,
    staged: boolean,
  ) => Promise<{ written: readonly unknown[] }>;
}

/**
 * `root`'s import steps as one ImportChunk. A `--base` checkout must declare the same two steps
 * (a store's tuples keyed by its number, latch_stores.key): the bench compares trees of this
 * shape, not the import's history.
 */
const load = async (root: string): Promise<ImportChunk> => {
  const steps = (await import(
    pathToFileURL(join(resolvePath(root), 'src/storage/postgres/import.ts')).href
  )) as ImportSteps;
  if (typeof steps.prepareChunk !== 'function' || steps.prepareChunk.length !== 3)
    throw new Error(`${root}: its import.ts has no prepareChunk(storeId, key, tuples)`);
  const keys = new Map<string, number>();
  return async (db, storeId, tuples, node, staged) => {
    let key = keys.get(storeId);
    if (key === undefined) {
      const rows = await db.rows('SELECT key FROM latch_stores WHERE id = $1', [storeId]);
      key = Number(rows[0]?.[0]);
      keys.set(storeId, key);
    }
    const chunk = await steps.prepareChunk(storeId, key, tuples);
    return steps.importChunk(db, chunk as never, node, staged);
  };
};

/** The chunk `i` of the data set: documents (parent, owner, editor, viewer) and group members. */
function chunkOf(i: number): TupleKey[] {
  const out: TupleKey[] = [];
  for (let k = i * CHUNK; k < Math.min(N, (i + 1) * CHUNK); k++) {
    if (k % 5 === 4) {
      const g = Math.floor(k / 5);
      out.push({ object: `group:${Math.floor(g / 15)}`, relation: 'member', user: `user:${(g * 7919) % 100000}x${g}` });
      continue;
    }
    const d = Math.floor(k / 5);
    const r = k % 5;
    const relation = ['parent', 'owner', 'editor', 'viewer'][r] as string;
    const user =
      r === 0
        ? `folder:${d % 5000}`
        : r === 2
          ? `group:${(d * 7) % 10000}#member`
          : `user:${(d * (r === 1 ? 13 : 17)) % 100000}`;
    out.push({ object: `document:${d}`, relation, user });
  }
  return out;
}

/** CPU (ms) of the whole server: the postmaster's own and reaped children's, plus its live children's. */
function serverCpuMs(postmaster: number): number {
  const fields = (pid: string): string[] => readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const own = fields(String(postmaster));
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const f = fields(pid);
      if (Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // exited
    }
  }
  return ticks * 10;
}

const server = await startPostgres(process.env, { fsync: true });
if (values.set.length > 0) {
  const c = new pg.Client({ connectionString: server.url });
  await c.connect();
  for (const s of values.set) {
    const [name, value] = s.split('=') as [string, string];
    if (!/^[a-z_]+$/.test(name)) throw new Error(`--set ${s}: not a setting name`);
    await c.query(`ALTER SYSTEM SET ${name} = '${value.replace(/'/g, "''")}'`);
  }
  await c.end();
  await server.pause();
  await server.resume();
}
const admin = new pg.Client({ connectionString: server.url });
await admin.connect();
await admin.query('DROP DATABASE IF EXISTS latch_bench_chunk WITH (FORCE)');
await admin.query('CREATE DATABASE latch_bench_chunk');
const settings = (
  await admin.query<{ name: string; setting: string }>(
    `SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'shared_buffers', 'max_wal_size', 'wal_compression', 'full_page_writes', 'checkpoint_timeout', 'server_version', 'wal_buffers')`,
  )
).rows;
await admin.end();
const url = new URL(server.url);
url.pathname = '/latch_bench_chunk';
const storage = await openPostgresStorage({ url: url.toString(), poolSize: 2, reclaim: false });

interface Variant {
  readonly name: string;
  readonly run: ImportChunk;
  readonly store: string;
  readonly db: Db;
  readonly pid: number;
  cpuMs: number;
  ms: number;
  /** Whether its last chunk held stored tuples. */
  staged: boolean;
}
const variants: Variant[] = [];
for (const [name, root] of [['this', '.'], ...(values.base ? [['base', values.base]] : [])] as [string, string][]) {
  const db = new Db({ url: url.toString(), poolSize: 1, statementTimeoutMs: 0 });
  const pid = Number(await db.value('SELECT pg_backend_pid()'));
  const store = (await storage.createStore(`bench-${name}`)).id;
  variants.push({ name, run: await load(root), store, db, pid, cpuMs: 0, ms: 0, staged: false });
}
const postmaster = Number(readFileSync(`/proc/${variants[0]!.pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);

const s0 = serverCpuMs(postmaster);
const chunks = Math.ceil(N / CHUNK);
for (let i = 0; i < chunks; i++) {
  const tuples = chunkOf(i);
  if (values.overlap && i > 0) tuples.push(chunkOf(i - 1)[0] as TupleKey);
  // Alternate which variant goes first, so neither always meets the other's fresh pages.
  const order = i % 2 === 0 ? variants : [...variants].reverse();
  for (const v of order) {
    const c0 = processCpuMs(v.pid);
    const t0 = performance.now();
    // PgStorage.importTuples's rule: after a chunk that held stored tuples, the staged path at once.
    v.staged = (await v.run(v.db, v.store, tuples, 'bench', v.staged)).written.length < tuples.length;
    v.ms += performance.now() - t0;
    v.cpuMs += processCpuMs(v.pid) - c0;
  }
}
const serverMs = serverCpuMs(postmaster) - s0;

const result = {
  tuples: N,
  chunk: CHUNK,
  overlap: values.overlap,
  settings: Object.fromEntries(settings.map((r) => [r.name, r.setting])),
  variants: Object.fromEntries(
    variants.map((v) => [
      v.name,
      {
        backendCpuMicrosPerTuple: +((v.cpuMs * 1000) / N).toFixed(2),
        wallMicrosPerTuple: +((v.ms * 1000) / N).toFixed(2),
      },
    ]),
  ),
  // Every process of the server over the whole run (all variants): backends, WAL writer,
  // checkpointer, autovacuum.
  serverCpuMicrosPerTuple: +((serverMs * 1000) / (N * variants.length)).toFixed(2),
  load: loadavg()[0]?.toFixed(1),
};
console.log(JSON.stringify(result, null, 2));
if (values.out) {
  const { writeFile } = await import('node:fs/promises');
  await writeFile(values.out, JSON.stringify(result, null, 2) + '\n');
}
for (const v of variants) await v.db.close();
await storage.close();
await server.stop();
