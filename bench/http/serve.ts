// The latch server under benchmark, in its own process: in-memory store, random port.
// LATCH_BENCH_PLAYGROUND=1 also serves the built playground (bench/http/playground.ts).
// Prints {"port": n} on stdout when listening; SIGTERM closes it. LATCH_BENCH_LOOP_DELAY=1 also
// prints {"maxLoopDelayMs": n} (the longest event-loop delay seen) when it closes.

import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startServer } from '../../src/main.js';

const playground = process.env.LATCH_BENCH_PLAYGROUND === '1' ? { required: true } : undefined;
// LATCH_BENCH_HTTP_THREADS=N: `--http-threads N`; LATCH_BENCH_MAIN_SERVES=0: only worker threads accept.
const httpThreads = Number(process.env.LATCH_BENCH_HTTP_THREADS ?? 1);
const mainThreadServes = process.env.LATCH_BENCH_MAIN_SERVES !== '0';
const engine = process.env.LATCH_BENCH_WORKERS ? { workers: Number(process.env.LATCH_BENCH_WORKERS) } : undefined;
const server = await startServer({
  host: '127.0.0.1',
  port: 0,
  datastore: 'memory',
  playground,
  httpThreads,
  mainThreadServes,
  engine,
});
await server.latch.ready();
process.stdout.write(JSON.stringify({ port: server.port }) + '\n');
const loop = process.env.LATCH_BENCH_LOOP_DELAY === '1' ? monitorEventLoopDelay({ resolution: 10 }) : undefined;
loop?.enable();
process.once('SIGTERM', () => {
  if (loop) process.stdout.write(JSON.stringify({ maxLoopDelayMs: +(loop.max / 1e6).toFixed(1) }) + '\n');
  void server.close().then(() => process.exit(0));
});
