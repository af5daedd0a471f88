// Permission indexes (docs/permission-indexes.md): (1) latency from an acknowledged Write to its
// expansion event on a connected ReadExpansions stream, over HTTP (a real server, memory
// datastore); (2) write throughput with 0, 1 and 5 active indexes over the same store shape, the
// 0-index run being the baseline of the same run, acknowledged and until the indexes caught up;
// (3) a paced load at 100,000 expansion events/s with the index lag of every write, and the
// 10,000-member-group attack's longest event-loop stall (./permission-index-load.ts); (4) building
// an index over 1M tuples of nested groups (100k with --quick): time, heap per materialised
// triple. Every figure is checked: the event is the written triple, the built index holds exactly
// the triples counted from the data.

import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import type { TupleKey } from '../../src/domain/types.js';
import { startServer } from '../../src/main.js';
import { openLatch } from '../../src/engine/service.js';
import type { Latch } from '../../src/engine/contract.js';
import { dslToModel } from '../../src/model/dsl.js';
import { openMemoryStorage } from '../../src/storage/memory.js';
import { verify, type Metric, type Scenario } from '../scenario.js';
import { attack, deepWrite, maintenanceOf, sustained } from './permission-index-load.js';

const DSL = `model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type doc
  relations
    define viewer: [user, group#member]
    define editor: [user, group#member]
`;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heap = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0;
};
const r2 = (x: number): number => Math.round(x * 100) / 100;

/**
 * Nested groups: group g ≥ 10 is a member of group ⌊g/10⌋; `perGroup` users per group; one group
 * per doc: a leaf group, or for every 20th doc a group two levels up (with its 10 nested groups).
 */
const groupOf = (d: number, groups: number): number =>
  d % 20 === 0
    ? groups / 100 + ((d * 7) % (groups / 10 - groups / 100))
    : groups / 10 + ((d * 31) % (groups - groups / 10));

function* shape(groups: number, perGroup: number, users: number, docs: number): Generator<TupleKey> {
  for (let g = 0; g < groups; g++) {
    for (let i = 0; i < perGroup; i++)
      yield { object: `group:${g}`, relation: 'member', user: `user:${(g * 7919 + i * 104_729) % users}` };
    if (g >= 10) yield { object: `group:${Math.floor(g / 10)}`, relation: 'member', user: `group:${g}#member` };
  }
  for (let d = 0; d < docs; d++)
    yield { object: `doc:${d}`, relation: 'viewer', user: `group:${groupOf(d, groups)}#member` };
}

async function filled(
  tuples: Iterable<TupleKey>,
): Promise<{ latch: Latch; storeId: string; modelId: string; count: number }> {
  const storage = await openMemoryStorage();
  const storeId = (await storage.createStore('pi-bench')).id;
  const modelId = (await storage.writeModel(storeId, dslToModel(DSL))).id;
  let batch: TupleKey[] = [];
  let count = 0;
  for (const t of tuples) {
    batch.push(t);
    if (batch.length === 10_000) {
      await storage.writeTuples(storeId, { writes: batch, deletes: [], onDuplicate: 'ignore', onMissing: 'ignore' });
      count += batch.length;
      batch = [];
    }
  }
  if (batch.length)
    await storage.writeTuples(storeId, { writes: batch, deletes: [], onDuplicate: 'ignore', onMissing: 'ignore' });
  count += batch.length;
  const latch = await openLatch({ storage, config: { workers: 0 } });
  await latch.ready();
  return { latch, storeId, modelId, count };
}

