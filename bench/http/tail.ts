// Does the latency tail at a fixed offered rate follow the server's CPU per request? Runs latch,
// the bare uWS handler, and the bare handler burning `--spin` µs more per request
// (LATCH_BENCH_BARE_SPIN_US), interleaved at one exact rate (bench/http/check.lua's schedule), and
// prints each round's p99 with the server's CPU µs per request. If the spinning handler, at latch's
// CPU per request or above, has latch's tail, the tail is the CPU per request and not a stall of
// latch's own. A diagnostic: it prints a table and records nothing (bench/RESULTS.md keeps runs).
//
//   npx tsx bench/http/tail.ts [--rate 20000] [--spin 8] [--rounds 4] [--seconds 3] [--connections 100]

import { parseArgs } from 'node:util';
import { child, cpuPerRequest, round1, round2, setup, wrk } from './scenario.js';

const { values } = parseArgs({
  options: {
    rate: { type: 'string', default: '20000' },
    spin: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '100' },
  },
});
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const connections = Number(values.connections);

const servers = {
  latch: await child('serve.ts'),
  bare: await child('bare.ts'),
  [`bare+${values.spin}us`]: await child('bare.ts', { LATCH_BENCH_BARE_SPIN_US: String(values.spin) }),
};
try {
  const base = `http://127.0.0.1:${servers.latch.port}`;
  const store = await setup(base);
  const body = JSON.stringify({ tuple_key: { user: 'user:u7', relation: 'viewer', object: 'doc:107' } });
  const url = (port: number): string => `http://127.0.0.1:${port}/stores/${store}/check`;
  for (const s of Object.values(servers)) await wrk(url(s.port), body, 1, 64); // warm-up
  const rows: {
    server: string;
    round: number;
    rps: number;
    p50: number;
    p99: number;
    cpuUs: number;
    machineBusy: number;
  }[] = [];
  for (let round = 1; round <= Number(values.rounds); round++) {
    for (const [server, s] of Object.entries(servers)) {
      const m = await cpuPerRequest(s.proc, () => wrk(url(s.port), body, seconds, connections, rate));
      rows.push({
        server,
        round,
        rps: Math.round(m.run.rps),
        p50: round2(m.run.p50),
        p99: round2(m.run.p99),
        cpuUs: round1(m.us),
        machineBusy: Math.round(m.machineBusy * 100),
      });
    }
  }
  console.table(rows);
} finally {
  for (const s of Object.values(servers)) s.proc.kill('SIGTERM');
}
