// User-space instructions per JSON Check, counted by valgrind's callgrind: the bare uWS handler
// of bench/http/bare.ts, latch (bench/http/serve.ts) and, when LATCH_BENCH_BASE names another tree
// of latch (e.g. a checkout of main, node_modules linked), that tree's server. Unlike requests/s
// or CPU time, the count does not move with the load of other processes on a shared machine, so
// a change of a few hundred instructions per request shows in one run. Each server is warmed with
// wrk under valgrind (uninstrumented), then counted over the next wrk run (16 connections; the
// same body as bench/http/scenario.ts, a result-cache hit). Kernel time (the socket calls, the
// same for every server) is not counted. `--cache-sim` also simulates the caches (valgrind's
// default model of this machine's L1 and last level) and adds L1 instruction, L1 data read and
// L1 data write misses per request. Needs `valgrind` on the PATH; records nothing.
//
//   [LATCH_BENCH_BASE=/path/to/main] npx tsx bench/http/instructions.ts [--seconds 8] [--cache-sim]

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { countInstructions, type Counted } from './callgrind.js';
import { setup } from './scenario.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const BODY = JSON.stringify({ tuple_key: { user: 'user:u7', relation: 'viewer', object: 'doc:107' } });
const CONNECTIONS = 16;

/** Instructions per request of one server (bench/http/callgrind.ts). */
function count(dir: string, file: string, seconds: number): Promise<Counted> {
  const prepare = async (base: string): Promise<string> =>
    file.endsWith('bare.ts') ? `${base}/stores/x/check` : `${base}/stores/${await setup(base)}/check`;
  return countInstructions({ dir, file, seconds, connections: CONNECTIONS, body: BODY, prepare, cacheSim });
}

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '8' }, 'cache-sim': { type: 'boolean', default: false } },
});
const seconds = Number(values.seconds);
const cacheSim = values['cache-sim'];
const root = path.resolve(here, '../..');
const bare = await count(root, 'bench/http/bare.ts', seconds);
const report: Record<string, unknown> = { bare };
const latch = await count(root, 'bench/http/serve.ts', seconds);
report.latch = { ...latch, ratioToBare: Number((bare.perRequest / latch.perRequest).toFixed(3)) };
const baseDir = process.env.LATCH_BENCH_BASE;
if (baseDir) {
  const base = await count(path.resolve(baseDir), 'bench/http/serve.ts', seconds);
  report.base = { ...base, ratioToBare: Number((bare.perRequest / base.perRequest).toFixed(3)) };
}
process.stdout.write(JSON.stringify(report, null, 2) + '\n');
