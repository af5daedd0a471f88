// Datastore load of idle Watch streams on PostgreSQL: transactions per second committed in the
// database (pg_stat_database.xact_commit) over a window with no streams, then with N idle Watch
// streams open on one store (default 500; nothing is written meanwhile). Before the node's
// revision feed every stream read the changelog once a second; now one poll serves them all.
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

const server = await startPostgres(process.env);
const admin = new pg.Client({ connectionString: server.url });
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

const commits = async (): Promise<number> =>
  Number(
    (await admin.query("SELECT xact_commit FROM pg_stat_database WHERE datname = 'latch_watch_bench'")).rows[0]
      .xact_commit,
  );

/** Committed transactions per second in the database over the window. */
async function rate(): Promise<number> {
  const before = await commits();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  return ((await commits()) - before) / SECONDS;
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
  JSON.stringify({ streams: N, seconds: SECONDS, txPerSecondIdle: idle, txPerSecondWithStreams: withStreams }),
);
for (const close of open) close();
await latch.close();
await admin.end();
await server.stop();
