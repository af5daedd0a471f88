// The latch server under benchmark, in its own process: in-memory store, random port.
// LATCH_BENCH_PLAYGROUND=1 also serves the built playground (bench/http/playground.ts).
// Prints {"port": n} on stdout when listening; SIGTERM closes it.

import { startServer } from '../../src/main.js';

const playground = process.env.LATCH_BENCH_PLAYGROUND === '1' ? { required: true } : undefined;
const server = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory', playground });
await server.latch.ready();
process.stdout.write(JSON.stringify({ port: server.port }) + '\n');
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
