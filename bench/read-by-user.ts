// Read by user (`{object: "T:", user}`) on LevelDB through the engine, the latency of one page:
// many users with a page each (every read gathers and sorts the user's tuples anew), and one user
// with many tuples paged through (the first page gathers and sorts; the next pages come from the
// listing cache while the store is unchanged). The same file runs against an older tree that kept
// by-user keys in LevelDB (copy it there): it uses only the engine's public methods.
//
//   npx tsx bench/read-by-user.ts                       # 1M tuples, 10,000 users, one of 100,000
//   npx tsx bench/read-by-user.ts --tuples 200000 --big 20000

import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { AuthorizationModelInput, TupleKey } from '../src/domain/types.js';
import { DEFAULT_ENGINE_CONFIG } from '../src/engine/config.js';
import { LatchService } from '../src/engine/service.js';
import { openLevelStorage } from '../src/storage/level.js';

const { values } = parseArgs({
  options: {
    tuples: { type: 'string', default: '1000000' },
    users: { type: 'string', default: '10000' },
    big: { type: 'string', default: '100000' },
    reads: { type: 'string', default: '2000' },
  },
});
const N = Number(values.tuples);
const USERS = Number(values.users);
const BIG = Number(values.big);
const READS = Number(values.reads);
const CHUNK = 50_000;
const PAGE = 100;

const MODEL = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'doc',
      relations: { viewer: { this: {} }, editor: { this: {} } },
      metadata: {
        relations: {
          viewer: { directly_related_user_types: [{ type: 'user' }] },
          editor: { directly_related_user_types: [{ type: 'user' }] },
        },
      },
    },
  ],
} as unknown as AuthorizationModelInput;

const dir = mkdtempSync(path.join(tmpdir(), 'latch-read-by-user-'));
const latch = new LatchService(await openLevelStorage(dir), DEFAULT_ENGINE_CONFIG);
const storeId = (await latch.createStore('read-by-user')).id;
await latch.writeModel(storeId, MODEL);

// N viewers spread over USERS users (N / USERS each), and BIG docs one user edits.
const tuple = (i: number): TupleKey =>
  i < N
    ? { object: `doc:${i}`, relation: 'viewer', user: `user:u${i % USERS}` }
    : { object: `doc:${i - N}`, relation: 'editor', user: 'user:big' };
for (let from = 0; from < N + BIG; from += CHUNK) {
  const tuples = Array.from({ length: Math.min(CHUNK, N + BIG - from) }, (_, j) => tuple(from + j));
  await latch.importTuples({ storeId, tuples });
}

const read = (user: string, after?: string) =>
  latch.read({ storeId, filter: { object: 'doc:', user }, pageSize: PAGE, after, consistency: 'UNSPECIFIED' });

/** The q-quantile of `xs` (ms), to the microsecond. */
const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round((s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0) * 1000) / 1000;
};

// Many users, one page each.
const small: number[] = [];
for (let i = 0; i < READS; i++) {
  const user = `user:u${(i * 7919) % USERS}`;
  const t0 = performance.now();
  const page = await read(user);
  small.push(performance.now() - t0);
  if (page.items.length !== Math.min(PAGE, Math.ceil(N / USERS))) throw new Error(`${user}: ${page.items.length}`);
}

// One user, every page.
const pages: number[] = [];
let seen = 0;
const t0 = performance.now();
for (let after: string | undefined, first = true; first || after !== undefined; first = false) {
  const t = performance.now();
  const page = await read('user:big', after);
  pages.push(performance.now() - t);
  seen += page.items.length;
  after = page.next;
}
const bigMs = performance.now() - t0;
if (seen !== BIG) throw new Error(`user:big: ${seen} of ${BIG}`);

console.log(
  JSON.stringify(
    {
      tuples: N + BIG,
      loadavg: loadavg().map((l) => Math.round(l * 100) / 100),
      smallUsers: {
        reads: READS,
        tuplesPerUser: Math.ceil(N / USERS),
        p50Ms: quantile(small, 0.5),
        p99Ms: quantile(small, 0.99),
      },
      bigUser: {
        tuples: BIG,
        pages: pages.length,
        totalMs: Math.round(bigMs),
        firstPageMs: Math.round((pages[0] ?? 0) * 100) / 100,
        laterPageP50Ms: quantile(pages.slice(1), 0.5),
        laterPageP99Ms: quantile(pages.slice(1), 0.99),
      },
    },
    null,
    2,
  ),
);
await latch.close();
rmSync(dir, { recursive: true, force: true });
