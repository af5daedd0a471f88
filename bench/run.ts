// The benchmark registry: `npm run bench [-- --only name] [--quick] [--big]`. Each entry is one
// scenario module (bench/scenario.ts); add a scenario by appending it to SCENARIOS.
// Prints a table and writes bench/results/latest.json as [{scenario, metric, value, unit}].

import { mkdir, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { Metric, Scenario } from './scenario.js';
import { walkerSingle } from './scenarios/walker-single.js';
import { poolThroughput } from './scenarios/pool.js';
import { indexMemory } from './scenarios/memory.js';
import { listObjects1M } from './scenarios/list-objects.js';
import { micro } from './scenarios/micro.js';
import { indexWrites } from './scenarios/index-writes.js';
import { httpCheck } from './http/scenario.js';

export const SCENARIOS: Scenario[] = [walkerSingle, poolThroughput, indexMemory, indexWrites, listObjects1M, micro, httpCheck];

const { values } = parseArgs({
  options: { only: { type: 'string', multiple: true }, quick: { type: 'boolean', default: false }, big: { type: 'boolean', default: false } },
});
const only = new Set(values.only ?? []);
const opts = { quick: values.quick ?? false, big: values.big ?? false };
const all: Metric[] = [];
for (const s of SCENARIOS) {
  if (only.size > 0 && !only.has(s.name)) continue;
  process.stdout.write(`▶ ${s.name}: ${s.description}\n`);
  const rows = await s.run(opts);
  for (const r of rows) process.stdout.write(`  ${r.scenario.padEnd(26)} ${r.metric.padEnd(34)} ${String(r.value).padStart(14)} ${r.unit}\n`);
  all.push(...rows);
}
await mkdir(new URL('./results/', import.meta.url), { recursive: true });
await writeFile(new URL('./results/latest.json', import.meta.url), JSON.stringify(all, null, 2) + '\n');
process.stdout.write(`wrote bench/results/latest.json (${all.length} rows)\n`);
process.exit(0);
