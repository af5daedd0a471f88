// The compiled server (dist/, `npm run build:ts` first) for benchmarks that measure memory: no
// TypeScript loader in the process, so worker threads carry none either (as `latch serve` runs).
// Reads the same LATCH_BENCH_HTTP_THREADS, LATCH_BENCH_MAIN_SERVES, LATCH_BENCH_THREAD_CHECKS,
// LATCH_BENCH_WORKERS and LATCH_BENCH_CACHE_SIZE as serve.ts; prints {"port": …} when listening.

import process from 'node:process';
import { startServer } from '../../dist/src/main.js';

const env = process.env;
const engine = {
  ...(env.LATCH_BENCH_WORKERS ? { workers: Number(env.LATCH_BENCH_WORKERS) } : {}),
  ...(env.LATCH_BENCH_CACHE_SIZE ? { cacheSize: Number(env.LATCH_BENCH_CACHE_SIZE) } : {}),
};
const server = await startServer({
  host: '127.0.0.1',
  port: 0,
  datastore: 'memory',
  httpThreads: Number(env.LATCH_BENCH_HTTP_THREADS ?? 1),
  mainThreadServes: env.LATCH_BENCH_MAIN_SERVES !== '0',
  threadChecks: env.LATCH_BENCH_THREAD_CHECKS !== '0',
  engine,
});
process.stdout.write(JSON.stringify({ port: server.port }) + '\n');
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
