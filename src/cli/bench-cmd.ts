// `latch bench <store file or model>`: embedded benchmark of a model. Loads the store file's
// tuples, or generates synthetic ones (bench-data.ts), into an in-memory engine, then measures
// Check, BatchCheck, ListObjects and ListUsers on random queries over every relation of the
// model: throughput, p50/p95/p99, memory per tuple, and the slowest `type#relation` paths.

import { readFile } from 'node:fs/promises';
import YAML from 'yaml';
import type { AuthorizationModelInput, TupleKey } from '../domain/types.js';
import { openLatch } from '../engine/service.js';
import { type Args, UsageError } from './args.js';
import {
  DEFAULT_SPEC,
  type SyntheticSpec,
  generateTuples,
  objectCount,
  objectId,
  objectsByType,
  parsePairs,
  relationPaths,
  rng,
  specFromYaml,
  subjectTypes,
} from './bench-data.js';
import {
  type OpStats,
  type PathStats,
  type Sample,
  fmtBytes,
  fmtInt,
  fmtMs,
  heldBytes,
  opStats,
  slowestPaths,
} from './bench-stats.js';
import { type CliIo, type Command, ProgressBar, chunks, printJson } from './common.js';
import { loadModelFile, loadStoreFile } from './store-file.js';

export const benchCommand: Command = {
  spec: {
    path: 'bench',
    summary: 'Benchmark a model in-process: Check, BatchCheck, ListObjects, ListUsers',
    positionals: [
      { name: 'file', help: 'A .fga.yaml store file (its tuples are used) or a model (.fga, .json, fga.mod)' },
    ],
    flags: [
      { name: 'synthetic', kind: 'boolean', help: 'Generate data even when the store file has tuples' },
      {
        name: 'objects',
        kind: 'list',
        value: '<type=N>',
        help: 'Objects of a type (synthetic data)',
        default: '100 per type',
      },
      {
        name: 'fanout',
        kind: 'list',
        value: '<relation=N>',
        help: 'Tuples per object for a relation or type#relation',
        default: '2',
      },
      {
        name: 'depth',
        kind: 'integer',
        min: 0,
        value: '<n>',
        help: 'Nesting depth of same-type relations (groups in groups, folders in folders)',
        default: '3',
      },
      {
        name: 'spec',
        kind: 'string',
        value: '<file.yaml>',
        help: 'Synthetic spec: {objects: {type: N}, fanout: {relation: N}, depth: N, seed: N}',
      },
      { name: 'seed', kind: 'integer', min: 0, value: '<n>', help: 'Random seed for data and queries', default: '1' },
      { name: 'checks', kind: 'integer', min: 0, value: '<n>', help: 'Check requests', default: '2000' },
      {
        name: 'batch-checks',
        kind: 'integer',
        min: 0,
        value: '<n>',
        help: 'BatchCheck requests of --batch-size checks',
        default: '100',
      },
      {
        name: 'batch-size',
        kind: 'integer',
        min: 1,
        value: '<n>',
        help: 'Checks per BatchCheck (at most 50)',
        default: '50',
      },
      { name: 'list-objects', kind: 'integer', min: 0, value: '<n>', help: 'ListObjects requests', default: '200' },
      { name: 'list-users', kind: 'integer', min: 0, value: '<n>', help: 'ListUsers requests', default: '200' },
      { name: 'concurrency', kind: 'integer', min: 1, value: '<n>', help: 'Requests in flight', default: '1' },
      {
        name: 'workers',
        kind: 'integer',
        min: 0,
        value: '<n>',
        help: 'Engine worker threads (0 = inline)',
        default: 'engine default',
      },
      { name: 'top', kind: 'integer', min: 1, value: '<n>', help: 'Slowest relation paths to list', default: '5' },
      { name: 'json', kind: 'boolean', help: 'Print the report as JSON' },
    ],
    examples: [
      'latch bench test/fixtures/github.fga.yaml',
      'latch bench model.fga --objects user=10000 --objects repo=2000 --fanout reader=5 --depth 4',
      'latch bench model.fga --spec bench.yaml --concurrency 8 --json',
    ],
  },
  run: runBench,
};

interface Workload {
  model: AuthorizationModelInput;
  tuples: TupleKey[];
  source: string;
  /** Random object of a type (undefined when the data has none). */
  objectOf(type: string, r: () => number): string | undefined;
}

