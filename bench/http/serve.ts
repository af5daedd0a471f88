// The latch server under benchmark, in its own process: in-memory store, random port.
// LATCH_BENCH_PLAYGROUND=1 also serves the built playground (bench/http/playground.ts).
// LATCH_BENCH_DECISION_LOG=<sampling> records decisions (bench/decisions.ts), with
// LATCH_BENCH_DECISION_MAX_BYTES as the log's cap; LATCH_BENCH_DATA_DIR: LevelDB there instead of memory.
// Prints {"port": n} on stdout when listening; SIGTERM closes it. LATCH_BENCH_LOOP_DELAY=1 also
// prints {"maxLoopDelayMs": n} (the longest event-loop delay seen) when it closes.

import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startServer } from '../../src/main.js';

const playground = process.env.LATCH_BENCH_PLAYGROUND === '1' ? { required: true } : undefined;
// LATCH_BENCH_HTTP_THREADS=N: `--http-threads N`; LATCH_BENCH_MAIN_SERVES=0: only worker threads accept.
const env = process.env;
const httpThreads = Number(env.LATCH_BENCH_HTTP_THREADS ?? 1);
const mainThreadServes = env.LATCH_BENCH_MAIN_SERVES !== '0';
const engine = env.LATCH_BENCH_WORKERS ? { workers: Number(env.LATCH_BENCH_WORKERS) } : undefined;
const dataDir = env.LATCH_BENCH_DATA_DIR;
const server = await startServer({
  host: '127.0.0.1',
  port: 0,
  datastore: dataDir ? 'leveldb' : 'memory',
  dataDir,
  playground,
  httpThreads,
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
process.stdout.write(JSON.stringify({ port: server.port }) + '\n');
const loop = process.env.LATCH_BENCH_LOOP_DELAY === '1' ? monitorEventLoopDelay({ resolution: 10 }) : undefined;
loop?.enable();
process.once('SIGTERM', () => {
  if (loop) process.stdout.write(JSON.stringify({ maxLoopDelayMs: +(loop.max / 1e6).toFixed(1) }) + '\n');
  void server.close().then(() => process.exit(0));
});
