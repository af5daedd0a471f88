// The playground on a large store (200,000 tuples in `npm test`, 1,000,000 for the recorded
// figures and screenshots: LATCH_PLAYGROUND_TUPLES or `npm run screenshots`), in a real browser, timed by the browser's own
// clock: the first render of the tuple table (navigation start → first page in the DOM) and each
// next page, against a store of 1,100 tuples on the same server in the same run: the size of the
// store must add nothing that shows, so each figure is at most twice its baseline (a ratio, not an
// absolute time: the absolute target, 200 ms, is a recorded figure in bench/RESULTS.md). This
// machine is shared: the first render is the best of several cold loads, and the figures are
// printed with the load average (docs/playground.md, "Responsiveness"). The tuples are written
// straight into LevelDB through the storage layer's bulk import (importTuples, 20,000 per chunk:
// half the CPU of as many writeTuples batches) before the server opens the directory.

import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { openLevelStorage } from '../../src/storage/level.js';
import {
  api,
  HAVE_CHROMIUM,
  launch,
  MUST_RUN,
  openPage,
  screenshot,
  serve,
  timedClick,
  type Served,
} from './browser.js';

declare const document: { querySelectorAll(selector: string): { readonly length: number } };

const MODEL = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'document',
      relations: { viewer: { this: {} } },
      metadata: { relations: { viewer: { directly_related_user_types: [{ type: 'user' }] } } },
    },
  ],
};
/**
 * The large store's size: 182 times the baseline's already shows any cost that grows with the
 * store; the recorded figures (docs/playground.md) are taken on 1,000,000.
 */
const TOTAL =
  Number(process.env.LATCH_PLAYGROUND_TUPLES) || (process.env.LATCH_UPDATE_SCREENSHOTS === '1' ? 1_000_000 : 200_000);
const LABEL = TOTAL >= 1_000_000 && TOTAL % 1_000_000 === 0 ? `${TOTAL / 1_000_000}M` : TOTAL.toLocaleString('en');
/** An object deep into the large store, and its user (as load() writes them). */
const DEEP = TOTAL - 12_346;
const BATCH = 20_000;
const PAGES = 20;
/**
 * Cold loads per store for the first render; its figure is the best of them. Each costs about
 * 0.4 s of CPU (a new browser context, the app loaded and run). The best of 8 gave a ratio of 0.81
 * at load 22-24 and the best of 15 one of 1.48 at load 27-30, where single loads varied fivefold.
 */
const COLD = 8;
/** How much slower than on the 1,100-tuple store the large store may render (first render, pages). */
const AT_MOST = 2;

async function load(dir: string): Promise<string> {
  const storage = await openLevelStorage(dir);
  try {
    const store = await storage.createStore('one million');
    await storage.writeModel(store.id, MODEL);
    for (let i = 0; i < TOTAL; i += BATCH) {
      const writes = Array.from({ length: BATCH }, (_, j) => ({
        user: `user:${(i + j) % 5000}`,
        relation: 'viewer',
        object: `document:${String(i + j).padStart(7, '0')}`,
      }));
      await storage.importTuples(store.id, writes);
    }
    return store.id;
  } finally {
    await storage.close();
  }
}

function median(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
}

function list(xs: readonly number[] | undefined): string {
  return (xs ?? []).map((t) => t.toFixed(0)).join(', ');
}

const load1 = (): string =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

/**
 * The time of the first `tuples-page` mark, awaited in the page with a PerformanceObserver: no
 * polling script of the test runs in the page while it renders.
 */
function firstPageMark(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        new PerformanceObserver((entries, observer) => {
          const mark = entries.getEntriesByName('tuples-page')[0];
          if (!mark) return;
          observer.disconnect();
          resolve(mark.startTime);
        }).observe({ type: 'mark', buffered: true });
      }),
  );
}

const run = HAVE_CHROMIUM || MUST_RUN ? describe : describe.skip;

