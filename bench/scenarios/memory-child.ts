// Child process of the memory scenario (run with --expose-gc so RSS is measured after a GC):
// builds an index of N tuples, reports bytes per tuple, RSS growth, and cold-load times from
// tuples and from a checkpoint image. Prints one JSON line of metrics.

import type { TupleKey } from '../../src/domain/types.js';
import { allocatedBytes } from '../../src/index/memory.js';
import { StoreIndex } from '../../src/index/store-index.js';
import { openMemoryStorage } from '../../src/storage/memory.js';
import { rss } from '../harness.js';

const n = Number(process.argv[2] ?? 1_000_000);
const RELS = ['viewer', 'editor', 'owner', 'commenter', 'parent'];

/** 5 tuples per document, subjects from 100k users (parents from 20k folders). */
function* tuples(): Generator<TupleKey> {
  for (let i = 0; i < n; i++) {
    const rel = RELS[i % 5] ?? 'viewer';
    const user = rel === 'parent' ? `folder:${(i * 31) % 20_000}` : `user:${(i * 7919) % 100_000}`;
    yield { object: `doc:${Math.floor(i / 5)}`, relation: rel, user };
  }
}

const rss0 = rss();
const shared0 = allocatedBytes();
let t0 = performance.now();
const ix = StoreIndex.build(tuples(), 1);
const buildMs = performance.now() - t0;
const rss1 = rss();
const indexBytes = ix.baseBytes;
const nodes = ix.dict.nodeList.length;
const sharedBytes = allocatedBytes() - shared0;

const storage = await openMemoryStorage();
const store = await storage.createStore('bench');
await ix.checkpoint(storage, store.id);
t0 = performance.now();
const loaded = await StoreIndex.load(storage, store.id);
const loadMs = performance.now() - t0;
if (loaded.snapshot().nodeCount !== nodes) throw new Error('checkpoint load lost nodes');
const probe =
  [...loaded.snapshot().users('doc:7', 'viewer')].length + [...ix.snapshot().users('doc:7', 'viewer')].length;
if (probe !== 0 && probe !== 2) throw new Error('checkpoint load differs');

const per = 1_000_000 / n;
process.stdout.write(
  JSON.stringify({
    tuples: n,
    nodes,
    indexBytesPerTuple: indexBytes / n,
    sharedBytesPerTuple: sharedBytes / n,
    rssMBPer1M: ((rss1 - rss0) / 1048576) * per,
    buildMs,
    checkpointLoadMs: loadMs,
  }) + '\n',
);
process.exit(0);
