// Index size and cold load: bytes of index per tuple, RSS per 1M tuples (in a fresh child process
// with --expose-gc), build from tuples and load from a checkpoint image; `--big` adds 10M.

import { runChild } from '../harness.js';
import type { Metric, Scenario } from '../scenario.js';

function child(n: number): Promise<Record<string, number>> {
  return runChild(new URL('./memory-child.ts', import.meta.url), [String(n)], 8192);
}

export const indexMemory: Scenario = {
  name: 'index-memory',
  description: 'bytes/tuple, RSS per 1M tuples, cold build and checkpoint load',
  async run(opts) {
    const rows: Metric[] = [];
    for (const n of opts.big ? [1_000_000, 10_000_000] : [opts.quick ? 200_000 : 1_000_000]) {
      const r = await child(n);
      const s = `index-${n / 1e6}M`;
      rows.push(
        {
          scenario: s,
          metric: 'index bytes/tuple (base CSR)',
          value: +(r.indexBytesPerTuple ?? 0).toFixed(1),
          unit: 'B',
        },
        {
          scenario: s,
          metric: 'shared memory bytes/tuple (all)',
          value: +(r.sharedBytesPerTuple ?? 0).toFixed(1),
          unit: 'B',
        },
        { scenario: s, metric: 'RSS per 1M tuples (all included)', value: +(r.rssMBPer1M ?? 0).toFixed(1), unit: 'MB' },
        { scenario: s, metric: 'cold build from tuples', value: Math.round(r.buildMs ?? 0), unit: 'ms' },
        { scenario: s, metric: 'cold load from checkpoint', value: Math.round(r.checkpointLoadMs ?? 0), unit: 'ms' },
      );
    }
    return rows;
  },
};
