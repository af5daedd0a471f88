// The playground on a store of 1,000,000 tuples, in a real browser: the first render of the tuple
// table and each page after it must take under 200 ms, measured by the browser's own clock. The
// tuples are written straight into LevelDB through the storage layer (20,000 per batch) before the
// server opens the directory; that load takes most of this test's time (about 100 s on a shared
// two-core machine).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { openLevelStorage } from '../../src/storage/level.js';
import { HAVE_CHROMIUM, launch, MUST_RUN, openPage, screenshot, serve, timedClick, type Served } from './browser.js';

declare const document: { querySelectorAll(selector: string): { readonly length: number } };
declare const performance: { getEntriesByName(name: string): { readonly startTime: number }[] };

const TOTAL = 1_000_000;
const BATCH = 20_000;
const PAGES = 20;

async function load(dir: string): Promise<string> {
  const storage = await openLevelStorage(dir);
  try {
    const store = await storage.createStore('one million');
    await storage.writeModel(store.id, {
      schema_version: '1.1',
      type_definitions: [
        { type: 'user' },
        { type: 'document', relations: { viewer: { this: {} } }, metadata: { relations: { viewer: { directly_related_user_types: [{ type: 'user' }] } } } },
      ],
    });
    for (let i = 0; i < TOTAL; i += BATCH) {
      const writes = Array.from({ length: BATCH }, (_, j) => ({ user: `user:${(i + j) % 5000}`, relation: 'viewer', object: `document:${String(i + j).padStart(7, '0')}` }));
      await storage.writeTuples(store.id, { writes, deletes: [], onDuplicate: 'error', onMissing: 'error' });
    }
    return store.id;
  } finally {
    await storage.close();
  }
}

const run = HAVE_CHROMIUM || MUST_RUN ? describe : describe.skip;

run('playground on 1M tuples (Chromium)', () => {
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
    server = await serve({ dataDir: dir });
    await server.latch.ready();
    figures.push(`load ${(loaded / 1000).toFixed(1)} s, index ready ${((performance.now() - t0 - loaded) / 1000).toFixed(1)} s later`);
    browser = await launch();
  }, 600_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await rm(dir, { recursive: true, force: true });
    process.stdout.write(`playground on ${TOTAL.toLocaleString('en')} tuples: ${figures.join('; ')}\n`);
  });

  it('renders the first page of tuples and every next page in under 200 ms', async () => {
    const { page, external, errors } = await openPage(browser, server.base);
    // The first render, cold (a new browser context: no cache), five times: the machine is shared,
    // so the median is the figure; every run is reported.
    const firsts: number[] = [];
    for (let i = 0; i < 5; i++) {
      const cold = await openPage(browser, server.base);
      await cold.page.goto(`${server.base}/playground/?store=${storeId}#tuples`);
      await cold.page.waitForFunction(() => document.querySelectorAll('#tuples-body tr').length === 50);
      firsts.push(await cold.page.evaluate(() => performance.getEntriesByName('tuples-page')[0]?.startTime ?? -1));
      expect(cold.external).toEqual([]);
      await cold.page.context().close();
    }
    const firstMedian = [...firsts].sort((a, b) => a - b)[2] as number;
    figures.push(`first render (navigation start → first page in the DOM) ${firsts.map((t) => t.toFixed(0)).join(', ')} ms, median ${firstMedian.toFixed(0)} ms`);
    for (const t of firsts) expect(t).toBeGreaterThan(0);
    expect(firstMedian).toBeLessThan(200);
    await page.goto(`${server.base}/playground/?store=${storeId}#tuples`);
    await page.waitForFunction(() => document.querySelectorAll('#tuples-body tr').length === 50);
    const times: number[] = [];
    for (let i = 0; i < PAGES; i++) times.push(await timedClick(page, '#tuples-next', '#tuples-body'));
    expect(await page.textContent('#tuples-page-info')).toBe(`Page ${PAGES + 1} · tuples ${PAGES * 50 + 1}–${PAGES * 50 + 50}`);
    expect(await page.textContent('#tuples-body tr td:nth-child(3)')).toBe(`document:${String(PAGES * 50).padStart(7, '0')}`);
    // A filter deep into the store.
    await page.fill('#filter-object', 'document:0987654');
    times.push(await timedClick(page, '#tuples-search', '#tuples-body'));
    expect(await page.textContent('#tuples-body')).toContain('user:2654');
    await page.fill('#filter-object', '');
    times.push(await timedClick(page, '#tuples-search', '#tuples-body'));
    const sorted = [...times].sort((a, b) => a - b);
    figures.push(`${times.length} page renders: median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(1)} ms, max ${sorted.at(-1)?.toFixed(1)} ms`);
    for (const t of times) expect(t).toBeLessThan(200);
    await screenshot(page, 'one-million');
    expect(external).toEqual([]);
    expect(errors).toEqual([]);
  });
});
