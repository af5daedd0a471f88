// Unauthenticated bodies, re-run against a server in its own process in client-credentials
// mode: ROUNDS (default 5) waves of CONCURRENCY (default 20) requests without credentials, each
// a 1 MB deeply nested JSON body sent to Check. The server must answer 401 without reading or
// parsing them. Meanwhile /healthz is timed back to back, and after each wave an authenticated
// Check is asked (one allowed, one denied). Prints the server's RSS before and its peak (VmHWM),
// the longest /healthz answer during the attack, the server's longest event-loop delay, the
// statuses the attack got and whether every Check was right.
// Run: `npx tsx bench/attack/unauthenticated-bodies.ts` (ROUNDS, CONCURRENCY, BODY_BYTES override).

import { spawn } from 'node:child_process';
import { jsonCaller, statusMb } from './process.js';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 20);
const BODY_BYTES = Number(process.env.BODY_BYTES ?? 1 << 20);

const server = spawn(process.execPath, ['--import', 'tsx', 'bench/http/serve.ts'], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, LATCH_BENCH_LOOP_DELAY: '1', LATCH_BENCH_AUTH: 'client-credentials' },
});
let out = '';
const { port, token } = await new Promise<{ port: number; token: string }>((resolve) => {
  server.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    const nl = out.indexOf('\n');
    if (nl >= 0) {
      resolve(JSON.parse(out.slice(0, nl)) as { port: number; token: string });
      out = out.slice(nl + 1);
    }
  });
});
const base = `http://127.0.0.1:${port}`;
const auth = { authorization: `Bearer ${token}` };
const status = (field: string): number => statusMb(server.pid, field);
const call = jsonCaller(base, auth);

const store = (await call('POST', '/stores', { name: 'bodies' })).id as string;
await call('POST', `/stores/${store}/authorization-models`, {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'doc',
      relations: { viewer: { this: {} } },
      metadata: { relations: { viewer: { directly_related_user_types: [{ type: 'user' }] } } },
    },
  ],
});
await call('POST', `/stores/${store}/write`, {
  writes: { tuple_keys: [{ user: 'user:anne', relation: 'viewer', object: 'doc:1' }] },
});

// `{"a":{"a":…1…}}`, BODY_BYTES long: the costliest kind of body to decode.
const depth = Math.floor((BODY_BYTES - 1) / 6);
const nested = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

const rssBefore = status('VmRSS:');
let worstHealthz = 0;
let attackDone = false;
const probing = (async () => {
  while (!attackDone) {
    const t0 = performance.now();
    await fetch(`${base}/healthz`).then((r) => r.text());
    worstHealthz = Math.max(worstHealthz, performance.now() - t0);
  }
})();
const statuses = new Map<number, number>();
let checks = 0;
let wrong = 0;
const t0 = performance.now();
for (let round = 0; round < ROUNDS; round++) {
  const answers = await Promise.all(
    Array.from({ length: CONCURRENCY }, () =>
      fetch(`${base}/stores/${store}/check`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: nested,
      })
        .then(async (r) => (await r.arrayBuffer(), r.status))
        .catch(() => 0),
    ),
  );
  for (const s of answers) statuses.set(s, (statuses.get(s) ?? 0) + 1);
  const yes = await call('POST', `/stores/${store}/check`, {
    tuple_key: { user: 'user:anne', relation: 'viewer', object: 'doc:1' },
  });
  const no = await call('POST', `/stores/${store}/check`, {
    tuple_key: { user: 'user:bob', relation: 'viewer', object: 'doc:1' },
  });
  checks += 2;
  if (yes.allowed !== true || no.allowed !== false) wrong++;
}
const attackMs = performance.now() - t0;
attackDone = true;
await probing;
const rssPeak = status('VmHWM:');
const loop = new Promise<string>((resolve) => {
  server.stdout.on('data', (d: Buffer) => (out += d.toString()));
  server.on('exit', () => resolve(out.trim()));
});
server.kill('SIGTERM');
const loopDelay = JSON.parse((await loop) || '{}') as { maxLoopDelayMs?: number };
console.log(
  JSON.stringify({
    rounds: ROUNDS,
    concurrency: CONCURRENCY,
    bodyBytes: nested.length,
    attackMs: +attackMs.toFixed(0),
    statuses: Object.fromEntries(statuses),
    rssBeforeMB: +rssBefore.toFixed(0),
    rssPeakMB: +rssPeak.toFixed(0),
    worstHealthzMs: +worstHealthz.toFixed(1),
    serverMaxLoopDelayMs: loopDelay.maxLoopDelayMs,
    checks,
    wrongChecks: wrong,
  }),
);
