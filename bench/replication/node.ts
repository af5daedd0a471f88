// One latch node under the replication benchmark, in its own process: PostgreSQL at
// $LATCH_BENCH_PG_URL (or memory when unset: the single-node baseline), the engine's defaults
// (poll every 1 s, NOTIFY for everything else), HTTP on a random port printed as {"port": n}.
// Prints {"ready": ms} once every store's index is loaded (ms since the process started), and its
// in-process histograms as {"stats": …} at SIGUSR1.

import { performance } from 'node:perf_hooks';
import { LatchService } from '../../src/engine/service.js';

import { createHttpServer } from '../../src/http/server.js';
import { openStorage } from '../../src/storage/index.js';
import { traceNode } from './trace.js';
import { DEFAULT_ENGINE_CONFIG } from '../../src/engine/config.js';

const url = process.env.LATCH_BENCH_PG_URL;
const storage = await openStorage(url ? { postgres: { url, poolSize: 8 } } : {});
if (process.env.LATCH_BENCH_TRACE) traceNode(storage, process.env.LATCH_BENCH_TRACE);
const latch = new LatchService(storage, { ...DEFAULT_ENGINE_CONFIG, workers: 0 }, (level, msg, fields) =>
  process.stderr.write(`${level} ${msg} ${JSON.stringify(fields)}\n`),
);
const http = createHttpServer(latch, { metrics: false });
// The SIGTERM handler goes in before anything is announced: set after the "ready" line, a
// SIGTERM sent as soon as the line is read could find the default action (exit at once, no
// checkpoint written at close) when this process is descheduled in between on a busy machine.
let listening: Promise<unknown> = Promise.resolve();
process.once(
  'SIGTERM',
  () =>
    void listening
      .then(() => http.close(0))
      .then(() => latch.close())
      .then(() => process.exit(0)),
);
// {"stats": …} on stdout at SIGUSR1: the in-process histograms (cumulative; the caller takes differences).
process.on('SIGUSR1', () => {
  const s = latch.stats();
  const h = (t: { counts: Float64Array; count: number; sumMs: number }): unknown => ({
    counts: [...t.counts],
    count: t.count,
    sumMs: t.sumMs,
  });
  const stats = { applyLag: h(s.replication.applyLag), writes: h(s.writes), carried: s.replication.revisionsCarried };
  process.stdout.write(JSON.stringify({ stats }) + '\n');
});
const port = await (listening = http.listen('127.0.0.1', 0));
process.stdout.write(JSON.stringify({ port }) + '\n');
await latch.ready();
process.stdout.write(JSON.stringify({ ready: performance.now() }) + '\n');
