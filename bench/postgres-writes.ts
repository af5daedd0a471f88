// Write throughput of the storage backends: 100-tuple writes (one Write request each) into one
// store, and into eight stores at once, on LevelDB and on PostgreSQL, in the same run on the same
// machine. Then the server's CPU per one-tuple Write, on one connection, for the two write
// functions alternately in the same run: `latch_write` (every rule) and `latch_write_all` (the
// all-or-nothing Write the API sends by default); read from /proc for the connection's backend,
// so only for an embedded server. PostgreSQL is a throwaway embedded server (fsync on, like
// LevelDB's synced batches) unless LATCH_TEST_POSTGRES_URL names one.
//
// Also writes/s into ONE store by 8 concurrent writers, 1-tuple and 100-tuple writes (the
// single-store rate: one store's writes queue on its row lock and go as groups through
// `latch_write_group`, group-writer.ts), `--rounds` times, with the server's CPU per write (every
// backend of the database, from /proc: embedded server only).
//
//   npx tsx bench/postgres-writes.ts [--writes 200]                 (writes per store or writer)
//   npx tsx bench/postgres-writes.ts --part groups --writes 20 --rounds 2   (only the 8-writer rates)

import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openLevelStorage } from '../src/storage/level.js';
import { openPostgresStorage } from '../src/storage/postgres/index.js';
import { WRITE, WRITE_ALL } from '../src/storage/postgres/tuples.js';
import type { Storage, TupleWrite } from '../src/storage/types.js';
import { startPostgres } from '../test/support/postgres-server.js';
import { databaseCpu, processCpuMs } from './pg-cpu.js';

const { values } = parseArgs({
  options: {
    writes: { type: 'string', default: '200' },
    part: { type: 'string', default: 'all' },
    rounds: { type: 'string', default: '2' },
  },
});
const WRITES = Number(values.writes);
const ROUNDS = Number(values.rounds);
if (!['all', 'groups'].includes(values.part)) throw new Error('--part is all or groups');
const TUPLES = 100;

function write(store: number, i: number): TupleWrite {
  const writes = Array.from({ length: TUPLES }, (_, j) => ({
    object: `doc:s${store}-w${i}-${j}`,
    relation: 'viewer',
    user: `user:u${(i * TUPLES + j) % 5000}`,
  }));
  return { deletes: [], writes, onDuplicate: 'error', onMissing: 'error' };
}

/** Tuples per second over `stores` stores written at once, each by one sequential writer. */
async function measure(s: Storage, stores: number): Promise<number> {
  const ids = await Promise.all(
    Array.from({ length: stores }, (_, k) => s.createStore(`bench-${k}`).then((x) => x.id)),
  );
  await Promise.all(ids.map((id, k) => s.writeTuples(id, write(1000 + k, 0)))); // warm up
  const started = process.hrtime.bigint();
  await Promise.all(
    ids.map(async (id, k) => {
      for (let i = 1; i <= WRITES; i++) await s.writeTuples(id, write(k, i));
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return Math.round((stores * WRITES * TUPLES) / seconds);
}

/** Concurrent writers into one store (the API's case: many clients, one store). */
const WRITERS = 8;

/** Writes per second into ONE store by WRITERS concurrent writers, each `size` tuples per write. */
async function oneStore(s: Storage, size: number, writes: number): Promise<number> {
  return (await oneStoreCpu(s, size, writes, () => 0)).rate;
}

/** oneStore, with `cpu()` (ms) read before and after: its difference per write. */
async function oneStoreCpu(
  s: Storage,
  size: number,
  writes: number,
  cpu: () => number,
): Promise<{ rate: number; cpuUs: number }> {
  const id = (await s.createStore(`one-${size}`)).id;
  const w = (k: number, i: number): TupleWrite => ({
    deletes: [],
    writes: Array.from({ length: size }, (_, j) => ({
      object: `doc:o${size}-${k}-${i}-${j}`,
      relation: 'viewer',
      user: `user:u${j % 5000}`,
    })),
    onDuplicate: 'error',
    onMissing: 'error',
  });
  await s.writeTuples(id, w(99, 0)); // warm up
  const c0 = cpu();
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, k) => {
      for (let i = 1; i <= writes; i++) await s.writeTuples(id, w(k, i));
    }),
  );
  const rate = Math.round((WRITERS * writes) / (Number(process.hrtime.bigint() - started) / 1e9));
  return { rate, cpuUs: ((cpu() - c0) * 1000) / (WRITERS * writes) };
}

const server = await startPostgres(process.env, { fsync: true });
const admin = new pg.Client({ connectionString: server.url });
await admin.connect();
await admin.query('DROP DATABASE IF EXISTS latch_bench WITH (FORCE)');
await admin.query('CREATE DATABASE latch_bench');
await admin.end();
const url = new URL(server.url);
url.pathname = '/latch_bench';
const dir = await mkdtemp(join(tmpdir(), 'latch-bench-level-'));
const rows: string[] = [];
const single: string[] = [];
let cpu: { write: number[]; writeAll: number[] } | undefined;
let grouped: string[] = [];

/** One-tuple Writes per round of the CPU comparison (each one a commit flush). */
const CPU_WRITES = Math.min(2000, WRITES * 10);

