// Queries at a past revision (docs/audit.md) on a 1M-tuple store (100k with --quick) with 100k
// more revisions of history (10k with --quick): one change each, alternately deleting one of the
// original tuples and writing a new one. Measured: a Check at 1k and at 100k revisions back when
// its past view must be built (each at a revision not built before; wall and process CPU) and when
// the view is cached, the RSS the builds add, and the p99 of live Checks offered open loop
// (2,000/s, latency from when each was due) alone and while past-view builds run beside them (same
// run, same process and event loop).
//
// Datastores: LATCH_BENCH_PAST_BACKENDS, a comma list of memory (the default), level, postgres;
// each is filled, measured and closed in turn, its metrics named `<backend>: …` (memory's plain).
// Memory and LevelDB are filled through storage; PostgreSQL (LATCH_TEST_POSTGRES_URL, else a
// throwaway embedded server) by SQL inside the server: the rows those writes leave (tuples, change
// log with delete rows carrying the deleted tuple's state as the write functions write them, revision
// times), since 100k one-change writes at ≈ 50 writes/s would take half an hour.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { LatchService } from '../../src/engine/service.js';
import { DEFAULT_ENGINE_CONFIG } from '../../src/engine/config.js';
import type { CheckInput } from '../../src/engine/contract.js';
import type { TupleKey } from '../../src/domain/types.js';
import { dslToModel } from '../../src/model/dsl.js';
import { openStorage } from '../../src/storage/index.js';
import type { Storage } from '../../src/storage/types.js';
import { startPostgres } from '../../test/support/postgres-server.js';
import { verify, type Metric, type Scenario } from '../scenario.js';

type Backend = 'memory' | 'level' | 'postgres';

const DSL = 'model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user]\n';
const USERS = 10;

