// The baseline of the HTTP benchmarks: a bare uWS handler that collects and JSON-parses the same
// Check body and answers {"allowed":true}. Prints {"port": n} on stdout when listening.
// LATCH_BENCH_BARE_SPIN_US: burn that many µs of CPU per request before answering (bench/http/tail.ts:
// a handler as costly as latch, to see whether the latency tail follows the CPU per request).

import { loadUws } from '../../src/http/uws.js';

const spinMs = Number(process.env.LATCH_BENCH_BARE_SPIN_US ?? 0) / 1000;
const uws = loadUws();
const app = uws.App();
app.post('/stores/:store_id/check', (res) => {
  let aborted = false;
  let parts: Buffer[] = [];
  res.onAborted(() => void (aborted = true));
  res.onData((chunk, isLast) => {
    parts.push(Buffer.from(new Uint8Array(chunk)));
    if (!isLast) return;
    const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { tuple_key?: { user?: string } };
    parts = [];
    if (aborted) return;
    if (spinMs > 0) for (const until = performance.now() + spinMs; performance.now() < until;);
    const ok = typeof body.tuple_key?.user === 'string';
    res.cork(() => {
      res
        .writeStatus(ok ? '200 OK' : '400 Bad Request')
        .writeHeader('Content-Type', 'application/json')
        .end('{"allowed":true}');
    });
  });
});
app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) throw new Error('bare server: cannot listen');
  process.stdout.write(JSON.stringify({ port: uws.us_socket_local_port(socket as never) }) + '\n');
});