/** Server CPU (µs) per one-tuple Write through each write function, alternating rounds on one connection. */
async function serverCpuPerWrite(dbUrl: string): Promise<{ write: number[]; writeAll: number[] }> {
  const s = await openPostgresStorage({ url: dbUrl, poolSize: 1 });
  const store = (await s.createStore('cpu')).id;
  await s.close();
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  const out = { write: [] as number[], writeAll: [] as number[] };
  try {
    const pid = Number((await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid);
    const key = (tag: string, i: number): unknown[] => [
      [`doc:${tag}-${i}`],
      ['doc'],
      ['viewer'],
      ['user:u'],
      [null],
      [null],
    ];
    const none = [[], [], [], [], []];
    const writeArgs = (tag: string, i: number): unknown[] => [
      store,
      Date.now(),
      true,
      true,
      'bench',
      true,
      ...none,
      ...key(tag, i),
    ];
    const writeAllArgs = (tag: string, i: number): unknown[] => [store, Date.now(), 'bench', ...none, ...key(tag, i)];
    const round = async (
      q: { name: string; text: string },
      values: (tag: string, i: number) => unknown[],
      tag: string,
    ): Promise<number> => {
      for (let i = 0; i < 100; i++) await c.query({ ...q, values: values(`${tag}w`, i) }); // prepared, warm
      const before = processCpuMs(pid);
      for (let i = 0; i < CPU_WRITES; i++) await c.query({ ...q, values: values(tag, i) });
      return ((processCpuMs(pid) - before) / CPU_WRITES) * 1000;
    };
    for (let r = 0; r < 4; r++) {
      out.write.push(await round(WRITE, writeArgs, `a${r}`));
      out.writeAll.push(await round(WRITE_ALL, writeAllArgs, `b${r}`));
    }
  } finally {
    await c.end();
  }
  return out;
}

/** The 8-writer single-store rates, `ROUNDS` times. */
async function groups(dbUrl: string): Promise<string[]> {
  const out: string[] = [];
  const serverCpu = server.embedded ? await databaseCpu(dbUrl) : undefined;
  const cpu = (): number => serverCpu?.read() ?? 0;
  try {
    for (let r = 0; r < ROUNDS; r++) {
      const cells: string[] = [];
      for (const size of [1, 100]) {
        const postgres = await openPostgresStorage({ url: dbUrl, poolSize: 10 });
        const m = await oneStoreCpu(postgres, size, WRITES, cpu);
        await postgres.close();
        cells.push(`${String(m.rate).padStart(6)} writes/s ${m.cpuUs.toFixed(0).padStart(6)} µs`);
      }
      out.push(`round ${r + 1}   ${cells.join('   ')}  load ${loadavg()[0]?.toFixed(1)}`);
    }
  } finally {
    await serverCpu?.close();
  }
  return out;
}

try {
  if (values.part === 'groups') {
    const lines = await groups(url.toString());
    process.stdout.write(
      `one store, ${WRITERS} concurrent writers × ${WRITES} writes; writes/s and PostgreSQL CPU per write\n` +
        `          1 tuple                         100 tuples\n${lines.join('\n')}\n`,
    );
    await rm(dir, { recursive: true, force: true });
    await server.stop();
    process.exit(0);
  }
  for (const stores of [1, 8]) {
    const level = await openLevelStorage(join(dir, `s${stores}`));
    const levelRate = await measure(level, stores);
    await level.close();
    const postgres = await openPostgresStorage({ url: url.toString(), poolSize: 10 });
    const pgRate = await measure(postgres, stores);
    await postgres.close();
    rows.push(`${String(stores).padStart(6)} ${String(levelRate).padStart(14)} ${String(pgRate).padStart(14)}`);
  }
  for (const size of [1, 100]) {
    const level = await openLevelStorage(join(dir, `one-${size}`));
    const levelRate = await oneStore(level, size, WRITES);
    await level.close();
    const postgres = await openPostgresStorage({ url: url.toString(), poolSize: 10 });
    const pgRate = await oneStore(postgres, size, WRITES);
    await postgres.close();
    single.push(`${String(size).padStart(6)} ${String(levelRate).padStart(14)} ${String(pgRate).padStart(14)}`);
  }
  if (server.embedded) cpu = await serverCpuPerWrite(url.toString());
  grouped = await groups(url.toString());
} finally {
  await rm(dir, { recursive: true, force: true });
  await server.stop();
}
process.stdout.write(
  `100-tuple writes, ${WRITES} per store, tuples/s\nstores        LevelDB     PostgreSQL\n${rows.join('\n')}\n`,
);
process.stdout.write(
  `one store, ${WRITERS} concurrent writers × ${WRITES} writes, writes/s\ntuples        LevelDB     PostgreSQL\n${single.join('\n')}\n`,
);
if (cpu)
  process.stdout.write(
    `server CPU per 1-tuple write, one connection, µs (4 alternating rounds of ${CPU_WRITES}):\n` +
      `latch_write                 ${cpu.write.map((x) => x.toFixed(0)).join(' ')}\n` +
      `latch_write_all         ${cpu.writeAll.map((x) => x.toFixed(0)).join(' ')}\n`,
  );
process.stdout.write(
  `one store, ${WRITERS} concurrent writers × ${WRITES} writes, PostgreSQL group commit, 1 and 100 tuples; writes/s, server CPU per write\n` +
    `${grouped.join('\n')}\n`,
);
process.exit(0);
