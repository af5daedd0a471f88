// Heap kept by unauthenticated traffic: N requests with no token (default 100,000, keep-alive,
// 32 in flight) to a well-formed store id of a server in client-credentials mode with store logs
// on (in memory, `--datastore memory`), then the store log flushed, a full GC, and the heap
// compared with the heap before. Run: `node --expose-gc --import tsx bench/auth/unauthenticated.ts`.

import { Agent, request } from 'node:http';
import { startServer } from '../../src/main.js';

const N = Number(process.env.N ?? 100_000);
const CONCURRENCY = 32;
const STORE = '01JAAAAAAAAAAAAAAAAAAAAAAA';

function gc(): void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (!g) throw new Error('run with node --expose-gc');
  for (let i = 0; i < 3; i++) g();
}

async function main(): Promise<void> {
  const server = await startServer({
    host: '127.0.0.1',
    port: 0,
    datastore: 'memory',
    auth: { mode: 'client-credentials', issuer: 'http://127.0.0.1', audience: 'http://127.0.0.1', logRetentionDays: 7 },
  });
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const body = JSON.stringify({ tuple_key: { user: 'user:a', relation: 'viewer', object: 'doc:1' } });
  const send = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: server.port,
          method: 'POST',
          path: `/stores/${STORE}/check`,
          agent,
          headers: { 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  for (let i = 0; i < 1000; i++) await send(); // warm every path first
  await server.auth.logs.flush();
  gc();
  const before = process.memoryUsage().heapUsed;
  let next = 0;
  const statuses = new Map<number, number>();
  const worker = async (): Promise<void> => {
    while (next++ < N) {
      const s = await send();
      statuses.set(s, (statuses.get(s) ?? 0) + 1);
    }
  };
  const t0 = Date.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (Date.now() - t0) / 1000;
  await server.auth.logs.flush();
  gc();
  const after = process.memoryUsage().heapUsed;
  if ((statuses.get(401) ?? 0) !== N) throw new Error(`expected ${N} × 401, got ${JSON.stringify([...statuses])}`);
  console.log(
    JSON.stringify({
      requests: N,
      seconds,
      heapBeforeMB: +(before / 1e6).toFixed(1),
      heapAfterMB: +(after / 1e6).toFixed(1),
      growthMB: +((after - before) / 1e6).toFixed(1),
      bytesPerRequest: Math.round((after - before) / N),
    }),
  );
  agent.destroy();
  await server.close();
}

await main();
