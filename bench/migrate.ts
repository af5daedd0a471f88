// Relation migrations and guarded writes, on LevelDB and on PostgreSQL, in the same run:
// - migrate throughput: a store of N `document#reader` tuples copied to `document#viewer` by
//   MigrateRelations steps of 1000 (each ten 100-tuple writes), tuples/s, against 100-tuple plain
//   Writes of N fresh tuples through the same service (the ratio is the cost of the migration's
//   reads and cursor);
// - guarded writes: one-tuple Writes with one Check precondition against one-tuple plain Writes,
//   alternating rounds, writes/s and the ratio.
// PostgreSQL is a throwaway embedded server (fsync on, like LevelDB's synced batches) unless
// LATCH_TEST_POSTGRES_URL names one.
//
//   npx tsx bench/migrate.ts [--tuples 20000] [--writes 300]

import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { TupleKey } from '../src/domain/types.js';
import { DEFAULT_ENGINE_CONFIG } from '../src/engine/config.js';
import type { WriteInput } from '../src/engine/contract.js';
import { LatchService } from '../src/engine/service.js';
import { dslToModel } from '../src/model/dsl.js';
import { openLevelStorage } from '../src/storage/level.js';
import { openPostgresStorage } from '../src/storage/postgres/index.js';
import type { Storage } from '../src/storage/types.js';
import { startPostgres } from '../test/support/postgres-server.js';

const { values } = parseArgs({
  options: { tuples: { type: 'string', default: '20000' }, writes: { type: 'string', default: '300' } },
});
const N = Number(values.tuples);
const WRITES = Number(values.writes);
const model = (rel: string) =>
  dslToModel(`model
  schema 1.1
type user
type document
  relations
    define owner: [user]
    define ${rel}: [user]
    define can_read: ${rel} or owner
`);
const NEW = model('viewer');
const key = (object: string, relation: string, user: string): TupleKey => ({ object, relation, user });
const plain = (storeId: string, writes: TupleKey[]): WriteInput => ({
  storeId,
  writes,
  deletes: [],
  onDuplicate: 'error',
  onMissing: 'error',
});
const seconds = (t0: bigint): number => Number(process.hrtime.bigint() - t0) / 1e9;

async function measure(storage: Storage): Promise<Record<string, number>> {
  const n = new LatchService(storage, { ...DEFAULT_ENGINE_CONFIG, workers: 0 }, () => undefined);
  try {
    const s = (await n.createStore('bench')).id;
    await n.writeModel(s, model('reader'));
    for (let i = 0; i < N; i += 100)
      await storage.writeTuples(s, {
        writes: Array.from({ length: Math.min(100, N - i) }, (_, j) =>
          key(`document:${i + j}`, 'reader', `user:u${(i + j) % 997}`),
        ),
        deletes: [],
        onDuplicate: 'error',
        onMissing: 'error',
      });
    // Plain Writes of N fresh tuples (the baseline), then the migration of the N reader tuples.
    let t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i += 100)
      await n.write(
        plain(
          s,
          Array.from({ length: 100 }, (_, j) => key(`document:p${i + j}`, 'owner', 'user:p')),
        ),
      );
    const plainRate = N / seconds(t0);
    t0 = process.hrtime.bigint();
    let cursor: string | undefined;
    let copied = 0;
    for (;;) {
      const out = await n.migrateRelations({
        storeId: s,
        maps: [{ objectType: 'document', from: 'reader', to: 'viewer' }],
        mode: 'copy',
        candidate: NEW,
        limit: 1000,
        cursor,
      });
      copied += out.copied;
      cursor = out.cursor;
      if (out.done) break;
    }
    const migrateRate = copied / seconds(t0);
    if (copied !== N) throw new Error(`copied ${copied} of ${N}`);
    // Guarded against plain one-tuple writes, alternating rounds of 50.
    let guardedS = 0;
    let plainS = 0;
    for (let r = 0; r < WRITES; r += 50) {
      t0 = process.hrtime.bigint();
      for (let i = r; i < r + 50; i++) await n.write(plain(s, [key(`document:${i}`, 'owner', `user:a${i}`)]));
      plainS += seconds(t0);
      t0 = process.hrtime.bigint();
      for (let i = r; i < r + 50; i++)
        await n.write({
          ...plain(s, [key(`document:${i}`, 'owner', `user:g${i}`)]),
          preconditions: [
            {
              kind: 'check',
              tupleKey: key(`document:${i}`, 'can_read', `user:a${i}`),
              contextualTuples: [],
              expect: true,
            },
          ],
        });
      guardedS += seconds(t0);
    }
    return {
      plainTuplesPerS: Math.round(plainRate),
      migrateTuplesPerS: Math.round(migrateRate),
      migrateRatio: Number((migrateRate / plainRate).toFixed(2)),
      plainWritesPerS: Math.round(WRITES / plainS),
      guardedWritesPerS: Math.round(WRITES / guardedS),
      guardedRatio: Number((plainS / guardedS).toFixed(2)),
    };
  } finally {
    await n.close();
  }
}

const dir = await mkdtemp(join(tmpdir(), 'latch-bench-migrate-'));
const server = await startPostgres(process.env, { fsync: true });
try {
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS latch_bench_migrate WITH (FORCE)');
  await admin.query('CREATE DATABASE latch_bench_migrate');
  await admin.end();
  const url = new URL(server.url);
  url.pathname = '/latch_bench_migrate';
  const rows: Record<string, Record<string, number>> = {};
  const load = loadavg()[0]?.toFixed(2);
  rows.leveldb = await measure(await openLevelStorage(dir));
  rows.postgres = await measure(await openPostgresStorage({ url: url.toString(), poolSize: 4 }));
  console.log(`migrate ${N} tuples, ${WRITES} guarded writes; load average ${load} → ${loadavg()[0]?.toFixed(2)}`);
  console.table(rows);
} finally {
  await rm(dir, { recursive: true, force: true });
  await server.stop();
}
