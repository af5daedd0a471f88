// Shadow evaluation's cost (docs/changing-models.md): JSON Check throughput (wrk, one Check body,
// 64 connections) against one latch server process with no shadow, and with a shadow at sampling
// 0, 0.1 and 1.0, in interleaved rounds of the same run; each setting's median is reported with
// its ratio to no shadow, and, for each sampled setting, the shadow evaluations and drops the
// server counted. Target: ≥ 0.5 of no shadow at 1.0, nothing measurable at 0. With two cores the
// server is pinned to core 0 and wrk to core 1 (LATCH_BENCH_PIN=0: unpinned).
//
//   npx tsx bench/shadow.ts                      # 5 rounds of 4 s per setting
//   npx tsx bench/shadow.ts --rounds 2 --seconds 2
//
// `--instructions`: instead, user-space instructions per JSON Check under callgrind
// (bench/http/callgrind.ts; load-independent) of two servers of the same tree, one with no shadow
// and one with a shadow attached at sampling 0 — "at sampling 0 nothing measurable" — each the
// lowest of 3 counted windows of `--requests` Checks.
//
//   npx tsx bench/shadow.ts --instructions [--requests 1500]

import { execFile } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { parseArgs, promisify } from 'node:util';
import { median } from './harness.js';
import { child, setup, wrk } from './http/scenario.js';
import { countInstructions } from './http/callgrind.js';
import { fileURLToPath } from 'node:url';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '4' },
    connections: { type: 'string', default: '64' },
    instructions: { type: 'boolean', default: false },
    requests: { type: 'string', default: '1500' },
  },
});
const ROUNDS = Number(values.rounds);
const SECONDS = Number(values.seconds);
const CONNECTIONS = Number(values.connections);
const run = promisify(execFile);

/** The settings compared: undefined = no shadow. */
const SETTINGS: readonly (number | undefined)[] = [undefined, 0, 0.1, 1];

async function call(base: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(base + path, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** The model written again (a second id): the first is the shadow. Returns the shadow's id. */
async function shadowModel(base: string, store: string): Promise<string> {
  const models = (await call(base, 'GET', `/stores/${store}/authorization-models`)).authorization_models as {
    id: string;
  }[];
  const shadowId = models[0]?.id as string;
  const model = (await call(base, 'GET', `/stores/${store}/authorization-models/${shadowId}`))
    .authorization_model as Record<string, unknown>;
  await call(base, 'POST', `/stores/${store}/authorization-models`, { ...model, id: undefined });
  return shadowId;
}

if (values.instructions) {
  const body = JSON.stringify({ tuple_key: { user: 'user:u7', relation: 'viewer', object: 'doc:107' } });
  const root = fileURLToPath(new URL('..', import.meta.url));
  const counted: Record<string, unknown> = {};
  const before = loadavg()[0];
  for (const sampling of [undefined, 0]) {
    counted[sampling === undefined ? 'no shadow' : `sampling ${sampling}`] = await countInstructions({
      dir: root,
      file: 'bench/http/serve.ts',
      seconds: 0,
      requests: Number(values.requests),
      windows: 3,
      connections: 16,
      body,
      prepare: async (base) => {
        const store = await setup(base);
        const shadowId = await shadowModel(base, store);
        if (sampling !== undefined)
          await call(base, 'PUT', `/stores/${store}/shadow`, { authorization_model_id: shadowId, sampling });
        return `${base}/stores/${store}/check`;
      },
    });
  }
  console.log(JSON.stringify({ instructions: counted, loadavg: [before, loadavg()[0]] }, null, 2));
  process.exit(0);
}

const server = await child('serve.ts');
const pin = process.env.LATCH_BENCH_PIN !== '0' && availableParallelism() >= 2;
if (pin) await run('taskset', ['-a', '-p', '-c', '0', String(server.proc.pid)]);
try {
  const base = `http://127.0.0.1:${server.port}`;
  const store = await setup(base);
  // The shadow: the same model written again makes a second id; the first stays the shadow (an
  // identical model evaluates the same walk, so the cost is the shadow's, not a different model's).
  const shadowId = await shadowModel(base, store);
  const body = JSON.stringify({ tuple_key: { user: 'user:u7', relation: 'viewer', object: 'doc:107' } });
  const url = `${base}/stores/${store}/check`;
  const apply = async (s: number | undefined): Promise<void> => {
    if (s === undefined) await call(base, 'DELETE', `/stores/${store}/shadow`);
    else await call(base, 'PUT', `/stores/${store}/shadow`, { authorization_model_id: shadowId, sampling: s });
  };
  await wrk(url, body, 1, CONNECTIONS); // warm-up
  const rps = new Map<number | undefined, number[]>(SETTINGS.map((s) => [s, []]));
  const shadowed = new Map<number | undefined, { evaluated: number; dropped: number }>();
  for (let r = 0; r < ROUNDS; r++) {
    for (const s of SETTINGS) {
      await apply(s);
      const w = await wrk(url, body, SECONDS, CONNECTIONS, 0, pin ? '1' : undefined);
      if (w.non2xx > 0) throw new Error(`${w.non2xx} failed Checks at sampling ${String(s)}`);
      rps.get(s)?.push(w.rps);
      const report = await call(base, 'GET', `/stores/${store}/shadow/report`);
      const seen = shadowed.get(s) ?? { evaluated: 0, dropped: 0 };
      // Setting a shadow starts its figures anew: each round's figures are its own.
      if (s !== undefined)
        shadowed.set(s, {
          evaluated: seen.evaluated + Number(report.evaluated),
          dropped: seen.dropped + Number(report.dropped),
        });
    }
  }
  const none = median(rps.get(undefined) ?? []);
  const rows = SETTINGS.map((s) => {
    const m = median(rps.get(s) ?? []);
    return {
      setting: s === undefined ? 'no shadow' : `sampling ${s}`,
      medianRps: Math.round(m),
      ratio: Math.round((m / none) * 1000) / 1000,
      rounds: (rps.get(s) ?? []).map(Math.round),
      ...(s !== undefined ? shadowed.get(s) : {}),
    };
  });
  console.table(rows);
  console.log(
    JSON.stringify({ rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS, pinned: pin, load: loadavg(), rows }),
  );
} finally {
  server.proc.kill('SIGTERM');
}