run(`playground on ${LABEL} tuples (Chromium)`, () => {
  let browser: Browser;
  let server: Served;
  let dir: string;
  let storeId: string;
  const figures: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'latch-playground-1m-'));
    const t0 = performance.now();
    storeId = await load(dir);
    const loaded = performance.now() - t0;
    // A first start scans the tuples into the index and checkpoints it at the graceful stop; the
    // measured server then starts from that checkpoint, as a restarted latch does, with no
    // background checkpoint copying competing with the page.
    const first = await serve({ dataDir: dir });
    await first.latch.ready();
    await first.stop();
    const t1 = performance.now();
    server = await serve({ dataDir: dir });
    await server.latch.ready();
    figures.push(
      `load ${(loaded / 1000).toFixed(1)} s, first index build and checkpoint ${((t1 - t0 - loaded) / 1000).toFixed(1)} s, restart ${((performance.now() - t1) / 1000).toFixed(1)} s`,
    );
    browser = await launch();
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
    process.stdout.write(`playground on ${TOTAL.toLocaleString('en')} tuples: ${figures.join('; ')}\n`);
  });

  it(`renders the first page and each next page of ${LABEL} tuples as fast as of 1,100 tuples`, async () => {
    // The baseline, on the same server in the same run: a store of 1,100 tuples (22 pages).
    const small = await api<{ id: string }>(server.base, 'POST', '/stores', { name: 'baseline' });
    await api(server.base, 'POST', `/stores/${small.id}/authorization-models`, MODEL);
    for (let i = 0; i < 1100; i += 100) {
      const tuple_keys = Array.from({ length: 100 }, (_, j) => ({
        user: `user:${(i + j) % 5000}`,
        relation: 'viewer',
        object: `document:${String(i + j).padStart(7, '0')}`,
      }));
      await api(server.base, 'POST', `/stores/${small.id}/write`, { writes: { tuple_keys } });
    }
    // First render, cold (a new browser context, no cache), alternating the two stores. The machine
    // is shared: each store's best run is its figure (as bench/storage-load.ts does).
    const firsts: Record<string, number[]> = { [storeId]: [], [small.id]: [] };
    const loadBefore = load1();
    for (let i = 0; i < COLD; i++) {
      for (const id of [small.id, storeId]) {
        const cold = await openPage(browser, server.base);
        const reads: string[] = [];
        cold.page.on('request', (r) => {
          if (r.url().endsWith('/read')) reads.push(r.url());
        });
        await cold.page.goto(`${server.base}/playground/?store=${id}#tuples`);
        const t = await firstPageMark(cold.page);
        expect(await cold.page.locator('#tuples-body tr').count()).toBe(50);
        expect(t).toBeGreaterThan(0);
        firsts[id]?.push(t);
        // One Read: the page's early request, taken by the app (no second request for the same page).
        expect(reads).toHaveLength(1);
        expect(cold.external).toEqual([]);
        expect(cold.errors).toEqual([]);
        await cold.page.context().close();
      }
    }
    const bigFirst = Math.min(...(firsts[storeId] as number[]));
    const smallFirst = Math.min(...(firsts[small.id] as number[]));
    figures.push(
      `first render (navigation start → first page in the DOM), best of ${COLD} cold loads: ${bigFirst.toFixed(0)} ms on ${LABEL} tuples [${list(firsts[storeId])}], ${smallFirst.toFixed(0)} ms on 1,100 [${list(firsts[small.id])}]; load average ${loadBefore} before, ${load1()} after`,
    );
    expect(bigFirst).toBeLessThanOrEqual(smallFirst * AT_MOST);
    // Twenty pages on each store, then a filter deep into the big one.
    const pages = async (id: string): Promise<{ page: Page; times: number[] }> => {
      const { page, external, errors } = await openPage(browser, server.base);
      await page.goto(`${server.base}/playground/?store=${id}#tuples`);
      await page.waitForFunction(() => document.querySelectorAll('#tuples-body tr').length === 50);
      const times: number[] = [];
      for (let i = 0; i < PAGES; i++) times.push(await timedClick(page, '#tuples-next', '#tuples-body'));
      expect(await page.textContent('#tuples-page-info')).toBe(
        `Page ${PAGES + 1} · tuples ${PAGES * 50 + 1}–${PAGES * 50 + 50}`,
      );
      expect(await page.textContent('#tuples-body tr td:nth-child(3)')).toBe(
        `document:${String(PAGES * 50).padStart(7, '0')}`,
      );
      expect(external).toEqual([]);
      expect(errors).toEqual([]);
      return { page, times };
    };
    const base = await pages(small.id);
    const big = await pages(storeId);
    await big.page.fill('#filter-object', `document:${String(DEEP).padStart(7, '0')}`);
    big.times.push(await timedClick(big.page, '#tuples-search', '#tuples-body'));
    expect(await big.page.textContent('#tuples-body')).toContain(`user:${DEEP % 5000}`);
    await screenshot(big.page, 'one-million');
    figures.push(
      `page renders (click → rows replaced and painted): median ${median(big.times).toFixed(1)} ms, max ${Math.max(...big.times).toFixed(1)} ms on ${LABEL} tuples (${big.times.length}); median ${median(base.times).toFixed(1)} ms, max ${Math.max(...base.times).toFixed(1)} ms on 1,100 (${base.times.length})`,
    );
    expect(median(big.times)).toBeLessThanOrEqual(median(base.times) * AT_MOST);
  }, 180_000);
});
