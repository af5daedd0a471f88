// Cold load of a store's index from LevelDB, every way a restart can take: from the tuples (no
// checkpoint: scanTuples + build), from the checkpoint image (memcpy sections + the node
// dictionary), and from the image plus the longest change-log tail a crash can leave under the
// background-checkpoint policy (MAX_TAIL changes). Each phase runs in its own child process (--expose-gc) so RSS is per phase.
// 1M tuples by default (200k with --quick), and 10M with --big (about 2 GB of LevelDB in a temp
// dir; several minutes). The LevelDB files are in the OS page cache when loaded (written just
// before): the figures are the CPU cost of a restart, not of a cold disk.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_TAIL } from '../../src/index/store-index.js';
import { runChild } from '../harness.js';
import type { Metric, Scenario } from '../scenario.js';

function child(phase: string, dir: string, n: number): Promise<Record<string, number>> {
  return runChild(new URL('./cold-load-child.ts', import.meta.url), [phase, dir, String(n)], 12288);
}

export const coldLoad: Scenario = {
  name: 'cold-load',
  description:
    'index cold load from LevelDB: from the tuples (no checkpoint), from the checkpoint image, and image + the longest tail a crash leaves',
  async run(opts) {
    const rows: Metric[] = [];
    for (const n of opts.big ? [1_000_000, 10_000_000] : [opts.quick ? 200_000 : 1_000_000]) {
      const dir = await mkdtemp(join(tmpdir(), 'latch-cold-'));
      try {
        const fill = await child('fill', dir, n);
        const fromTuples = await child('tuples', dir, n);
        const fromCheckpoint = await child('checkpoint', dir, n);
        const afterCrash = await child('tail', dir, n);
        const s = `cold-load-${n / 1e6}M`;
        const r = (v: number | undefined, d = 0): number => +(v ?? 0).toFixed(d);
        rows.push(
          { scenario: s, metric: 'LevelDB fill (10k-tuple synced writes)', value: r(fill.fillMs), unit: 'ms' },
          { scenario: s, metric: 'load from tuples (no checkpoint)', value: r(fromTuples.loadMs), unit: 'ms' },
          { scenario: s, metric: 'RSS per 1M after load from tuples', value: r(fromTuples.rssMBPer1M, 1), unit: 'MB' },
          { scenario: s, metric: 'checkpoint write', value: r(fromTuples.checkpointWriteMs), unit: 'ms' },
          { scenario: s, metric: 'load from checkpoint', value: r(fromCheckpoint.loadMs), unit: 'ms' },
          {
            scenario: s,
            metric: `load from checkpoint + ${MAX_TAIL / 1000}k-change tail (worst crash)`,
            value: r(afterCrash.loadMs),
            unit: 'ms',
          },
          {
            scenario: s,
            metric: 'then: background fold of that tail into the base',
            value: r(afterCrash.foldMs),
            unit: 'ms',
          },
          {
            scenario: s,
            metric: 'RSS per 1M after load from checkpoint',
            value: r(fromCheckpoint.rssMBPer1M, 1),
            unit: 'MB',
          },
          {
            scenario: s,
            metric: 'index bytes/tuple (base CSR)',
            value: r(fromCheckpoint.indexBytesPerTuple, 1),
            unit: 'B',
          },
          {
            scenario: s,
            metric: 'shared memory bytes/tuple (all)',
            value: r(fromCheckpoint.sharedBytesPerTuple, 1),
            unit: 'B',
          },
        );
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
    return rows;
  },
};
