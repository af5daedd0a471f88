// Permission index maintenance under load (docs/permission-indexes.md, "Maintenance"): (1) a
// paced stream of 10-tuple writes into deep groups at a target rate of expansion events, with
// the index lag of every write measured on a connected ReadExpansions stream (write acknowledged
// → the time its revision was applied, which the revision's freshness event reports; and → the
// stream's delivery of that event) and the event-loop time the maintenance took; (2) the
// attack "one 100-tuple write that grants a 10,000-member group on an indexed relation": the
// longest event-loop stall while it is acknowledged and maintained, beside the same write with
// no index, and the time until the index holds the 1,000,000 triples. Every figure is checked.

import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { TupleKey } from '../../src/domain/types.js';
import type { EngineStats, Latch } from '../../src/engine/contract.js';
import { verify, type Metric } from '../scenario.js';

export interface Prepared {
  readonly latch: Latch;
  readonly storeId: string;
  readonly modelId: string;
}

/** The service's maintenance figures (event-loop time spent maintaining). */
export const maintenanceOf = (latch: Latch): EngineStats['permissionIndexes'] => latch.stats().permissionIndexes;

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? 0;
};
const r2 = (x: number): number => Math.round(x * 100) / 100;
const row = (metric: string, value: number, unit: string): Metric => ({
  scenario: 'permission-index',
  metric,
  value,
  unit,
});

/** The 10-tuple write `w` of the deep-groups throughput run (5 memberships, 5 doc grants). */
export function deepWrite(w: number, tag: string): TupleKey[] {
  const batch: TupleKey[] = [];
  for (let i = 0; i < 5; i++)
    batch.push({ object: `group:${(w * 5 + i) % 1000}`, relation: 'member', user: `user:${tag}-${w}-${i}` });
  for (let i = 0; i < 5; i++)
    batch.push({ object: `doc:${tag}-${w}-${i}`, relation: 'viewer', user: `group:${(w * 7 + i) % 1000}#member` });
  return batch;
}

/**
 * Paced writes for `seconds` at `eventsPerSec` expansion events (≈ `perWrite` events a write),
 * one index: lag p50/p99/max per write, events/s reached, maintenance share of the event loop.
 */
export async function sustained(
  p: Prepared,
  indexId: string,
  eventsPerSec: number,
  perWrite: number,
  seconds: number,
): Promise<Metric[]> {
  const { latch, storeId } = p;
  // Per acknowledged revision: its acknowledgement (Date.now(), the clock of freshness times).
  const ackAt = new Map<number, number>();
  /** The index lag: (the index applied the revision, as its freshness event reports) − ack. */
  const lags: number[] = [];
  /** The consumer's lag: (its stream delivered the revision's freshness) − ack. */
  const seen: number[] = [];
  const ac = new AbortController();
  let fresh = -1;
  const consumer = (async () => {
    for await (const e of latch.expansions(
      { storeId, indexId, modelId: p.modelId, heartbeatMs: 1000, lifetimeMs: 3_600_000 },
      ac.signal,
    )) {
      if (e.kind !== 'freshness') continue;
      const now = Date.now();
      for (let r = fresh + 1; r <= e.revision; r++) {
        const at = ackAt.get(r);
        if (at !== undefined) {
          lags.push(Math.max(0, e.at - at));
          seen.push(now - at);
          ackAt.delete(r);
        }
      }
      fresh = e.revision;
    }
  })();
  await latch.permissionIndexesCaughtUp(storeId);
  const before = (await latch.getPermissionIndex(storeId, indexId)).events;
  const stats0 = { ...maintenanceOf(latch) };
  const writesPerSec = eventsPerSec / perWrite;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let w = 0;
  while (performance.now() - t0 < seconds * 1000) {
    const due = t0 + (w * 1000) / writesPerSec;
    const wait = due - performance.now();
    // Each write in a turn of its own, as a server's requests arrive: a writer behind its pace
    // never holds the event loop for a run of writes.
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    else await new Promise((r) => setImmediate(r));
    const out = await latch.write({
      storeId,
      writes: deepWrite(w++, 'paced'),
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
    if (out.revision > fresh) ackAt.set(out.revision, Date.now());
    else {
      lags.push(0);
      seen.push(0);
    }
  }
  const writing = (performance.now() - t0) / 1000;
  await latch.permissionIndexesCaughtUp(storeId);
  const s = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  while (ackAt.size > 0) await new Promise((r) => setTimeout(r, 1));
  ac.abort();
  await consumer;
  const events = (await latch.getPermissionIndex(storeId, indexId)).events - before;
  const stats = maintenanceOf(latch);
  const busy = (stats.busyMs - stats0.busyMs) / 1000;
  verify('every paced write reached the stream', lags.length, w);
  return [
    row('paced: target expansion events/s', Math.round(eventsPerSec), 'events/s'),
    row('paced: expansion events/s written', Math.round(events / writing), 'events/s'),
    row('paced: expansion events/s maintained (until caught up)', Math.round(events / s), 'events/s'),
    row('paced: index lag p50 (write acked → index applied it)', r2(pct(lags, 0.5)), 'ms'),
    row('paced: index lag p99', r2(pct(lags, 0.99)), 'ms'),
    row('paced: index lag max', r2(Math.max(...lags)), 'ms'),
    row('paced: freshness on the stream p50 / p99 (write acked → event)', r2(pct(seen, 0.5)), 'ms'),
    row('paced:   … p99', r2(pct(seen, 0.99)), 'ms'),
    row(
      'paced: whole-process CPU per expansion event (writes, upkeep, stream)',
      r2((cpu.user + cpu.system) / events),
      'µs',
    ),
    row('paced: maintenance share of the event loop', r2((100 * busy) / s), '%'),
    row('paced: events per second of maintenance time', Math.round(events / busy), 'events/s'),
    row('paced: longest maintenance slice', r2(stats.longestMs), 'ms'),
  ];
}

/**
 * The attack: a 100-tuple write granting a 10,000-member group on doc#viewer, with `indexed`
 * or without an index; the longest event-loop stall until the write is acknowledged and
 * (indexed) maintained.
 */
export async function attack(p: Prepared, indexId: string | undefined): Promise<Metric[]> {
  const { latch, storeId } = p;
  for (let b = 0; b < 100; b++)
    await latch.write({
      storeId,
      writes: Array.from({ length: 100 }, (_, i) => ({
        object: 'group:big',
        relation: 'member',
        user: `user:big-${b * 100 + i}`,
      })),
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
  await latch.permissionIndexesCaughtUp(storeId);
  const before = indexId ? (await latch.getPermissionIndex(storeId, indexId)).expansions : 0;
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const t0 = performance.now();
  await latch.write({
    storeId,
    writes: Array.from({ length: 100 }, (_, d) => ({
      object: `doc:big-${d}`,
      relation: 'viewer',
      user: 'group:big#member',
    })),
    deletes: [],
    onDuplicate: 'error',
    onMissing: 'error',
  });
  const ack = performance.now() - t0;
  await latch.permissionIndexesCaughtUp(storeId);
  const done = performance.now() - t0;
  delay.disable();
  const label = indexId ? '1 index' : 'no index';
  const rows = [
    row(`attack (${label}): longest event-loop stall`, r2(delay.max / 1e6), 'ms'),
    row(`attack (${label}): write acknowledged`, r2(ack), 'ms'),
  ];
  if (indexId) {
    const got = (await latch.getPermissionIndex(storeId, indexId)).expansions - before;
    verify('attack triples', got, 1_000_000);
    rows.push(row('attack (1 index): 1,000,000 triples maintained after', r2(done), 'ms'));
  }
  return rows;
}
