// The sort of a bulk import chunk's LevelDB keys (write-plan.ts planImport), three ways in one
// run on the same keys: `sortBinaryKeys` (src/storage/key-sort.ts), Array.prototype.sort of the
// whole array, and the scheme planImport used before it (slices of 4,096 sorted, then
// `flat().sort()` of the runs). Two data sets: the chunks of the NDJSON file bench/import.ts makes
// (`/tmp/latch-import-<N>.ndjson`; run that bench once at the size first), and as many tuples with
// random 26-char ids (no order in the input, long shared prefixes only in the types). Each sort
// gets keys built afresh the way planImport builds them (key.tuple, and by-user positions as keys, tuple order), so
// they are scattered in the heap as there, not warm in the cache from the previous sort. CPU from
// process.cpuUsage around the two sorts of a chunk (tuple keys, by-user positions), methods interleaved
// chunk by chunk, the median of `--rounds`; every result is checked against `sort()` first.
//
//   node --max-semi-space-size=4 --no-parallel-scavenge --import tsx bench/key-sort.ts --tuples 3000000

import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import type { TupleKey } from '../src/domain/types.js';
import { key, userPosition } from '../src/storage/codec.js';
import { sortBinaryKeys } from '../src/storage/key-sort.js';

const { values } = parseArgs({
  options: {
    tuples: { type: 'string', default: '3000000' },
    chunk: { type: 'string', default: '50000' },
    // Chunks sorted per round and data set: spread evenly over the file.
    chunks: { type: 'string', default: '12' },
    rounds: { type: 'string', default: '5' },
  },
});
const N = Number(values.tuples);
const CHUNK = Number(values.chunk);
const CHUNKS = Number(values.chunks);
const ROUNDS = Number(values.rounds);
const STORE = '01ARZ3NDEKTSV4RRFFQ69G5FAW';
/** Every key of a store starts with `D <id> t` or `D <id> u`. */
const SHARED = key.tuples(STORE).length;

/** CHUNKS chunks of the file, spread over it, each as its tuples. */
function fileChunks(): TupleKey[][] {
  const lines = readFileSync(`/tmp/latch-import-${N}.ndjson`, 'utf8').split('\n');
  const total = Math.floor((lines.length - 1) / CHUNK);
  const out: TupleKey[][] = [];
  for (let c = 0; c < CHUNKS; c++) {
    const from = Math.floor((c * total) / CHUNKS) * CHUNK;
    out.push(lines.slice(from, from + CHUNK).map((l) => JSON.parse(l) as TupleKey));
  }
  return out;
}

/** CHUNKS chunks of tuples with random ids (a seeded generator: the same keys every run). */
function randomChunks(): TupleKey[][] {
  let seed = 0x9e3779b9;
  const next = (): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
  const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  const id = (): string => {
    let s = '';
    for (let i = 0; i < 26; i++) s += ALPHABET[next() % 32] as string;
    return s;
  };
  const types = ['document', 'folder', 'group'];
  const relations = ['viewer', 'editor', 'owner', 'parent'];
  const out: TupleKey[][] = [];
  for (let c = 0; c < CHUNKS; c++) {
    const chunk: TupleKey[] = [];
    for (let i = 0; i < CHUNK; i++)
      chunk.push({
        object: `${types[next() % 3] as string}:${id()}`,
        relation: relations[next() % 4] as string,
        user: `user:${id()}`,
      });
    out.push(chunk);
  }
  return out;
}

type Sort = (keys: string[]) => string[];

const METHODS: Record<string, Sort> = {
  sortBinaryKeys: (keys) => sortBinaryKeys(keys, SHARED),
  'Array.prototype.sort': (keys) => keys.sort(),
  'slices of 4096, then flat().sort()': (keys) => {
    const runs: string[][] = [];
    for (let i = 0; i < keys.length; i += 4096) runs.push(keys.slice(i, i + 4096).sort());
    return runs.flat().sort();
  },
};

const cpuMicros = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** One chunk's tuple keys as planImport builds them, and its by-user positions as keys (a second shape). */
function build(tuples: readonly TupleKey[]): [string[], string[]] {
  const keys = new Array<string>(tuples.length);
  const users = new Array<string>(tuples.length);
  for (let i = 0; i < tuples.length; i++) {
    const t = tuples[i] as TupleKey;
    keys[i] = key.tuple(STORE, t);
    users[i] = key.byUser(STORE) + userPosition(t);
  }
  return [keys, users];
}

function verify(chunks: readonly TupleKey[][]): void {
  for (const tuples of chunks)
    for (const keys of build(tuples)) {
      const want = keys.slice().sort();
      for (const [name, sort] of Object.entries(METHODS)) {
        const got = sort(keys.slice());
        if (got.length !== want.length || got.some((k, i) => k !== want[i])) throw new Error(`${name}: wrong order`);
      }
    }
}

interface Round {
  /** CPU µs per tuple, both arrays. */
  perTuple: number;
  /** The longest single sort of one array (ms of CPU). */
  longestMs: number;
}

/** One round: every chunk sorted by every method, the methods' order rotating chunk by chunk. */
function round(chunks: readonly TupleKey[][]): Map<string, Round> {
  const names = Object.keys(METHODS);
  const total = new Map(names.map((n) => [n, 0]));
  const longest = new Map(names.map((n) => [n, 0]));
  chunks.forEach((tuples, c) => {
    for (let m = 0; m < names.length; m++) {
      const name = names[(c + m) % names.length] as string;
      const sort = METHODS[name] as Sort;
      for (const keys of build(tuples)) {
        const t0 = cpuMicros();
        sort(keys);
        const t = cpuMicros() - t0;
        total.set(name, (total.get(name) as number) + t);
        longest.set(name, Math.max(longest.get(name) as number, t / 1000));
      }
    }
  });
  const tuples = chunks.reduce((n, c) => n + c.length, 0);
  return new Map(
    names.map((n) => [n, { perTuple: (total.get(n) as number) / tuples, longestMs: longest.get(n) as number }]),
  );
}

const median = (xs: number[]): number => {
  const s = xs.slice().sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
};

const report: Record<string, unknown> = {};
for (const [set, chunks] of [
  ['file', fileChunks()],
  ['random ids', randomChunks()],
] as const) {
  verify(chunks);
  const rounds: Map<string, Round>[] = [];
  for (let r = 0; r < ROUNDS; r++) rounds.push(round(chunks));
  const base = median(rounds.map((r) => (r.get('sortBinaryKeys') as Round).perTuple));
  const rows: Record<string, unknown> = {};
  for (const name of Object.keys(METHODS)) {
    const perTuple = median(rounds.map((r) => (r.get(name) as Round).perTuple));
    rows[name] = {
      cpuMicrosPerTuple: Number(perTuple.toFixed(3)),
      ratioToSortBinaryKeys: Number((perTuple / base).toFixed(2)),
      longestSortMs: Number(median(rounds.map((r) => (r.get(name) as Round).longestMs)).toFixed(1)),
    };
  }
  report[set] = rows;
  console.log(set, JSON.stringify(rows));
}
console.log(
  JSON.stringify({ tuples: N, chunk: CHUNK, chunks: CHUNKS, rounds: ROUNDS, sorts: report, load: loadavg() }, null, 2),
);
