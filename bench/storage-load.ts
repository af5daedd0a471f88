// Storage load benchmark: how long a restart takes to get a store's tuples back, one key per
// tuple (scanTuples) versus an index checkpoint of ~20 bytes per tuple (write + read).
//
//   npx tsx bench/storage-load.ts                      # 1M tuples, LevelDB in a temp dir
//   npx tsx bench/storage-load.ts --tuples 10000000    # 10M (long; needs a quiet machine)
//   npx tsx bench/storage-load.ts --tuples 200000 --backend memory

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openLevelStorage } from '../src/storage/level.js';
import { openMemoryStorage } from '../src/storage/memory.js';
import type { TupleKey } from '../src/domain/types.js';

const BATCH = 100;
const CHECKPOINT_BYTES_PER_TUPLE = 20;
const CHUNK = 8 * 1024 * 1024;

const { values } = parseArgs({
  options: {
    tuples: { type: 'string', default: '1000000' },
    backend: { type: 'string', default: 'leveldb' },
    repeat: { type: 'string', default: '3' },
  },
});
/** Read phases run this many times and report the best (the machine is shared and noisy). */
const repeat = Math.max(1, Number.parseInt(values.repeat ?? '3', 10) || 1);
const total = Number.parseInt(values.tuples ?? '', 10);
if (!Number.isSafeInteger(total) || total <= 0)
  throw new Error(`--tuples must be a positive integer, got ${values.tuples}`);

/** Tuple i: 1000 users, 10 relations per object, a few thousand object ids per type. */
function tuple(i: number): TupleKey {
  return { object: `document:${Math.floor(i / 10)}`, relation: `r${i % 10}`, user: `user:${i % 1000}` };
}

async function time<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const out = await fn();
  return [out, (performance.now() - t0) / 1000];
}

/** Best of `repeat` runs. */
async function best<T>(fn: () => Promise<T>): Promise<[T, number]> {
  let result = await time(fn);
  for (let i = 1; i < repeat; i++) {
    const r = await time(fn);
    if (r[1] < result[1]) result = r;
  }
  return result;
}

function* blob(bytes: number): Generator<Uint8Array> {
  for (let at = 0; at < bytes; at += CHUNK) yield new Uint8Array(Math.min(CHUNK, bytes - at)).fill(at % 251);
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'latch-bench-'));
  const storage = values.backend === 'memory' ? await openMemoryStorage() : await openLevelStorage(dir);
  try {
    const store = (await storage.createStore('bench')).id;
    const [, load] = await time(async () => {
      for (let i = 0; i < total; i += BATCH) {
        const writes = Array.from({ length: Math.min(BATCH, total - i) }, (_, j) => tuple(i + j));
        await storage.writeTuples(store, { deletes: [], writes, onDuplicate: 'error', onMissing: 'error' });
      }
    });
    const [scanned, scan] = await best(async () => {
      const { tuples } = await storage.scanTuples(store);
      let n = 0;
      for await (const _ of tuples) n++;
      return n;
    });
    if (scanned !== total) throw new Error(`scanTuples returned ${scanned} tuples, expected ${total}`);
    const bytes = total * CHECKPOINT_BYTES_PER_TUPLE;
    const revision = await storage.revision(store);
    const [, cpWrite] = await best(() => storage.writeCheckpoint(store, revision, blob(bytes)));
    const [readBytes, cpRead] = await best(async () => {
      const cp = await storage.readCheckpoint(store);
      let n = 0;
      for await (const c of cp?.chunks ?? []) n += c.byteLength;
      return n;
    });
    if (readBytes !== bytes) throw new Error(`checkpoint read ${readBytes} bytes, expected ${bytes}`);
    const mb = (bytes / 2 ** 20).toFixed(1);
    console.log(`storage-load: ${storage.kind}, ${total.toLocaleString('en')} tuples (read phases: best of ${repeat})`);
    console.table([
      {
        phase: `write (${BATCH}-tuple synced writes)`,
        seconds: load.toFixed(2),
        rate: `${Math.round(total / load).toLocaleString('en')} tuples/s`,
      },
      {
        phase: 'scanTuples (one key per tuple)',
        seconds: scan.toFixed(2),
        rate: `${Math.round(total / scan).toLocaleString('en')} tuples/s`,
      },
      {
        phase: `checkpoint write (${mb} MiB)`,
        seconds: cpWrite.toFixed(2),
        rate: `${(bytes / 2 ** 20 / cpWrite).toFixed(0)} MiB/s`,
      },
      {
        phase: `checkpoint read (${mb} MiB)`,
        seconds: cpRead.toFixed(2),
        rate: `${(bytes / 2 ** 20 / cpRead).toFixed(0)} MiB/s`,
      },
    ]);
  } finally {
    await storage.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
