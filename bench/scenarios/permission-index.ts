// Permission indexes (docs/permission-indexes.md): (1) latency from an acknowledged Write to its
// expansion event on a connected ReadExpansions stream, over HTTP (a real server, memory
// datastore); (2) write throughput with 0, 1 and 5 active indexes over the same store shape, the
// 0-index run being the baseline of the same run; (3) building an index over 1M tuples of nested
// groups (100k with --quick): time, heap per materialised triple. Every figure is checked: the
// event is the written triple, the built index holds exactly the triples counted from the data.

import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import type { TupleKey } from '../../src/domain/types.js';
import { startServer } from '../../src/main.js';
import { openLatch } from '../../src/engine/service.js';
import type { Latch } from '../../src/engine/contract.js';
import { dslToModel } from '../../src/model/dsl.js';
import { openMemoryStorage } from '../../src/storage/memory.js';
import { verify, type Metric, type Scenario } from '../scenario.js';

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

async function filled(tuples: Iterable<TupleKey>): Promise<{ latch: Latch; storeId: string; count: number }> {
  const storage = await openMemoryStorage();
  const storeId = (await storage.createStore('pi-bench')).id;
  await storage.writeModel(storeId, dslToModel(DSL));
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
  return { latch, storeId, count };
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

/** Tuples/s of 10-tuple writes (5 new memberships, 5 new doc grants) with `n` indexes over doc#viewer. */
async function throughput(n: number, writes: number): Promise<{ tuples: number; events: number }> {
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
    const t0 = performance.now();
    for (let w = 0; w < writes; w++) {
      const batch: TupleKey[] = [];
      for (let i = 0; i < 5; i++)
        batch.push({ object: `group:${(w * 5 + i) % 1000}`, relation: 'member', user: `user:new-${w}-${i}` });
      for (let i = 0; i < 5; i++)
        batch.push({ object: `doc:new-${w}-${i}`, relation: 'viewer', user: `group:${(w * 7 + i) % 1000}#member` });
      await latch.write({ storeId, writes: batch, deletes: [], onDuplicate: 'error', onMissing: 'error' });
    }
    const s = (performance.now() - t0) / 1000;
    const list = await latch.listPermissionIndexes(storeId);
    verify(
      'indexes stayed active',
      list.map((i) => i.status),
      Array.from({ length: n }, () => 'ACTIVE'),
    );
    return { tuples: (writes * 10) / s, events: (list[0]?.events ?? 0) / s };
  } finally {
    await latch.close();
  }
}

/**
 * Write → event latency over HTTP on a connected stream, from the moment the Write is sent: the
 * event is produced while the write applies, before the reply, so the Write's own round trip (its
 * acknowledgement) is measured alongside as the baseline.
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

export const permissionIndex: Scenario = {
  name: 'permission-index',
  description:
    'permission indexes: write → event latency, write throughput with 0/1/5 indexes, build over 1M nested-group tuples',
  async run(opts) {
    const rows: Metric[] = [];
    const lat = await latency(opts.quick ? 200 : 1000);
    for (const [name, xs] of [
      ['write sent → event', lat.event],
      ['write sent → ack', lat.ack],
    ] as const) {
      rows.push({ scenario: 'permission-index', metric: `${name} p50 (HTTP)`, value: r2(pct(xs, 0.5)), unit: 'ms' });
      rows.push({ scenario: 'permission-index', metric: `${name} p99 (HTTP)`, value: r2(pct(xs, 0.99)), unit: 'ms' });
    }
    const writes = opts.quick ? 200 : 1000;
    for (const n of [0, 1, 5]) {
      const t = await throughput(n, writes);
      rows.push({
        scenario: 'permission-index',
        metric: `write throughput, ${n} indexes`,
        value: Math.round(t.tuples),
        unit: 'tuples/s',
      });
      if (n > 0)
        rows.push({
          scenario: 'permission-index',
          metric: `expansion events, ${n} indexes (each)`,
          value: Math.round(t.events),
          unit: 'events/s',
        });
    }
    rows.push(...(await build(opts.quick)));
    return rows;
  },
};
