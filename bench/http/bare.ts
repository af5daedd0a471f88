// The baseline of the HTTP benchmarks: a bare uWS handler that collects and JSON-parses the same
// Check body and answers {"allowed":true}. Prints {"port": n} on stdout when listening.

import { loadUws } from '../../src/http/uws.js';

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
    const ok = typeof body.tuple_key?.user === 'string';
    res.cork(() => {
      res.writeStatus(ok ? '200 OK' : '400 Bad Request').writeHeader('Content-Type', 'application/json').end('{"allowed":true}');
    });
  });
});
app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) throw new Error('bare server: cannot listen');
  process.stdout.write(JSON.stringify({ port: uws.us_socket_local_port(socket as never) }) + '\n');
});
