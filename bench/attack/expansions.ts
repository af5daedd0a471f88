// The ReadExpansions crash scenario, re-run against a server in its own process: a store with
// TRIPLES materialised triples (default 200,000) in one permission index, then STREAMS (default
// 200) ReadExpansions requests without `from` whose sockets never read, held for HOLD_MS
// (default 20,000). Meanwhile /healthz is timed every 100 ms and a Check is asked every second.
// Prints the server's RSS before, its peak (VmHWM), the longest /healthz answer, the server's
// longest event-loop delay, and whether every Check was right.
// Run: `npx tsx bench/attack/expansions.ts` (TRIPLES, STREAMS, HOLD_MS override).

import { spawn } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { jsonCaller, statusMb } from './process.js';

const TRIPLES = Number(process.env.TRIPLES ?? 200_000);
const STREAMS = Number(process.env.STREAMS ?? 200);
const HOLD_MS = Number(process.env.HOLD_MS ?? 20_000);

const server = spawn(
  process.execPath,
  ['--max-semi-space-size=4', '--no-parallel-scavenge', '--import', 'tsx', 'bench/http/serve.ts'],
  { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, LATCH_BENCH_LOOP_DELAY: '1' } },
);
const port = await new Promise<number>((resolve) => {
  let buf = '';
  server.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    const nl = buf.indexOf('\n');
    if (nl >= 0) resolve((JSON.parse(buf.slice(0, nl)) as { port: number }).port);
  });
});
const base = `http://127.0.0.1:${port}`;
const status = (field: string): number => statusMb(server.pid, field);
const call = jsonCaller(base);

const store = (await call('POST', '/stores', { name: 'attack' })).id as string;
const modelBody = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'doc',
      relations: { viewer: { this: {} } },
      metadata: { relations: { viewer: { directly_related_user_types: [{ type: 'user' }] } } },
    },
  ],
};
const model = (await call('POST', `/stores/${store}/authorization-models`, modelBody)).authorization_model_id as string;
for (let d = 0; d < TRIPLES; d += 100) {
  const tuple_keys = Array.from({ length: Math.min(100, TRIPLES - d) }, (_, i) => ({
    user: `user:${(d + i) % 9973}`,
    relation: 'viewer',
    object: `doc:${d + i}`,
  }));
  await call('POST', `/stores/${store}/write`, { writes: { tuple_keys } });
}
const index = (await call('POST', `/stores/${store}/indexes`, {
  name: 'v',
  relations: [{ object_type: 'doc', relation: 'viewer' }],
})) as { index_id: string };
while ((await call('GET', `/stores/${store}/indexes/${index.index_id}`)).status !== 'ACTIVE') await sleep(200);

const rssBefore = status('VmRSS:');
const sockets: Socket[] = [];
for (let i = 0; i < STREAMS; i++) {
  const s = connect(port, '127.0.0.1');
  s.on('error', () => undefined);
  s.write(
    `GET /stores/${store}/indexes/${index.index_id}/expansions?authorization_model_id=${model} HTTP/1.1\r\nHost: x\r\n\r\n`,
  );
  s.pause(); // never reads: the server's writes back up
  sockets.push(s);
}
let worstHealthz = 0;
let checks = 0;
let wrong = 0;
const until = Date.now() + HOLD_MS;
let lastCheck = 0;
while (Date.now() < until) {
  const t0 = performance.now();
  await fetch(`${base}/healthz`).then((r) => r.text());
  worstHealthz = Math.max(worstHealthz, performance.now() - t0);
  if (Date.now() - lastCheck >= 1000) {
    lastCheck = Date.now();
    const n = checks % TRIPLES;
    const yes = await call('POST', `/stores/${store}/check`, {
      tuple_key: { user: `user:${n % 9973}`, relation: 'viewer', object: `doc:${n}` },
    });
    const no = await call('POST', `/stores/${store}/check`, {
      tuple_key: { user: `user:${(n + 1) % 9973}`, relation: 'viewer', object: `doc:${n}` },
    });
    checks += 2;
    if (yes.allowed !== true || no.allowed !== false) wrong++;
  }
  await sleep(100);
}
const rssPeak = status('VmHWM:');
for (const s of sockets) s.destroy();
const loop = new Promise<string>((resolve) => {
  let out = '';
  server.stdout.on('data', (d: Buffer) => (out += d.toString()));
  server.on('exit', () => resolve(out.trim()));
});
server.kill('SIGTERM');
const loopDelay = JSON.parse((await loop) || '{}') as { maxLoopDelayMs?: number };
console.log(
  JSON.stringify({
    triples: TRIPLES,
    streams: STREAMS,
    holdMs: HOLD_MS,
    rssBeforeMB: +rssBefore.toFixed(0),
    rssPeakMB: +rssPeak.toFixed(0),
    worstHealthzMs: +worstHealthz.toFixed(1),
    serverMaxLoopDelayMs: loopDelay.maxLoopDelayMs,
    checks,
    wrongChecks: wrong,
  }),
);
