// The latch server under benchmark, in its own process: in-memory store, random port.
// LATCH_BENCH_PLAYGROUND=1 also serves the built playground (bench/http/playground.ts).
// LATCH_BENCH_DECISION_LOG=<sampling> records decisions (bench/decisions.ts), with
// LATCH_BENCH_DECISION_MAX_BYTES as the log's cap; LATCH_BENCH_DATA_DIR: LevelDB there instead of memory.
// Prints {"port": n} on stdout when listening; SIGTERM closes it. LATCH_BENCH_LOOP_DELAY=1 also
// prints {"maxLoopDelayMs": n} (the longest event-loop delay seen) when it closes.
// LATCH_BENCH_AUTH=client-credentials: that auth mode, and the first line also carries a token
// ("token") with every scope on every store, signed by the server's own key.

import { createServer } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { SCOPES } from '../../src/api/auth/operations.js';
import { startServer } from '../../src/main.js';

const playground = process.env.LATCH_BENCH_PLAYGROUND === '1' ? { required: true } : undefined;
// LATCH_BENCH_HTTP_THREADS=N: `--http-threads N`; LATCH_BENCH_MAIN_SERVES=0: only worker threads accept.
const env = process.env;
const httpThreads = Number(env.LATCH_BENCH_HTTP_THREADS ?? 1);
const mainThreadServes = env.LATCH_BENCH_MAIN_SERVES !== '0';
// LATCH_BENCH_THREAD_CHECKS=0: HTTP threads forward Check to the main thread (the baseline).
const threadChecks = env.LATCH_BENCH_THREAD_CHECKS !== '0';
// LATCH_BENCH_CACHE_SIZE=0: no result cache (every Check walks).
const engine =
  env.LATCH_BENCH_WORKERS || env.LATCH_BENCH_CACHE_SIZE
    ? {
        ...(env.LATCH_BENCH_WORKERS ? { workers: Number(env.LATCH_BENCH_WORKERS) } : {}),
        ...(env.LATCH_BENCH_CACHE_SIZE ? { cacheSize: Number(env.LATCH_BENCH_CACHE_SIZE) } : {}),
      }
    : undefined;
const dataDir = env.LATCH_BENCH_DATA_DIR;
const withAuth = env.LATCH_BENCH_AUTH === 'client-credentials';
// The issuer names the port, so an authenticated server takes a free one chosen first.
const port = withAuth
  ? await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const a = probe.address();
        probe.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
      });
    })
  : 0;
const issuer = `http://127.0.0.1:${port}`;
const server = await startServer({
  host: '127.0.0.1',
  port,
  auth: withAuth ? { mode: 'client-credentials', issuer, audience: issuer } : undefined,
  datastore: dataDir ? 'leveldb' : 'memory',
  dataDir,
  playground,
  httpThreads,
  threadChecks,
  mainThreadServes,
  engine,
  decisionLog: env.LATCH_BENCH_DECISION_LOG
    ? {
        sampling: Number(env.LATCH_BENCH_DECISION_LOG),
        maxBytes: env.LATCH_BENCH_DECISION_MAX_BYTES ? Number(env.LATCH_BENCH_DECISION_MAX_BYTES) : undefined,
      }
    : undefined,
});
await server.latch.ready();
let token: string | undefined;
if (withAuth) {
  const { client } = await server.auth.clients!.create({ storeId: '*', scopes: [...SCOPES], name: 'bench' });
  const now = Math.floor(Date.now() / 1000);
  token = await server.auth.keys!.sign({
    iss: issuer,
    sub: client.id,
    aud: `${issuer}/`,
    iat: now,
    exp: now + 3600,
    client_id: client.id,
    scope: SCOPES.join(' '),
    store_id: '*',
  });
}
process.stdout.write(JSON.stringify({ port: server.port, token }) + '\n');
const loop = process.env.LATCH_BENCH_LOOP_DELAY === '1' ? monitorEventLoopDelay({ resolution: 10 }) : undefined;
loop?.enable();
process.once('SIGTERM', () => {
  if (loop) process.stdout.write(JSON.stringify({ maxLoopDelayMs: +(loop.max / 1e6).toFixed(1) }) + '\n');
  void server.close().then(() => process.exit(0));
});