async function workload(args: Args): Promise<Workload> {
  const file = args.arg('file') as string;
  const isStoreFile = /\.ya?ml$/.test(file);
  const store = isStoreFile ? await loadStoreFile(file) : undefined;
  const model = store ? store.model : (await loadModelFile(file)).model;
  if (!model) throw new UsageError(`${file} has no model`);
  if (
    store &&
    store.tuples.length > 0 &&
    !args.bool('synthetic') &&
    !args.has('objects') &&
    !args.has('fanout') &&
    !args.has('spec')
  ) {
    const byType = objectsByType(store.tuples);
    return {
      model,
      tuples: store.tuples,
      source: `${store.tuples.length} tuples from ${file}`,
      objectOf: (type, r) => {
        const list = byType.get(type);
        return list?.length ? list[Math.floor(r() * list.length)] : undefined;
      },
    };
  }
  const fromFile = args.has('spec') ? specFromYaml(YAML.parse(await readFile(args.require('spec'), 'utf8'))) : {};
  const spec: SyntheticSpec = {
    ...DEFAULT_SPEC,
    ...fromFile,
    objects: { ...fromFile.objects, ...parsePairs(args.list('objects'), '--objects') },
    fanout: { ...fromFile.fanout, ...parsePairs(args.list('fanout'), '--fanout') },
    ...(args.has('depth') ? { depth: args.int('depth') as number } : {}),
    ...(args.has('seed') ? { seed: args.int('seed') as number } : {}),
  };
  const tuples = generateTuples(model, spec);
  return {
    model,
    tuples,
    source: `${tuples.length} synthetic tuples (depth ${spec.depth}, seed ${spec.seed})`,
    objectOf: (type, r) => {
      const n = objectCount(spec, type);
      return n > 0 ? objectId(type, Math.floor(r() * n)) : undefined;
    },
  };
}

export interface BenchReport {
  source: string;
  tuples: number;
  load: { seconds: number; tuplesPerSecond: number; bytesPerTuple: number; bytes: number };
  operations: OpStats[];
  slowest: PathStats[];
}

