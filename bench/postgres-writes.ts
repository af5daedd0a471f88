// Write throughput of the storage backends: 100-tuple writes (one Write request each) into one
// store, and into eight stores at once, on LevelDB and on PostgreSQL, in the same run on the same
// machine. PostgreSQL is a throwaway embedded server (fsync on, like LevelDB's synced batches)
// unless LATCH_TEST_POSTGRES_URL names one.
//
//   npx tsx bench/postgres-writes.ts [--writes 200]     (writes per store)

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openLevelStorage } from '../src/storage/level.js';
import { openPostgresStorage } from '../src/storage/postgres/index.js';
import type { Storage, TupleWrite } from '../src/storage/types.js';
import { startPostgres } from '../test/support/postgres-server.js';

const { values } = parseArgs({ options: { writes: { type: 'string', default: '200' } } });
const WRITES = Number(values.writes);
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
try {
  for (const stores of [1, 8]) {
    const level = await openLevelStorage(join(dir, `s${stores}`));
    const levelRate = await measure(level, stores);
    await level.close();
    const postgres = await openPostgresStorage({ url: url.toString(), poolSize: 10 });
    const pgRate = await measure(postgres, stores);
    await postgres.close();
    rows.push(`${String(stores).padStart(6)} ${String(levelRate).padStart(14)} ${String(pgRate).padStart(14)}`);
  }
} finally {
  await rm(dir, { recursive: true, force: true });
  await server.stop();
}
process.stdout.write(
  `100-tuple writes, ${WRITES} per store, tuples/s\nstores        LevelDB     PostgreSQL\n${rows.join('\n')}\n`,
);
process.exit(0);
