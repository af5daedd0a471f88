// Paged (complete) ListObjects over 1M reachable objects through the service: the time to list
// every object page by page, the cost of a page served from the listing cache, and the cost of a
// page when a write lands before every page (each page then recomputes the complete answer). The
// same run measures the unpaged ListObjects (1,000 results) as the baseline.
// Shape: `doc:i#viewer@group:all#member` for 1M docs, `group:all#member@user:anne` (the data goes
// straight into storage, then the service loads it with one scan).

import { LatchService } from '../../src/engine/service.js';
import type { ListObjectsInput } from '../../src/engine/contract.js';
import type { TupleKey } from '../../src/domain/types.js';
import { dslToModel } from '../../src/model/dsl.js';
import { openStorage } from '../../src/storage/index.js';
import { verify, type Metric, type Scenario } from '../scenario.js';
import { DEFAULT_ENGINE_CONFIG } from '../../src/engine/config.js';

const DSL =
  'model\n  schema 1.1\ntype user\ntype group\n  relations\n    define member: [user]\ntype doc\n  relations\n    define viewer: [user, group#member]\n';

function pct(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

export const listPages: Scenario = {
  name: 'list-pages',
  description:
    'Paged ListObjects: all 1M objects page by page, cost per page from the cache and with a write before every page',
  async run(opts) {
    const n = opts.quick ? 100_000 : 1_000_000;
    const storage = await openStorage({});
    const store = await storage.createStore('pages');
    await storage.writeModel(store.id, dslToModel(DSL));
    await storage.writeTuples(store.id, {
      writes: [{ object: 'group:all', relation: 'member', user: 'user:anne' }],
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
    for (let i = 0; i < n; i += 10_000) {
      const writes: TupleKey[] = [];
      for (let j = i; j < Math.min(n, i + 10_000); j++)
        writes.push({ object: `doc:${j}`, relation: 'viewer', user: 'group:all#member' });
      await storage.writeTuples(store.id, { writes, deletes: [], onDuplicate: 'error', onMissing: 'error' });
    }
    const latch = new LatchService(storage, { ...DEFAULT_ENGINE_CONFIG, listPageDeadlineMs: 600_000 }, undefined, {
      expirySweepMs: 0,
    });
    await latch.ready();
    const input: ListObjectsInput = {
      storeId: store.id,
      contextualTuples: [],
      consistency: 'UNSPECIFIED',
      type: 'doc',
      relation: 'viewer',
      user: 'user:anne',
    };

    // Baseline: the unpaged request (OpenFGA's 1,000 results).
    const unpaged: number[] = [];
    for (let i = 0; i < 30; i++) {
      const t = performance.now();
      verify('unpaged 1000', (await latch.listObjects(input)).objects.length, 1000);
      unpaged.push(performance.now() - t);
    }

    // Every object, pages of 1,000: the first page computes and sorts the complete answer, the rest slice it.
    const perPage: number[] = [];
    let after: string | undefined;
    let total = 0;
    const t0 = performance.now();
    do {
      const t = performance.now();
      const r = await latch.listObjects({ ...input, page: { size: 1000, after } });
      perPage.push(performance.now() - t);
      total += r.objects.length;
      after = r.next;
    } while (after !== undefined);
    const all = performance.now() - t0;
    verify('paged total', total, n);

    // A write before every page: each page recomputes the complete answer at the new revision.
    const churn: number[] = [];
    after = undefined;
    for (let i = 0; i < (opts.quick ? 5 : 10); i++) {
      await latch.write({
        storeId: store.id,
        writes: [{ object: `doc:w${i}`, relation: 'viewer', user: 'user:anne' }],
        deletes: [],
        onDuplicate: 'error',
        onMissing: 'error',
      });
      const t = performance.now();
      const r = await latch.listObjects({ ...input, page: { size: 1000, after } });
      churn.push(performance.now() - t);
      after = r.next;
    }
    await latch.close();

    const cached = perPage.slice(1).sort((a, b) => a - b);
    unpaged.sort((a, b) => a - b);
    churn.sort((a, b) => a - b);
    const s = `list-pages-${n / 1e6}M`;
    const ms = (v: number): number => +v.toFixed(3);
    return [
      { scenario: s, metric: 'all objects, pages of 1000', value: Math.round(all), unit: 'ms' },
      { scenario: s, metric: 'pages', value: perPage.length, unit: 'pages' },
      { scenario: s, metric: 'first page (walk + sort)', value: Math.round(perPage[0] ?? 0), unit: 'ms' },
      { scenario: s, metric: 'cached page p50', value: ms(pct(cached, 0.5)), unit: 'ms' },
      { scenario: s, metric: 'cached page p99', value: ms(pct(cached, 0.99)), unit: 'ms' },
      { scenario: s, metric: 'page after a write p50', value: Math.round(pct(churn, 0.5)), unit: 'ms' },
      { scenario: s, metric: 'unpaged 1000 p50 (baseline)', value: ms(pct(unpaged, 0.5)), unit: 'ms' },
    ] satisfies Metric[];
  },
};