async function runBench(args: Args, io: CliIo): Promise<number> {
  const w = await workload(args);
  const seed = args.int('seed') ?? 1;
  const workers = args.int('workers');
  const latch = await openLatch({ config: workers === undefined ? {} : { workers } });
  try {
    const store = await latch.createStore('bench');
    const modelId = await latch.writeModel(store.id, w.model);
    const before = heldBytes();
    const started = performance.now();
    const bar = new ProgressBar(io, 'loading ');
    let done = 0;
    for (const chunk of chunks(w.tuples, 100)) {
      await latch.write({
        storeId: store.id,
        modelId,
        writes: chunk,
        deletes: [],
        onDuplicate: 'ignore',
        onMissing: 'error',
      });
      bar.update((done += chunk.length), w.tuples.length);
    }
    await latch.ready();
    const loadSeconds = (performance.now() - started) / 1000;
    const bytes = heldBytes() - before;
    const ids = { storeId: store.id, modelId, contextualTuples: [], consistency: 'MINIMIZE_LATENCY' as const };
    const r = rng(seed + 1);
    const paths = relationPaths(w.model);
    const subjects = subjectTypes(w.model);
    const pickOf = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
    const subject = () => w.objectOf(pickOf(subjects), r);
    const target = () => {
      const p = pickOf(paths);
      return { ...p, object: w.objectOf(p.type, r) };
    };
    if (paths.length === 0) throw new UsageError('the model has no relations to query');

    const ops: OpStats[] = [];
    const samples: Sample[] = [];
    const batchSize = Math.min(args.int('batch-size') ?? 50, 50);
    const concurrency = args.int('concurrency') ?? 1;
    const phase = async (
      op: string,
      n: number,
      one: () => { path: string; run: () => Promise<unknown> } | undefined,
    ) => {
      if (n === 0) return;
      const jobs = Array.from({ length: n }, one).filter((j) => j !== undefined);
      const phaseBar = new ProgressBar(io, op.padEnd(12));
      const mine: Sample[] = [];
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < jobs.length) {
            const job = jobs[next++] as { path: string; run: () => Promise<unknown> };
            const s = performance.now();
            let error = false;
            await job.run().catch(() => (error = true));
            mine.push({ op, path: job.path, ms: performance.now() - s, error });
            phaseBar.update(mine.length, jobs.length);
          }
        }),
      );
      ops.push(opStats(op, mine, (performance.now() - t0) / 1000));
      samples.push(...mine);
    };
    await phase('check', args.int('checks') ?? 2000, () => {
      const t = target();
      const user = subject();
      if (!t.object || !user) return undefined;
      return {
        path: `${t.type}#${t.relation}`,
        run: () => latch.check({ ...ids, tupleKey: { user, relation: t.relation, object: t.object as string } }),
      };
    });
    await phase('batch-check', args.int('batch-checks') ?? 100, () => {
      const p = pickOf(paths);
      const items = Array.from({ length: batchSize }, (_, i) => ({
        i,
        user: subject(),
        object: w.objectOf(p.type, r),
      })).filter((c) => c.user && c.object);
      if (items.length === 0) return undefined;
      const checks = items.map((c) => ({
        correlationId: String(c.i),
        tupleKey: { user: c.user as string, relation: p.relation, object: c.object as string },
        contextualTuples: [],
      }));
      return {
        path: `${p.type}#${p.relation}`,
        run: () => latch.batchCheck({ storeId: store.id, modelId, consistency: 'MINIMIZE_LATENCY', checks }),
      };
    });
    await phase('list-objects', args.int('list-objects') ?? 200, () => {
      const p = pickOf(paths);
      const user = subject();
      if (!user) return undefined;
      return {
        path: `${p.type}#${p.relation}`,
        run: () => latch.listObjects({ ...ids, type: p.type, relation: p.relation, user }),
      };
    });
    await phase('list-users', args.int('list-users') ?? 200, () => {
      const t = target();
      if (!t.object) return undefined;
      const [type = '', id = ''] = [
        t.object.slice(0, t.object.indexOf(':')),
        t.object.slice(t.object.indexOf(':') + 1),
      ];
      return {
        path: `${t.type}#${t.relation}`,
        run: () =>
          latch.listUsers({
            ...ids,
            object: { type, id },
            relation: t.relation,
            userFilters: [{ type: pickOf(subjects) }],
          }),
      };
    });
    const report: BenchReport = {
      source: w.source,
      tuples: w.tuples.length,
      load: {
        seconds: loadSeconds,
        tuplesPerSecond: loadSeconds > 0 ? w.tuples.length / loadSeconds : 0,
        bytes,
        bytesPerTuple: w.tuples.length ? bytes / w.tuples.length : 0,
      },
      operations: ops,
      slowest: slowestPaths(samples, args.int('top') ?? 5),
    };
    if (args.bool('json')) printJson(io, report);
    else io.out(renderReport(report, batchSize, concurrency));
    return 0;
  } finally {
    await latch.close();
  }
}

function renderReport(r: BenchReport, batchSize: number, concurrency: number): string {
  const lines = [
    `latch bench — ${r.source}`,
    `load: ${fmtInt(r.tuples)} tuples in ${r.load.seconds.toFixed(2)} s (${fmtInt(r.load.tuplesPerSecond)} tuples/s); memory ${fmtBytes(r.load.bytes)} ≈ ${fmtInt(r.load.bytesPerTuple)} bytes/tuple`,
    `queries: concurrency ${concurrency}${r.operations.some((o) => o.op === 'batch-check') ? `, ${batchSize} checks per batch` : ''}`,
    '',
    `${'operation'.padEnd(14)}${'count'.padStart(7)}${'errors'.padStart(8)}${'req/s'.padStart(11)}${'p50'.padStart(10)}${'p95'.padStart(10)}${'p99'.padStart(10)}${'max'.padStart(10)}`,
  ];
  for (const o of r.operations) {
    lines.push(
      `${o.op.padEnd(14)}${String(o.count).padStart(7)}${String(o.errors).padStart(8)}${fmtInt(o.throughput).padStart(11)}${fmtMs(o.p50).padStart(10)}${fmtMs(o.p95).padStart(10)}${fmtMs(o.p99).padStart(10)}${fmtMs(o.max).padStart(10)}`,
    );
  }
  if (r.slowest.length) {
    lines.push('', 'Slowest relation paths (by p99):');
    for (const s of r.slowest)
      lines.push(
        `  ${s.op.padEnd(13)}${s.path.padEnd(32)} p99 ${fmtMs(s.p99).padStart(9)}   p50 ${fmtMs(s.p50).padStart(9)}   n=${s.count}`,
      );
  }
  return lines.join('\n') + '\n';
}
