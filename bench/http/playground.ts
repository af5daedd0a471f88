// Does serving the playground cost Check anything? Two latch servers, one with --playground and
// one without, in the same run: interleaved rounds of JSON Check at the maximum (wrk -c64, the
// same body), each answer verified first; the playground server also serves its page and assets
// once per round. Prints each round, the medians and the best rounds; records nothing
// (bench/RESULTS.md keeps runs).
//
//   npx tsx bench/http/playground.ts [--rounds 5] [--seconds 4] [--connections 64]

import { parseArgs } from 'node:util';
import { median } from '../harness.js';
import { child, round2, setup, wrk } from './scenario.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    seconds: { type: 'string', default: '4' },
    connections: { type: 'string', default: '64' },
  },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);

const servers = {
  without: await child('serve.ts', { LATCH_BENCH_PLAYGROUND: '0' }),
  with: await child('serve.ts', { LATCH_BENCH_PLAYGROUND: '1' }),
};
try {
  const body = JSON.stringify({ tuple_key: { user: 'user:u7', relation: 'viewer', object: 'doc:107' } });
  const urls: Record<string, string> = {};
  for (const [name, s] of Object.entries(servers))
    urls[name] = `http://127.0.0.1:${s.port}/stores/${await setup(`http://127.0.0.1:${s.port}`)}/check`;
  const page = await fetch(`http://127.0.0.1:${servers.with.port}/playground/`);
  if (page.status !== 200) throw new Error(`the playground is not served (${page.status}): run npm run build first`);
  if ((await fetch(`http://127.0.0.1:${servers.without.port}/playground/`)).status !== 404)
    throw new Error('the server without --playground serves it');
  for (const url of Object.values(urls)) await wrk(url, body, 1, connections); // warm-up
  const rps: Record<string, number[]> = { without: [], with: [] };
  const rows: { round: number; server: string; rps: number; p50: number; p99: number; non2xx: number }[] = [];
  for (let round = 1; round <= rounds; round++) {
    // The page and its assets, as a browser opening the playground would fetch them.
    const html = await (await fetch(`http://127.0.0.1:${servers.with.port}/playground/`)).text();
    for (const m of html.matchAll(/(?:src|href)="(\/playground\/assets\/[^"]+)"/g))
      await (await fetch(`http://127.0.0.1:${servers.with.port}${m[1]}`)).arrayBuffer();
    for (const name of round % 2 ? ['without', 'with'] : ['with', 'without']) {
      const r = await wrk(urls[name] as string, body, seconds, connections);
      if (r.non2xx !== 0) throw new Error(`${name}: ${r.non2xx} non-2xx answers`);
      rps[name]?.push(r.rps);
      rows.push({
        round,
        server: name,
        rps: Math.round(r.rps),
        p50: round2(r.p50),
        p99: round2(r.p99),
        non2xx: r.non2xx,
      });
    }
  }
  console.table(rows);
  const a = median(rps.without as number[]);
  const b = median(rps.with as number[]);
  // On a shared machine single rounds swing widely; the best round of each is the steadier figure.
  const bestA = Math.max(...(rps.without as number[]));
  const bestB = Math.max(...(rps.with as number[]));
  const pct = (x: number, y: number): string => `${(((y - x) / x) * 100).toFixed(1)} %`;
  console.log(
    `JSON Check over ${rounds} rounds: median without --playground ${Math.round(a)} req/s, with ${Math.round(b)} req/s (${pct(a, b)}); best ${Math.round(bestA)} vs ${Math.round(bestB)} req/s (${pct(bestA, bestB)})`,
  );
} finally {
  for (const s of Object.values(servers)) s.proc.kill('SIGTERM');
}
