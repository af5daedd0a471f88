// The benchmark registry: `npm run bench [-- --only name] [--quick] [--big]`. Each entry is one
// scenario module (bench/scenario.ts); add a scenario by appending it to SCENARIOS.
// Prints a table and records each scenario's rows in bench/results/latest.json (bench/results.ts).

import { parseArgs } from 'node:util';
import type { Scenario } from './scenario.js';
import { recordRun } from './results.js';
import { walkerSingle } from './scenarios/walker-single.js';
import { poolThroughput } from './scenarios/pool.js';
import { indexMemory } from './scenarios/memory.js';
import { listObjects1M } from './scenarios/list-objects.js';
import { listPages } from './scenarios/list-pages.js';
import { micro } from './scenarios/micro.js';
import { indexWrites } from './scenarios/index-writes.js';
import { coldLoad } from './scenarios/cold-load.js';
import { indexTail } from './scenarios/index-tail.js';
import { checkpointStall } from './scenarios/checkpoint-stall.js';
import { httpCheck } from './http/scenario.js';
import { embedded } from './scenarios/embedded.js';
import { blowup } from './scenarios/blowup.js';
import { replication } from './replication/scenario.js';
import { permissionIndex } from './scenarios/permission-index.js';
import { pastRevision } from './scenarios/past-revision.js';

export const SCENARIOS: Scenario[] = [
  walkerSingle,
  poolThroughput,
  indexMemory,
  coldLoad,
  indexTail,
  checkpointStall,
  indexWrites,
  listObjects1M,
  listPages,
  micro,
  embedded,
  blowup,
  httpCheck,
  replication,
  permissionIndex,
  pastRevision,
];

const { values } = parseArgs({
  options: {
    only: { type: 'string', multiple: true },
    quick: { type: 'boolean', default: false },
    big: { type: 'boolean', default: false },
  },
});
const only = new Set(values.only ?? []);
const opts = { quick: values.quick ?? false, big: values.big ?? false };
let count = 0;
for (const s of SCENARIOS) {
  if (only.size > 0 && !only.has(s.name)) continue;
  process.stdout.write(`▶ ${s.name}: ${s.description}\n`);
  const rows = await s.run(opts);
  for (const r of rows)
    process.stdout.write(
      `  ${r.scenario.padEnd(26)} ${r.metric.padEnd(34)} ${String(r.value).padStart(14)} ${r.unit}\n`,
    );
  await recordRun(s.name, rows);
  count += rows.length;
}
process.stdout.write(`updated bench/results/latest.json (${count} rows)\n`);
process.exit(0);
