// Operator figures (`Latch.stats()`): the result cache, the worker pool, the loaded indexes, the
// revision feed, shared memory, write latency and Check depth; cheap enough for every metrics scrape.

import { allocatedBytes } from '../../index/memory.js';
import type { EngineStats } from '../contract.js';
import { checkDepths } from '../stats.js';
import type { EngineParts } from './parts.js';

export function stats(e: EngineParts): EngineStats {
  const c = e.results;
  return {
    cache: { hits: c.hits, misses: c.misses, entries: c.size, capacity: c.capacity },
    pool: e.checker.poolStats(),
    indexes: { ...e.indexes.totals(), loads: e.indexes.loads, checkpoints: e.indexes.checkpoints },
    replication: e.feed.stats,
    sharedMemoryBytes: allocatedBytes(),
    writes: e.writer.timings,
    checkDepth: checkDepths,
    shadow: e.shadowRecords.stats(e.shadow.length),
    permissionIndexes: { ...e.permissionIndexes.maintenance },
  };
}