function pct(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

const original = (i: number): TupleKey => ({ object: `doc:${i}`, relation: 'viewer', user: `user:${i % USERS}` });

/**
 * Live Checks offered open loop, one every 0.5 ms for `ms`: each one's latency counts from when it
 * was due, so time the event loop spent elsewhere (a past view being built) shows in it, as it
 * would for a request waiting on the socket. Sorted latencies in ms.
 */
async function liveLoop(latch: LatchService, input: (i: number) => CheckInput, ms: number): Promise<number[]> {
  const out: number[] = [];
  const start = performance.now();
  const count = Math.floor(ms / 0.5);
  for (let i = 0; i < count;) {
    const now = performance.now();
    for (; i < count && start + i * 0.5 <= now; i++) {
      await latch.check(input(i));
      out.push(performance.now() - (start + i * 0.5));
    }
    await new Promise<void>((r) => setImmediate(r));
  }
  return out.sort((a, b) => a - b);
}

/** A datastore of one store, filled, and how to remove it once the service closed the storage. */
interface Filled {
  readonly storage: Storage;
  readonly storeId: string;
  readonly modelId: string;
  readonly remove: () => Promise<void>;
}

/** `n` original tuples in chunks of 10,000 (one revision each), then `history` one-change writes. */
async function fillThroughStorage(storage: Storage, n: number, history: number): Promise<Filled> {
  const store = await storage.createStore('history');
  const model = await storage.writeModel(store.id, dslToModel(DSL));
  for (let i = 0; i < n; i += 10_000) {
    const writes: TupleKey[] = [];
    for (let j = i; j < Math.min(n, i + 10_000); j++) writes.push(original(j));
    await storage.writeTuples(store.id, { writes, deletes: [], onDuplicate: 'error', onMissing: 'error' });
  }
  for (let i = 0; i < history; i++) {
    const one = i % 2 === 0 ? { deletes: [original(i / 2)], writes: [] } : { deletes: [], writes: [original(n + i)] };
    await storage.writeTuples(store.id, { ...one, onDuplicate: 'error', onMissing: 'error' });
  }
  return { storage, storeId: store.id, modelId: model.id, remove: async () => undefined };
}

/** The same store on PostgreSQL, its rows made by SQL in one transaction (see the header). */
async function fillPostgres(n: number, history: number): Promise<Filled> {
  const server = await startPostgres(process.env, { fsync: true });
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS latch_bench_past WITH (FORCE)');
  await admin.query('CREATE DATABASE latch_bench_past');
  await admin.end();
  const url = new URL(server.url);
  url.pathname = '/latch_bench_past';
  const storage = await openStorage({ postgres: { url: url.toString(), poolSize: 4 } });
  const store = await storage.createStore('history');
  const model = await storage.writeModel(store.id, dslToModel(DSL));
  const c = new pg.Client({ connectionString: url.toString() });
  await c.connect();
  try {
    const ms = Date.now();
    const base = Math.ceil(n / 10_000);
    const o = (i: string): string => `'doc:' || ${i}`;
    const u = (i: string): string => `'user:' || (${i} % ${USERS})`;
    await c.query('BEGIN');
    // originals h/2 … n-1 survive (0 … h/2-1 are deleted by the history), and the history's writes
    await c.query(
      `INSERT INTO latch_tuples (store_key, object, relation, "user", condition, written_ms)
       SELECT (SELECT key FROM latch_stores WHERE id = $1), ${o('i')}, 'viewer', ${u('i')}, NULL, $2::bigint FROM generate_series($3::bigint, $4::bigint - 1) AS i
       UNION ALL
       SELECT (SELECT key FROM latch_stores WHERE id = $1), ${o('($4 + j)')}, 'viewer', ${u('($4 + j)')}, NULL, $2::bigint FROM generate_series(1, $5::bigint - 1, 2) AS j`,
      [store.id, ms, history / 2, n, history],
    );
    await c.query(
      `INSERT INTO latch_changes (store_id, revision, seq, deleted, object, object_type, relation, "user", condition, ms)
       SELECT $1, 1 + i / 10000, i % 10000, false, ${o('i')}, 'doc', 'viewer', ${u('i')}, NULL, $2::bigint
         FROM generate_series(0, $3::bigint - 1) AS i
       UNION ALL
       SELECT $1, $4::bigint + 1 + j, 0, j % 2 = 0, ${o('(CASE WHEN j % 2 = 0 THEN j / 2 ELSE $3 + j END)')}, 'doc', 'viewer',
              ${u('(CASE WHEN j % 2 = 0 THEN j / 2 ELSE $3 + j END)')}, CASE WHEN j % 2 = 0 THEN '[null,null]' END, $2::bigint
         FROM generate_series(0, $5::bigint - 1) AS j`,
      [store.id, ms, n, base, history],
    );
    await c.query(
      'INSERT INTO latch_revisions (store_id, revision, ms) SELECT $1, r, $2::bigint FROM generate_series(1, $3::bigint) AS r',
      [store.id, ms, base + history],
    );
    await c.query('UPDATE latch_stores SET revision = $2, last_ms = $3 WHERE id = $1', [store.id, base + history, ms]);
    await c.query('COMMIT');
    await c.query('ANALYZE latch_tuples');
    await c.query('ANALYZE latch_changes');
  } finally {
    await c.end();
  }
  return {
    storage,
    storeId: store.id,
    modelId: model.id,
    remove: () => server.stop(),
  };
}

async function fill(backend: Backend, n: number, history: number): Promise<Filled> {
  if (backend === 'postgres') return fillPostgres(n, history);
  if (backend === 'memory') return fillThroughStorage(await openStorage({}), n, history);
  const dir = await mkdtemp(join(tmpdir(), 'latch-bench-past-'));
  const filled = await fillThroughStorage(await openStorage({ path: dir }), n, history);
  return {
    ...filled,
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

async function runOn(backend: Backend, quick: boolean): Promise<Metric[]> {
  const n = quick ? 100_000 : 1_000_000;
  const history = quick ? 10_000 : 100_000;
  const progress = (what: string): void => void process.stderr.write(`past-revision (${backend}): ${what}\n`);
  const fillStart = performance.now();
  const { storage, storeId, modelId, remove } = await fill(backend, n, history);
  const base = Math.ceil(n / 10_000);
  const head = await storage.revision(storeId);
  verify('head revision', head, base + history);
  progress(`filled: ${n} tuples, revision ${head}, ${((performance.now() - fillStart) / 1000).toFixed(0)} s`);
  const latch = new LatchService(storage, { ...DEFAULT_ENGINE_CONFIG }, undefined, { expirySweepMs: 0 });
  await latch.ready();
  const check = (i: number, at?: number): CheckInput => ({
    storeId,
    modelId,
    tupleKey: original(i),
    contextualTuples: [],
    consistency: 'UNSPECIFIED',
    ...(at === undefined ? {} : { at: { revision: at } }),
  });
  // warm the live path and measure the resident set the loaded store holds
  for (let i = 0; i < 1_000; i++) await latch.check(check((i * 7919) % n));
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const rssLoaded = process.memoryUsage().rss;
  let rssPeak = rssLoaded;

  const metrics: Metric[] = [];
  const prefix = backend === 'memory' ? '' : `${backend}: `;
  const m = (metric: string, value: number, unit: string): void => {
    metrics.push({ scenario: 'past-revision', metric: prefix + metric, value, unit });
  };
  for (const back of [1_000, history]) {
    const builds: number[] = [];
    const cpu: number[] = [];
    for (let k = 0; k < 5; k++) {
      const at = head - back + k; // a revision not built before: the view is built
      // doc:0 was deleted by the first history revision: granted before it, refused after.
      const t = performance.now();
      const c0 = cpuMs();
      const r = await latch.check(check(0, at));
      cpu.push(cpuMs() - c0);
      builds.push(performance.now() - t);
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
      progress(
        `check ${head - at} back: ${(performance.now() - t).toFixed(0)} ms, CPU ${(cpuMs() - c0).toFixed(0)} ms`,
      );
      verify(`doc:0 at ${at}`, r.allowed, at < base + 1);
      // The tuple deleted by revision `at + 1` exists at `at` and not at the head.
      const deletedNext = (at + 1 - base - 1) / 2;
      if (Number.isInteger(deletedNext)) {
        verify(`deleted after ${at}`, (await latch.check(check(deletedNext, at))).allowed, true);
        verify(`deleted now`, (await latch.check(check(deletedNext))).allowed, false);
      }
    }
    const cached: number[] = [];
    for (let k = 0; k < 200; k++) {
      const t = performance.now();
      await latch.check(check(n - 1 - k, head - back));
      cached.push(performance.now() - t);
    }
    builds.sort((a, b) => a - b);
    cpu.sort((a, b) => a - b);
    cached.sort((a, b) => a - b);
    const label = back === history ? `${history / 1000}k` : '1k';
    m(`check ${label} back, view built: p50`, pct(builds, 0.5), 'ms');
    m(`check ${label} back, view built: max`, builds[builds.length - 1] ?? 0, 'ms');
    m(`check ${label} back, view built: process CPU p50`, pct(cpu, 0.5), 'ms');
    m(`check ${label} back, view cached: p50`, pct(cached, 0.5), 'ms');
    m(`check ${label} back, view cached: p99`, pct(cached, 0.99), 'ms');
  }
  // Views are cached (DEFAULT_HISTORY_LIMITS.cachedViews); the growth is the builds' working set
  // plus the cached views' overlays.
  m('RSS growth over the loaded store, peak during the view builds', (rssPeak - rssLoaded) / 2 ** 20, 'MiB');
  m('RSS of the loaded store', rssLoaded / 2 ** 20, 'MiB');

  const live = (i: number): CheckInput => check((i * 7919) % n);
  const alone = await liveLoop(latch, live, quick ? 2_000 : 5_000);
  let stop = false;
  let built = 0;
  const beside = (async (): Promise<void> => {
    for (let k = 10; !stop; k++) {
      await latch.check(check(k, head - 1_000 - (k % 500)));
      built++;
      // Requests arrive as separate macrotasks; the memory datastore alone would never yield.
      await new Promise<void>((r) => setImmediate(r));
    }
  })();
  const withPast = await liveLoop(latch, live, quick ? 2_000 : 5_000);
  stop = true;
  await beside;
  m('live check alone: p50', pct(alone, 0.5) * 1000, 'µs');
  m('live check alone: p99', pct(alone, 0.99) * 1000, 'µs');
  m('live check beside 1k-back queries: p50', pct(withPast, 0.5) * 1000, 'µs');
  m('live check beside 1k-back queries: p99', pct(withPast, 0.99) * 1000, 'µs');
  m('past queries run beside', built, 'queries');
  await latch.close(); // closes the storage too
  await remove();
  return metrics;
}

export const pastRevision: Scenario = {
  name: 'past-revision',
  description: 'Check at 1k / 100k revisions back on a 1M-tuple store: view build, cached, and live Check p99 beside',
  async run(opts) {
    const backends = (process.env.LATCH_BENCH_PAST_BACKENDS ?? 'memory').split(',') as Backend[];
    for (const b of backends)
      if (b !== 'memory' && b !== 'level' && b !== 'postgres') throw new Error(`unknown backend ${String(b)}`);
    const metrics: Metric[] = [];
    for (const b of backends) metrics.push(...(await runOn(b, opts.quick)));
    return metrics;
  },
};
