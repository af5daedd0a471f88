// Complete listings over HTTP on a real server (memory store): every one of N objects through
// paged ListObjects (`page_size`, latch's complete-listing pages), through paged StreamedListObjects
// (the same pages as NDJSON streams) and through one unpaged StreamedListObjects; and every one of
// N users of one object through paged ListUsers. Each way runs in the same process, interleaved
// over `--rounds` rounds (the median is reported), and every listing is checked complete, in order
// and without duplicates before it counts. ListUsers runs with `--users` (N users of one object).
//
//   npx tsx bench/http/listings.ts                           # 1M objects and users, pages of 100,000
//   npx tsx bench/http/listings.ts --n 100000 --page 10000   # a quick run
//
// For a CPU profile of the server side: node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/http/listings.ts

import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { startServer } from '../../src/main.js';
import type { TupleKey } from '../../src/domain/types.js';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '1000000' },
    page: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
    users: { type: 'boolean', default: false },
  },
});
const N = Number(values.n);
const PAGE = Number(values.page);
const ROUNDS = Number(values.rounds);

const MODEL = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'group',
      relations: { member: { this: {} } },
      metadata: { relations: { member: { directly_related_user_types: [{ type: 'user' }] } } },
    },
    {
      type: 'doc',
      relations: { viewer: { this: {} } },
      metadata: {
        relations: {
          viewer: { directly_related_user_types: [{ type: 'user' }, { type: 'group', relation: 'member' }] },
        },
      },
    },
  ],
};

const server = await startServer({
  host: '127.0.0.1',
  port: 0,
  datastore: 'memory',
  engine: { maxTuplesPerWrite: 10_000, listObjectsDeadlineMs: 600_000, listPageDeadlineMs: 600_000 },
});
const base = `http://127.0.0.1:${server.port}`;

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(base + path, { method: 'POST', body: JSON.stringify(body) });
  const json = (await r.json()) as Record<string, unknown>;
  if (r.status >= 300) throw new Error(`${path}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}

const store = (await post('/stores', { name: 'bench-listings' })).id as string;
await post(`/stores/${store}/authorization-models`, MODEL);
async function fill(make: (i: number) => TupleKey): Promise<void> {
  for (let i = 0; i < N; i += 10_000) {
    const writes: TupleKey[] = [];
    for (let j = i; j < Math.min(N, i + 10_000); j++) writes.push(make(j));
    await server.latch.write({ storeId: store, writes, deletes: [], onDuplicate: 'error', onMissing: 'error' });
  }
}
await server.latch.write({
  storeId: store,
  writes: [{ object: 'group:all', relation: 'member', user: 'user:anne' }],
  deletes: [],
  onDuplicate: 'error',
  onMissing: 'error',
});
await fill((i) => ({ object: `doc:${i}`, relation: 'viewer', user: 'group:all#member' }));
if (values.users) await fill((i) => ({ object: 'doc:big', relation: 'viewer', user: `user:${i}` }));

const objectsQuery = { type: 'doc', relation: 'viewer', user: 'user:anne' };
const usersQuery = { object: { type: 'doc', id: 'big' }, relation: 'viewer', user_filters: [{ type: 'user' }] };

/** Throws unless `items` are N distinct keys in ascending order (the complete listing). */
function complete(items: readonly string[], what: string): void {
  if (items.length !== N) throw new Error(`${what}: ${items.length} of ${N}`);
  for (let i = 1; i < items.length; i++)
    if ((items[i - 1] as string) >= (items[i] as string)) throw new Error(`${what}: out of order at ${i}`);
}

async function pagedObjects(): Promise<string[]> {
  const out: string[] = [];
  let token = '';
  do {
    const r = await post(`/stores/${store}/list-objects`, {
      ...objectsQuery,
      page_size: PAGE,
      continuation_token: token,
    });
    for (const o of r.objects as string[]) out.push(o);
    token = r.continuation_token as string;
  } while (token !== '');
  return out;
}

async function pagedUsers(): Promise<string[]> {
  const out: string[] = [];
  let token = '';
  do {
    const r = await post(`/stores/${store}/list-users`, { ...usersQuery, page_size: PAGE, continuation_token: token });
    for (const u of r.users as { object: { type: string; id: string } }[]) out.push(`${u.object.type}:${u.object.id}`);
    token = r.continuation_token as string;
  } while (token !== '');
  return out;
}

/** The `result` lines of one NDJSON stream; `last` is the last line's continuation token. */
async function stream(body: unknown): Promise<{ objects: string[]; last: string }> {
  const r = await fetch(`${base}/stores/${store}/streamed-list-objects`, {
    method: 'POST',
    body: JSON.stringify(body),
  });
  if (r.status !== 200 || !r.body) throw new Error(`stream: ${r.status}`);
  const objects: string[] = [];
  let last = '';
  let rest = '';
  const decoder = new TextDecoder();
  for await (const bytes of r.body) {
    const text = rest + decoder.decode(bytes, { stream: true });
    const lines = text.split('\n');
    rest = lines.pop() ?? '';
    if (lines.length === 0) continue;
    // The lines received so far parsed as one JSON array: one parse per read, not per line.
    const parsed = JSON.parse(`[${lines.join(',')}]`) as {
      result?: { object: string; continuation_token?: string };
      error?: unknown;
    }[];
    for (const line of parsed) {
      if (!line.result) throw new Error(`stream error: ${JSON.stringify(line)}`);
      objects.push(line.result.object);
      last = line.result.continuation_token ?? '';
    }
  }
  return { objects, last };
}

async function streamedPages(): Promise<string[]> {
  const out: string[] = [];
  let token = '';
  do {
    const r = await stream({ ...objectsQuery, page_size: PAGE, continuation_token: token });
    for (const o of r.objects) out.push(o);
    token = r.last;
  } while (token !== '');
  return out;
}

async function streamedWhole(): Promise<string[]> {
  return (await stream(objectsQuery)).objects.sort();
}

const ways: [string, () => Promise<string[]>][] = [
  ['ListObjects paged', pagedObjects],
  ['StreamedListObjects paged', streamedPages],
  ['StreamedListObjects unpaged', streamedWhole],
  ...(values.users ? [['ListUsers paged', pagedUsers] as [string, () => Promise<string[]>]] : []),
];
// Warm the listing cache (the first page computes the complete answer once per store state).
for (const [name, run] of ways) {
  complete(await run(), name);
}
const times = new Map<string, number[]>(ways.map(([name]) => [name, []]));
// CPU time of this process (server and client), which moves less with other processes' load than the wall clock.
const cpu = new Map<string, number[]>(ways.map(([name]) => [name, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, run] of ways) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const items = await run();
    times.get(name)?.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.get(name)?.push(c.user + c.system);
    complete(items, name);
  }
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
for (const [name, xs] of times) {
  const ms = median(xs);
  console.log(
    `${name}: ${N} results in ${ms.toFixed(0)} ms = ${Math.round((N / ms) * 1000)} results/s, ` +
      `${(median(cpu.get(name) ?? []) / N).toFixed(2)} µs CPU per result (median of ${ROUNDS}; pages of ${PAGE})`,
  );
}
console.log(
  `load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
await server.close();
