// The latch server under benchmark, in its own process: in-memory store, random port.
// Prints {"port": n} on stdout when listening; SIGTERM closes it.

import { startServer } from '../../src/main.js';

const server = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory' });
await server.latch.ready();
process.stdout.write(JSON.stringify({ port: server.port }) + '\n');
process.once('SIGTERM', () => void server.close().then(() => process.exit(0)));