async function active(latch: Latch, storeId: string, id: string): Promise<void> {
  for (;;) {
    const info = await latch.getPermissionIndex(storeId, id);
    if (info.status === 'ACTIVE') return;
    if (info.status === 'FAILED') throw new Error(info.reason);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Build time and heap per triple over the nested-group shape. */
async function build(quick: boolean): Promise<Metric[]> {
  const [groups, perGroup, users, docs] = quick ? [1000, 98, 10_000, 1000] : [10_000, 98, 100_000, 10_000];
  const { latch, storeId, count } = await filled(shape(groups, perGroup, users, docs));
  try {
    const t0 = performance.now();
    const info = await latch.createPermissionIndex({
      storeId,
      name: 'viewers',
      relations: [{ object_type: 'doc', relation: 'viewer' }],
    });
    await active(latch, storeId, info.record.id);
    const ms = performance.now() - t0;
    const got = await latch.getPermissionIndex(storeId, info.record.id);
    // Memory: the heap with the index, then without it (deleted), each after full GCs.
    const withIndex = heap();
    await latch.deletePermissionIndex(storeId, info.record.id);
    const without = heap();
    // The expected count: each doc's group and its nested groups' distinct users.
    const members = new Map<number, Set<string>>();
    const of = (g: number): Set<string> => {
      let m = members.get(g);
      if (m) return m;
      m = new Set<string>();
      for (let i = 0; i < perGroup; i++) m.add(`user:${(g * 7919 + i * 104_729) % users}`);
      for (let c = g * 10; c < g * 10 + 10; c++) if (c >= 10 && c < groups && c !== g) for (const u of of(c)) m.add(u);
      members.set(g, m);
      return m;
    };
    let want = 0;
    for (let d = 0; d < docs; d++) want += of(groupOf(d, groups)).size;
    verify('materialised triples', got.expansions, want);
    const label = `${Math.round(count / 1000)}k tuples`;
    return [
      { scenario: 'permission-index', metric: `build over ${label}`, value: Math.round(ms), unit: 'ms' },
      { scenario: 'permission-index', metric: `triples materialised (${label})`, value: want, unit: 'triples' },
      {
        scenario: 'permission-index',
        metric: 'heap per materialised triple',
        value: r2((withIndex - without) / want),
        unit: 'B',
      },
    ];
  } finally {
    await latch.close();
  }
}

interface Throughput {
  /** Tuples/s acknowledged. */
  readonly tuples: number;
  /** Tuples/s until every index had maintained every write. */
  readonly caughtUp: number;
  /** CPU µs of the whole process per tuple, from the first write to its acknowledgement. */
  readonly cpuPerTupleAcked: number;
  /**
   * CPU µs of the whole process per tuple, from the first write until every index maintained the
   * last one: what a sustained load costs, maintenance included (one core, unaffected by other
   * processes' load).
   */
  readonly cpuPerTuple: number;
  /** Expansion events of all the indexes. */
  readonly events: number;
  /** Expansion events per second of event-loop time spent maintaining (all indexes). */
  readonly perBusySecond: number;
  /**
   * Events per CPU second of the process after the last write was acknowledged, until the
   * indexes caught up: the process then does nothing but maintain.
   */
  readonly perCpuSecond: number;
}

const cpuMicros = (from: NodeJS.CpuUsage): number => {
  const u = process.cpuUsage(from);
  return u.user + u.system;
};

/**
 * 10-tuple writes (5 new memberships, 5 new doc grants) with `n` indexes over doc#viewer: tuples/s
 * and CPU per tuple acknowledged, and until the indexes caught up (they follow the writes).
 */
async function throughput(n: number, writes: number): Promise<Throughput> {
  const { latch, storeId } = await filled(shape(1000, 20, 5000, 2000));
  try {
    for (let i = 0; i < n; i++) {
      const info = await latch.createPermissionIndex({
        storeId,
        name: `viewers-${i}`,
        relations: [{ object_type: 'doc', relation: 'viewer' }],
      });
      await active(latch, storeId, info.record.id);
    }
    const eventsAt = async (): Promise<number> =>
      (await latch.listPermissionIndexes(storeId)).reduce((a, i) => a + i.events, 0);
    const events0 = await eventsAt();
    heap(); // the previous round's garbage is not charged to this one
    const busy0 = maintenanceOf(latch).busyMs;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    for (let w = 0; w < writes; w++)
      await latch.write({
        storeId,
        writes: deepWrite(w, 'new'),
        deletes: [],
        onDuplicate: 'error',
        onMissing: 'error',
      });
    const s = (performance.now() - t0) / 1000;
    const ackedCpu = cpuMicros(cpu0);
    const acked = (await eventsAt()) - events0;
    const cpu1 = process.cpuUsage();
    await latch.permissionIndexesCaughtUp(storeId);
    const catchUpCpu = cpuMicros(cpu1) / 1e6;
    const allCpu = cpuMicros(cpu0);
    const all = (performance.now() - t0) / 1000;
    const busy = (maintenanceOf(latch).busyMs - busy0) / 1000;
    const list = await latch.listPermissionIndexes(storeId);
    verify(
      'indexes stayed active',
      list.map((i) => i.status),
      Array.from({ length: n }, () => 'ACTIVE'),
    );
    const events = list.reduce((a, i) => a + i.events, 0) - events0;
    const tuples = writes * 10;
    return {
      tuples: tuples / s,
      caughtUp: tuples / all,
      cpuPerTupleAcked: ackedCpu / tuples,
      cpuPerTuple: allCpu / tuples,
      events,
      perBusySecond: busy > 0 ? events / busy : 0,
      perCpuSecond: catchUpCpu > 0 ? (events - acked) / catchUpCpu : 0,
    };
  } finally {
    await latch.close();
  }
}

const median = (xs: number[]): number => pct(xs, 0.5);

/**
 * `rounds` interleaved rounds of 0, 1 and 5 indexes (the order rotates each round), each a fresh
 * store: per round the ratios to that round's 0-index run, then the medians (a shared machine's
 * load drifts between rounds, not within one round's ratios as much).
 */
async function throughputRounds(rounds: number, writes: number): Promise<Metric[]> {
  const counts = [0, 1, 5];
  const runs = new Map<number, Throughput[]>(counts.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < counts.length; k++) {
      const n = counts[(r + k) % counts.length] as number;
      (runs.get(n) as Throughput[]).push(await throughput(n, writes));
    }
  }
  const none = runs.get(0) as Throughput[];
  const rows: Metric[] = [];
  const add = (metric: string, value: number, unit: string): void => {
    rows.push({ scenario: 'permission-index', metric, value, unit });
  };
  add('write throughput rounds (interleaved, medians below)', rounds, 'rounds');
  for (const n of counts) {
    const t = runs.get(n) as Throughput[];
    add(`write throughput, ${n} indexes (acknowledged)`, Math.round(median(t.map((x) => x.tuples))), 'tuples/s');
    add(`  CPU per tuple acknowledged, ${n} indexes`, r2(median(t.map((x) => x.cpuPerTupleAcked))), 'µs');
    add(`  CPU per tuple with maintenance, ${n} indexes`, r2(median(t.map((x) => x.cpuPerTuple))), 'µs');
    if (n === 0) continue;
    const ratio = (f: (x: Throughput) => number, inverse: boolean): number[] =>
      t.map((x, i) => (inverse ? f(none[i] as Throughput) / f(x) : f(x) / f(none[i] as Throughput)));
    const acked = ratio((x) => x.tuples, false);
    add(`  ratio to 0 indexes, acknowledged tuples/s (median)`, r2(median(acked)), '×');
    add(`  ratio range over the rounds`, r2(Math.min(...acked)), `… ${r2(Math.max(...acked))} ×`);
    add(
      `  ratio to 0 indexes, CPU per tuple acknowledged (0 / ${n})`,
      r2(median(ratio((x) => x.cpuPerTupleAcked, true))),
      '×',
    );
    add(
      `  ratio to 0 indexes, CPU per tuple with maintenance (0 / ${n})`,
      r2(median(ratio((x) => x.cpuPerTuple, true))),
      '×',
    );
    add(`  until ${n} indexes caught up`, Math.round(median(t.map((x) => x.caughtUp))), 'tuples/s');
    add(`  expansion events per tuple (all ${n})`, r2(median(t.map((x) => x.events / (writes * 10)))), 'events');
    add(
      `  expansion events per second of maintenance time (all ${n})`,
      Math.round(median(t.map((x) => x.perBusySecond))),
      'events/s',
    );
    add(
      `  expansion events per CPU second, catching up after the writes (all ${n})`,
      Math.round(median(t.map((x) => x.perCpuSecond))),
      'events/s',
    );
  }
  return rows;
}

/**
 * Write → event latency over HTTP on a connected stream, from the moment the Write is sent: the
 * index maintains the write after its reply, so the Write's own round trip (its acknowledgement)
 * is measured alongside as the baseline.
 */
async function latency(samples: number): Promise<{ event: number[]; ack: number[] }> {
  const server = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory' });
  const base = `http://127.0.0.1:${server.port}`;
  const post = async (path: string, body: unknown): Promise<Record<string, unknown>> =>
    (await (await fetch(base + path, { method: 'POST', body: JSON.stringify(body) })).json()) as Record<
      string,
      unknown
    >;
  const ac = new AbortController();
  try {
    const store = (await post('/stores', { name: 'latency' })).id as string;
    const model = (await post(`/stores/${store}/authorization-models`, dslToModel(DSL)))
      .authorization_model_id as string;
    const index = (
      await post(`/stores/${store}/indexes`, { name: 'v', relations: [{ object_type: 'doc', relation: 'viewer' }] })
    ).index_id as string;
    const res = await fetch(`${base}/stores/${store}/indexes/${index}/expansions?authorization_model_id=${model}`, {
      signal: ac.signal,
    });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const dec = new TextDecoder();
    let buf = '';
    const nextEvent = async (): Promise<{ object: string } | undefined> => {
      for (;;) {
        const nl = buf.indexOf('\n');
        if (nl !== -1) {
          const line = JSON.parse(buf.slice(0, nl)) as { result?: { expansion?: { object: string } } };
          buf = buf.slice(nl + 1);
          if (line.result?.expansion) return line.result.expansion;
          continue;
        }
        const { value, done } = await reader.read();
        if (done) return undefined;
        buf += dec.decode(value, { stream: true });
      }
    };
    const event: number[] = [];
    const ack: number[] = [];
    for (let i = 0; i < samples; i++) {
      const t0 = performance.now();
      const ev = nextEvent().then((e) => ((eventAt = performance.now()), e));
      let eventAt = 0;
      const r = await fetch(`${base}/stores/${store}/write`, {
        method: 'POST',
        body: JSON.stringify({
          writes: { tuple_keys: [{ object: `doc:${i}`, relation: 'viewer', user: `user:${i}` }] },
        }),
      });
      await r.arrayBuffer();
      ack.push(performance.now() - t0);
      const got = await ev;
      event.push(eventAt - t0);
      verify('event of the write', got?.object, `doc:${i}`);
    }
    return { event, ack };
  } finally {
    ac.abort();
    await server.close();
  }
}

/** The paced run at 100,000 events/s and the 10,000-member-group attack (./permission-index-load.ts). */
async function loaded(quick: boolean): Promise<Metric[]> {
  const rows: Metric[] = [];
  for (const indexed of [true, false]) {
    const { latch, storeId, modelId } = await filled(shape(1000, 20, 5000, 2000));
    try {
      let indexId: string | undefined;
      if (indexed) {
        indexId = (
          await latch.createPermissionIndex({
            storeId,
            name: 'viewers',
            relations: [{ object_type: 'doc', relation: 'viewer' }],
          })
        ).record.id;
        await active(latch, storeId, indexId);
        // LATCH_PI_PACED_RATE: another target (events/s), e.g. one a loaded machine can sustain.
        const rate = Number(process.env.LATCH_PI_PACED_RATE ?? 100_000);
        rows.push(...(await sustained({ latch, storeId, modelId }, indexId, rate, 338, quick ? 3 : 10)));
      }
      rows.push(...(await attack({ latch, storeId, modelId }, indexId)));
    } finally {
      await latch.close();
    }
  }
  return rows;
}

export const permissionIndex: Scenario = {
  name: 'permission-index',
  description:
    'permission indexes: write → event latency, write throughput with 0/1/5 indexes, paced lag, the 10,000-member attack, build over 1M nested-group tuples',
  async run(opts) {
    // LATCH_PI_PARTS (comma-separated: latency, throughput, paced, build) runs only those parts.
    const parts = new Set((process.env.LATCH_PI_PARTS ?? 'latency,throughput,paced,build').split(','));
    const rows: Metric[] = [];
    if (parts.has('latency')) {
      const lat = await latency(opts.quick ? 200 : 1000);
      for (const [name, xs] of [
        ['write sent → event', lat.event],
        ['write sent → ack', lat.ack],
      ] as const) {
        rows.push({ scenario: 'permission-index', metric: `${name} p50 (HTTP)`, value: r2(pct(xs, 0.5)), unit: 'ms' });
        rows.push({ scenario: 'permission-index', metric: `${name} p99 (HTTP)`, value: r2(pct(xs, 0.99)), unit: 'ms' });
      }
    }
    if (parts.has('throughput')) rows.push(...(await throughputRounds(opts.quick ? 3 : 5, opts.quick ? 200 : 1000)));
    if (parts.has('paced')) rows.push(...(await loaded(opts.quick)));
    if (parts.has('build')) rows.push(...(await build(opts.quick)));
    return rows;
  },
};
