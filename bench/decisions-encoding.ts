// The decision log's own CPU per decision, in process: DecisionLog (src/api/decisions/log.ts)
// recording Checks at sampling 1.0 and flushing them in batches of 256 into memory records, timed
// by process CPU (user + system) per decision. With LATCH_BENCH_BASE=/path/to/other/tree the same
// loop runs on that tree's DecisionLog too, in interleaved rounds, and the ratio is printed: a
// same-run comparison of two encoders that a loaded machine moves much less than wall time.
//
//   [LATCH_BENCH_BASE=/tmp/base] npx tsx bench/decisions-encoding.ts [rounds] [batches per round]

import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

type Log = {
  check(client: string, op: 'Check', q: unknown, r: unknown): void;
  flush(): Promise<void>;
  close(): Promise<void>;
};
interface Tree {
  readonly name: string;
  readonly open: () => Promise<Log>;
}

async function tree(name: string, root: string): Promise<Tree> {
  const log = (await import(pathToFileURL(resolve(root, 'src/api/decisions/log.ts')).href)) as {
    DecisionLog: { open(records: unknown, config: unknown): Promise<Log> };
  };
  const records = (await import(pathToFileURL(resolve(root, 'src/storage/decisions.ts')).href)) as {
    openDecisionRecords(path: undefined): Promise<unknown>;
  };
  return {
    name,
    open: async () => log.DecisionLog.open(await records.openDecisionRecords(undefined), { sampling: 1 }),
  };
}

const ROUNDS = Number(process.argv[2] ?? 7);
const BATCHES = Number(process.argv[3] ?? 400);
const STORE = '01JAAAAAAAAAAAAAAAAAAAAAAA';
const cpu = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** µs of process CPU per decision: BATCHES × 256 Checks recorded and flushed. */
async function round(t: Tree): Promise<number> {
  const log = await t.open();
  const result = { allowed: true, modelId: '01JMMMMMMMMMMMMMMMMMMMMMMM', revision: 41, instant: 0 };
  const start = cpu();
  for (let b = 0; b < BATCHES; b++) {
    for (let i = 0; i < 256; i++) {
      const q = {
        storeId: STORE,
        tupleKey: { user: `user:u${i}`, relation: 'viewer', object: `doc:${b * 256 + i}` },
        contextualTuples: [],
      };
      log.check('client-1', 'Check', q, result);
    }
    await log.flush();
  }
  const us = (cpu() - start) / (BATCHES * 256);
  await log.close();
  return us;
}

const trees = [await tree('this tree', resolve(import.meta.dirname, '..'))];
if (process.env.LATCH_BENCH_BASE) trees.unshift(await tree('base', process.env.LATCH_BENCH_BASE));
const got = new Map<string, number[]>(trees.map((t) => [t.name, []]));
for (const t of trees) await round(t); // warm-up, not counted
for (let r = 0; r < ROUNDS; r++) for (const t of trees) got.get(t.name)?.push(await round(t));
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const out: Record<string, unknown> = { loadavg: loadavg().map((l) => Math.round(l * 10) / 10) };
for (const [name, xs] of got) out[name] = { medianUsPerDecision: median(xs), rounds: xs.map((x) => +x.toFixed(3)) };
if (trees.length === 2) out.ratio = median(got.get('this tree') ?? []) / median(got.get('base') ?? []);
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
