// The embedded API's string path: a Check through `openLatch()` from strings, synchronous
// (`checkSync`) and awaited (`check()`), against a naive `Map<"object#relation", Set<user>>`
// lookup of the same strings in the same process (20k direct tuples, result cache off). The
// ratios to the naive lookup are the figures; absolute ns move with the shared machine's load.
// Rounds interleave the three paths so that a change of host speed hits all of them alike.

import { openLatch } from '../../src/engine/service.js';
import type { CheckInput, Latch } from '../../src/engine/contract.js';
import type { TupleKey } from '../../src/domain/types.js';
import { median, perOp } from '../harness.js';
import { verify, type Metric, type Scenario } from '../scenario.js';

const DSL_MODEL = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'doc',
      relations: { viewer: { this: {} } },
      metadata: { relations: { viewer: { directly_related_user_types: [{ type: 'user' }] } } },
    },
  ],
};

/** 2,000 docs × 10 viewers = 20k tuples; queries alternate a granted and a refused user. */
function data(): { tuples: TupleKey[]; queries: { key: TupleKey; want: boolean }[] } {
  const tuples: TupleKey[] = [];
  for (let d = 0; d < 2000; d++)
    for (let k = 0; k < 10; k++)
      tuples.push({ object: `doc:${d}`, relation: 'viewer', user: `user:${(d * 7 + k * 101) % 5000}` });
  const queries: { key: TupleKey; want: boolean }[] = [];
  for (let i = 0; i < 4096; i++) {
    const t = tuples[(i * 7919) % tuples.length] as TupleKey;
    queries.push(i % 2 === 0 ? { key: t, want: true } : { key: { ...t, user: `user:${5000 + i}` }, want: false });
  }
  return { tuples, queries };
}

async function load(latch: Latch, tuples: readonly TupleKey[]): Promise<string> {
  const store = await latch.createStore('bench-embedded');
  await latch.writeModel(store.id, DSL_MODEL);
  for (let i = 0; i < tuples.length; i += 100) {
    await latch.write({
      storeId: store.id,
      writes: tuples.slice(i, i + 100),
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
  }
  return store.id;
}

/**
 * The service loaded with the data (result cache off, no workers), each query as a CheckInput, and
 * the naive `Map<"object#relation", Set<user>>` of the same tuples (bench/embedded-profile.ts too).
 */
export async function prepare(): Promise<{
  latch: Latch;
  queries: { key: TupleKey; want: boolean }[];
  inputs: CheckInput[];
  map: Map<string, Set<string>>;
}> {
  const { tuples, queries } = data();
  const latch = await openLatch({ config: { cacheSize: 0, workers: 0 } });
  const storeId = await load(latch, tuples);
  const inputs: CheckInput[] = queries.map((q) => ({
    storeId,
    tupleKey: q.key,
    contextualTuples: [],
    consistency: 'UNSPECIFIED',
  }));
  const map = new Map<string, Set<string>>();
  for (const t of tuples) {
    const k = `${t.object}#${t.relation}`;
    (map.get(k) ?? map.set(k, new Set()).get(k))?.add(t.user);
  }
  return { latch, queries, inputs, map };
}

export const embedded: Scenario = {
  name: 'embedded',
  description:
    'embedded Check from strings (checkSync, await check()) vs a naive Map<string, Set<string>> lookup, 20k tuples, cache off',
  async run(opts) {
    const { latch, queries, inputs, map } = await prepare();
    const n = queries.length;
    const want = queries.map((q) => q.want);
    const checkSync = latch.checkSync.bind(latch);
    await latch.check(inputs[0] as CheckInput); // loads the model and the index
    verify(
      'embedded map',
      queries.map((q) => map.get(`${q.key.object}#${q.key.relation}`)?.has(q.key.user) ?? false),
      want,
    );
    verify(
      'embedded checkSync',
      inputs.map((x) => checkSync(x)?.allowed),
      want,
    );
    const viaCheck: boolean[] = [];
    for (const x of inputs) viaCheck.push((await latch.check(x)).allowed);
    verify('embedded check()', viaCheck, want);

    let sink = 0;
    const naive = (i: number): void => {
      const k = (queries[i % n] as { key: TupleKey }).key;
      sink += map.get(`${k.object}#${k.relation}`)?.has(k.user) ? 1 : 0;
    };
    const sync = (i: number): void => {
      sink += checkSync(inputs[i % n] as CheckInput)?.allowed ? 1 : 0;
    };
    const asyncCheck = async (samples: number, batch: number): Promise<number> => {
      const t: number[] = [];
      let i = 0;
      for (let s = 0; s < samples; s++) {
        const t0 = process.hrtime.bigint();
        for (let k = 0; k < batch; k++) sink += (await latch.check(inputs[i++ % n] as CheckInput)).allowed ? 1 : 0;
        t.push(Number(process.hrtime.bigint() - t0) / batch);
      }
      return median(t);
    };
    const rounds = opts.quick ? 3 : 7;
    const samples = opts.quick ? 300 : 1500;
    const r = { naive: [] as number[], sync: [] as number[], check: [] as number[] };
    for (let round = 0; round < rounds; round++) {
      r.naive.push(perOp(naive, { batch: 32, samples }).p50);
      r.sync.push(perOp(sync, { batch: 32, samples }).p50);
      r.check.push(await asyncCheck(samples, 32));
    }
    await latch.close();
    if (sink < 0) throw new Error('unreachable');
    // Ratios per round (each round's three figures come from the same few hundred ms), then the median.
    const ratio = (xs: number[]): number => median(xs.map((x, i) => x / (r.naive[i] ?? 1)));
    const row = (metric: string, value: number, unit: string): Metric => ({
      scenario: 'embedded-strings',
      metric,
      value: Math.round(value * 100) / 100,
      unit,
    });
    return [
      row('naive Map lookup p50', median(r.naive), 'ns/op'),
      row('checkSync p50', median(r.sync), 'ns/op'),
      row('await check() p50', median(r.check), 'ns/op'),
      row('checkSync / naive', ratio(r.sync), 'ratio'),
      row('check() / naive', ratio(r.check), 'ratio'),
    ];
  },
};
