// Datastore load of idle Watch streams on PostgreSQL: transactions per second committed in the
// database (pg_stat_database.xact_commit) over a window with no streams, then with N idle Watch
// streams open on one store (default 500; nothing is written meanwhile), beside the statements
// the node itself sent a second. Before the node's revision feed every stream read the changelog
// once a second; now commits reach the feed by LISTEN/NOTIFY and idle streams cost no statement.
// Uses the test run's embedded PostgreSQL unless LATCH_TEST_POSTGRES_URL names one.
//   npx tsx bench/attack/watch-idle-postgres.ts [--streams 500] [--seconds 10]

import { request } from 'node:http';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startServer } from '../../src/main.js';
import { startPostgres } from '../../test/support/postgres-server.js';

const { values } = parseArgs({
  options: { streams: { type: 'string', default: '500' }, seconds: { type: 'string', default: '10' } },
});
const N = Number(values.streams);
const SECONDS = Number(values.seconds);

// Every statement the node sends, counted at its client (the node runs in this process): exact at
// once, where the database's own counters below lag while backends hold them.
let nodeQueries = 0;
const ours = new Set<unknown>();
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  if (!ours.has(this)) nodeQueries++;
  return (query as (...a: unknown[]) => unknown).apply(this, args);
} as typeof query;

const server = await startPostgres(process.env);
const admin = new pg.Client({ connectionString: server.url });
ours.add(admin);
await admin.connect();
await admin.query('DROP DATABASE IF EXISTS latch_watch_bench WITH (FORCE)');
await admin.query('CREATE DATABASE latch_watch_bench');
const url = new URL(server.url);
url.pathname = '/latch_watch_bench';
const latch = await startServer({
  host: '127.0.0.1',
  port: 0,
  datastore: 'postgres',
  postgres: { url: url.toString(), migrate: true },
  liveStreams: { perClient: N + 10, total: N + 10 },
});
const base = `http://127.0.0.1:${latch.port}`;
const store = (
  (await (await fetch(`${base}/stores`, { method: 'POST', body: '{"name":"w"}' })).json()) as { id: string }
).id;

/**
 * The database's committed transactions so far. A backend may hold its counters until its
 * idle-statistics timer fires (up to 10 s, PostgreSQL ≥ 15) and a reading is cached for the rest
 * of the reading transaction: so each reading first waits FLUSH_MS and drops any cached
 * statistics snapshot. The node's own statements, counted at its client, are the cross-check.
 */
const FLUSH_MS = 12_000;
/** The node's statements a second, per window, in the order measured. */
const nodeRates: number[] = [];
async function commits(): Promise<number> {
  await new Promise((r) => setTimeout(r, FLUSH_MS));
  await admin.query('SELECT pg_stat_clear_snapshot()');
  const r = await admin.query("SELECT xact_commit FROM pg_stat_database WHERE datname = 'latch_watch_bench'");
  return Number(r.rows[0].xact_commit);
}

/** Committed transactions per second in the database over the window (`extra` runs meanwhile). */
async function rate(extra?: (until: number) => Promise<void>): Promise<number> {
  const before = await commits();
  const q0 = nodeQueries;
  const t0 = Date.now();
  const until = t0 + SECONDS * 1000;
  await Promise.all([new Promise((r) => setTimeout(r, SECONDS * 1000)), extra?.(until)]);
  const after = await commits();
  const seconds = (Date.now() - t0) / 1000;
  nodeRates.push(+((nodeQueries - q0) / seconds).toFixed(2));
  return (after - before) / seconds;
}

const idle = await rate();
const open: (() => void)[] = [];
await Promise.all(
  Array.from(
    { length: N },
    () =>
      new Promise<void>((resolve, reject) => {
        const req = request(`${base}/stores/${store}/watch?heartbeat_ms=8000`, { agent: false }, (res) => {
          res.once('data', () => resolve());
          res.resume();
        });
        req.on('error', reject);
        req.end();
        open.push(() => req.destroy());
      }),
  ),
);
await new Promise((r) => setTimeout(r, 2000)); // the streams' first reads are done
const withStreams = await rate();
console.log(
  JSON.stringify({
    streams: N,
    seconds: SECONDS,
    txPerSecondIdle: +idle.toFixed(2),
    txPerSecondWithStreams: +withStreams.toFixed(2),
    nodeQueriesPerSecondIdle: nodeRates[0],
    nodeQueriesPerSecondWithStreams: nodeRates[1],
  }),
);
for (const close of open) close();
await latch.close();
await admin.end();
await server.stop();
