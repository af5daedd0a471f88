// Impact benchmark: the impact of a candidate model (docs/changing-models.md) on a nested-group
// store of ~1M tuples, for a one-relation edit (doc#viewer gains `but not blocked`: one relation
// evaluated, the rest proven unchanged) and for a rewrite of every relation (each restriction
// list gains `user:*`: everything evaluated). Reports the time to the summary line, the lines
// streamed, the CPU time the process spent meanwhile (user + system: on a loaded machine a steadier
// figure than the wall time), and the process RSS: after the store loaded and the highest seen
// while streaming.
// Before timing, each case's summary is checked against what the data implies.
//
//   npx tsx bench/impact.ts                    # ~1M tuples
//   npx tsx bench/impact.ts --scale 0.1        # ~100k tuples (smoke run)

import { parseArgs } from 'node:util';
import type { TupleKey } from '../src/domain/types.js';
import { DEFAULT_ENGINE_CONFIG } from '../src/engine/config.js';
import type { ImpactLine } from '../src/engine/contract.js';
import { LatchService } from '../src/engine/service.js';
import { dslToModel } from '../src/model/dsl.js';
import { openStorage } from '../src/storage/index.js';

const { values } = parseArgs({ options: { scale: { type: 'string', default: '1' } } });
const scale = Number(values.scale);
if (!(scale > 0)) throw new Error(`--scale must be a positive number, got ${values.scale}`);

const GROUPS = Math.round(20_000 * scale);
const USERS = Math.round(50_000 * scale);
const FOLDERS = Math.round(10_000 * scale);
const DOCS = Math.round(100_000 * scale);
const MEMBERS = 28;
/** Groups nest in chains of this length (a department, its teams, their sub-teams). */
const CHAIN = 4;

const BASE = `model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type folder
  relations
    define viewer: [user, group#member]
type doc
  relations
    define parent: [folder]
    define owner: [user]
    define blocked: [user]
    define editor: [user, group#member] or owner
    define viewer: [user, group#member] or editor or viewer from parent
`;
const ONE_RELATION = BASE.replace(
  'define viewer: [user, group#member] or editor or viewer from parent',
  'define viewer: ([user, group#member] or editor or viewer from parent) but not blocked',
);
const EVERY_RELATION = BASE.replaceAll('[user, group#member]', '[user, user:*, group#member]')
  .replace('define owner: [user]', 'define owner: [user, user:*]')
  .replace('define blocked: [user]', 'define blocked: [user, user:*]');

/**
 * Groups nest in chains of CHAIN (the members of group g are members of group g-1 unless g is a
 * multiple of CHAIN), each with MEMBERS users of its own; folders are viewed by two groups; each
 * doc has a parent folder, an owner, an editor group, a viewer user; every 50th doc blocks its
 * viewer user.
 */
function* tuples(): Generator<TupleKey> {
  for (let g = 0; g < GROUPS; g++) {
    for (let m = 0; m < MEMBERS; m++)
      yield { object: `group:${g}`, relation: 'member', user: `user:${(g * 7 + m * 13) % USERS}` };
    if (g % CHAIN !== 0) yield { object: `group:${g - 1}`, relation: 'member', user: `group:${g}#member` };
  }
  for (let f = 0; f < FOLDERS; f++)
    for (const g of [(f * 3) % GROUPS, (f * 7 + 1) % GROUPS])
      yield { object: `folder:${f}`, relation: 'viewer', user: `group:${g}#member` };
  for (let d = 0; d < DOCS; d++) {
    yield { object: `doc:${d}`, relation: 'parent', user: `folder:${d % FOLDERS}` };
    yield { object: `doc:${d}`, relation: 'owner', user: `user:${d % USERS}` };
    yield { object: `doc:${d}`, relation: 'editor', user: `group:${(d * 11) % GROUPS}#member` };
    yield { object: `doc:${d}`, relation: 'viewer', user: `user:${(d * 31) % USERS}` };
    if (d % 50 === 0) yield { object: `doc:${d}`, relation: 'blocked', user: `user:${(d * 31) % USERS}` };
  }
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MB`;

async function main(): Promise<void> {
  const storage = await openStorage({});
  const store = await storage.createStore('impact-bench');
  await storage.writeModel(store.id, dslToModel(BASE));
  let count = 0;
  let batch: TupleKey[] = [];
  const flush = async (): Promise<void> => {
    await storage.writeTuples(store.id, { writes: batch, deletes: [], onDuplicate: 'error', onMissing: 'error' });
    batch = [];
  };
  for (const t of tuples()) {
    batch.push(t);
    count++;
    if (batch.length === 10_000) await flush();
  }
  await flush();
  const latch = new LatchService(storage, { ...DEFAULT_ENGINE_CONFIG, workers: 0 }, undefined, { expirySweepMs: 0 });
  await latch.ready();
  global.gc?.();
  const loaded = process.memoryUsage().rss;
  console.log(`store: ${count} tuples (${GROUPS} groups, ${DOCS} docs); RSS after load ${mb(loaded)}`);
  const blockedDocs = Math.ceil(DOCS / 50);
  for (const [name, dsl, check] of [
    ['one relation edited', ONE_RELATION, (s: Summary) => s.lost === blockedDocs && s.gained === 0],
    ['every relation rewritten', EVERY_RELATION, (s: Summary) => s.gained === 0 && s.lost === 0],
  ] as const) {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    let peak = process.memoryUsage().rss;
    let lines = 0;
    let summary: Summary | undefined;
    const stream = await latch.impact({
      storeId: store.id,
      candidate: dslToModel(dsl),
      sampleSize: 10,
      assertions: false,
    });
    for await (const line of stream.lines) {
      lines++;
      if (line.kind === 'progress') peak = Math.max(peak, process.memoryUsage().rss);
      if (line.kind === 'summary') summary = line;
    }
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    peak = Math.max(peak, process.memoryUsage().rss);
    if (!summary || !check(summary)) throw new Error(`${name}: unexpected summary ${JSON.stringify(summary)}`);
    const evaluated = summary.relations.filter((r) => r.evaluated).map((r) => `${r.object_type}#${r.relation}`);
    console.log(
      `${name}: ${(ms / 1000).toFixed(1)} s (CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s), ${lines} lines, evaluated ${evaluated.join(' ')}; ` +
        `peak RSS ${mb(peak)} (+${mb(peak - loaded)} over the loaded store)`,
    );
  }
  await latch.close();
}

type Summary = Extract<ImpactLine, { kind: 'summary' }>;

await main();
