// Queries at a past revision (docs/audit.md) on a 1M-tuple store (100k with --quick) with 100k
// more revisions of history (10k with --quick): one change each, alternately deleting one of the
// original tuples and writing a new one. Measured: a Check at 1k and at 100k revisions back when
// its past view must be built (each at a revision not built before) and when the view is cached,
// and the p99 of live Checks offered open loop (2,000/s, latency from when each was due) alone and
// while past-view builds run beside them (same run, same process and event loop).
// Memory datastore; the data goes straight into storage, then the service loads it.

import { LatchService } from '../../src/engine/service.js';
import { DEFAULT_ENGINE_CONFIG } from '../../src/engine/config.js';
import type { CheckInput } from '../../src/engine/contract.js';
import type { TupleKey } from '../../src/domain/types.js';
import { dslToModel } from '../../src/model/dsl.js';
import { openStorage } from '../../src/storage/index.js';
import { verify, type Metric, type Scenario } from '../scenario.js';

const DSL = 'model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user]\n';
const USERS = 10;

function pct(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

const original = (i: number): TupleKey => ({ object: `doc:${i}`, relation: 'viewer', user: `user:${i % USERS}` });

/**
 * Live Checks offered open loop, one every 0.5 ms for `ms`: each one's latency counts from when it
 * was due, so time the event loop spent elsewhere (a past view being built) shows in it, as it
 * would for a request waiting on the socket. Sorted latencies in ms.
 */
async function liveLoop(latch: LatchService, input: (i: number) => CheckInput, ms: number): Promise<number[]> {
  const out: number[] = [];
  const start = performance.now();
  const count = Math.floor(ms / 0.5);
  for (let i = 0; i < count;) {
    const now = performance.now();
    for (; i < count && start + i * 0.5 <= now; i++) {
      await latch.check(input(i));
      out.push(performance.now() - (start + i * 0.5));
    }
    await new Promise<void>((r) => setImmediate(r));
  }
  return out.sort((a, b) => a - b);
}

export const pastRevision: Scenario = {
  name: 'past-revision',
  description: 'Check at 1k / 100k revisions back on a 1M-tuple store: view build, cached, and live Check p99 beside',
  async run(opts) {
    const n = opts.quick ? 100_000 : 1_000_000;
    const history = opts.quick ? 10_000 : 100_000;
    const storage = await openStorage({});
    const store = await storage.createStore('history');
    const model = await storage.writeModel(store.id, dslToModel(DSL));
    for (let i = 0; i < n; i += 10_000) {
      const writes: TupleKey[] = [];
      for (let j = i; j < Math.min(n, i + 10_000); j++) writes.push(original(j));
      await storage.writeTuples(store.id, { writes, deletes: [], onDuplicate: 'error', onMissing: 'error' });
    }
    const base = await storage.revision(store.id);
    for (let i = 0; i < history; i++) {
      const one = i % 2 === 0 ? { deletes: [original(i / 2)], writes: [] } : { deletes: [], writes: [original(n + i)] };
      await storage.writeTuples(store.id, { ...one, onDuplicate: 'error', onMissing: 'error' });
    }
    const head = await storage.revision(store.id);
    const progress = (what: string): void => void process.stderr.write(`past-revision: ${what}\n`);
    progress(`filled: ${n} tuples, revision ${head}`);
    const latch = new LatchService(storage, { ...DEFAULT_ENGINE_CONFIG }, undefined, { expirySweepMs: 0 });
    await latch.ready();
    const check = (i: number, at?: number): CheckInput => ({
      storeId: store.id,
      modelId: model.id,
      tupleKey: original(i),
      contextualTuples: [],
      consistency: 'UNSPECIFIED',
      ...(at === undefined ? {} : { at: { revision: at } }),
    });

    const metrics: Metric[] = [];
    const m = (metric: string, value: number, unit: string): void => {
      metrics.push({ scenario: 'past-revision', metric, value, unit });
    };
    for (const back of [1_000, history]) {
      const builds: number[] = [];
      for (let k = 0; k < 5; k++) {
        const at = head - back + k; // a revision not built before: the view is built
        // doc:0 was deleted by the first history revision: granted before it, refused after.
        const t = performance.now();
        const r = await latch.check(check(0, at));
        builds.push(performance.now() - t);
        progress(`check ${head - at} back: ${(performance.now() - t).toFixed(0)} ms`);
        verify(`doc:0 at ${at}`, r.allowed, at < base + 1);
        // The tuple deleted by revision `at + 1` exists at `at` and not at the head.
        const deletedNext = (at + 1 - base - 1) / 2;
        if (Number.isInteger(deletedNext)) {
          verify(`deleted after ${at}`, (await latch.check(check(deletedNext, at))).allowed, true);
          verify(`deleted now`, (await latch.check(check(deletedNext))).allowed, false);
        }
      }
      const cached: number[] = [];
      for (let k = 0; k < 200; k++) {
        const t = performance.now();
        await latch.check(check(n - 1 - k, head - back));
        cached.push(performance.now() - t);
      }
      builds.sort((a, b) => a - b);
      cached.sort((a, b) => a - b);
      const label = back === history ? `${history / 1000}k` : '1k';
      m(`check ${label} back, view built: p50`, pct(builds, 0.5), 'ms');
      m(`check ${label} back, view built: max`, builds[builds.length - 1] ?? 0, 'ms');
      m(`check ${label} back, view cached: p50`, pct(cached, 0.5), 'ms');
      m(`check ${label} back, view cached: p99`, pct(cached, 0.99), 'ms');
    }

    const live = (i: number): CheckInput => check((i * 7919) % n);
    const alone = await liveLoop(latch, live, opts.quick ? 2_000 : 5_000);
    let stop = false;
    let built = 0;
    const beside = (async (): Promise<void> => {
      for (let k = 10; !stop; k++) {
        await latch.check(check(k, head - 1_000 - (k % 500)));
        built++;
        // Requests arrive as separate macrotasks; the memory datastore alone would never yield.
        await new Promise<void>((r) => setImmediate(r));
      }
    })();
    const withPast = await liveLoop(latch, live, opts.quick ? 2_000 : 5_000);
    stop = true;
    await beside;
    m('live check alone: p50', pct(alone, 0.5) * 1000, 'µs');
    m('live check alone: p99', pct(alone, 0.99) * 1000, 'µs');
    m('live check beside 1k-back queries: p50', pct(withPast, 0.5) * 1000, 'µs');
    m('live check beside 1k-back queries: p99', pct(withPast, 0.99) * 1000, 'µs');
    m('past queries run beside', built, 'queries');
    await latch.close();
    return metrics;
  },
};
