// The model editor's Shadow box in a real browser against a real latch (LevelDB): the worked
// example's candidate attached as the shadow, a Check the candidate answers differently, and the
// report with that disagreement; then clearing it; an unknown model shows the server's 404 code.

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { dslToModel } from '../../src/model/dsl.js';
import { api, HAVE_CHROMIUM, launch, MUST_RUN, openPage, screenshot, serve, type Served } from './browser.js';

const BASE = dslToModel(readFileSync('test/fixtures/impact/base.fga', 'utf8'));
const CANDIDATE = dslToModel(readFileSync('test/fixtures/impact/candidate.fga', 'utf8'));
const TUPLES = [
  ['group:leads', 'member', 'user:bob'],
  ['doc:roadmap', 'editor', 'group:leads#member'],
].map(([object, relation, user]) => ({ object, relation, user }));

const run = HAVE_CHROMIUM || MUST_RUN ? describe : describe.skip;

run('playground: shadow evaluation box (Chromium)', () => {
  let browser: Browser;
  let server: Served;
  let page: Page;
  let errors: string[];
  let storeId = '';
  let candidate = '';

  beforeAll(async () => {
    browser = await launch();
    server = await serve();
    ({ page, errors } = await openPage(browser, server.base));
    storeId = (await api<{ id: string }>(server.base, 'POST', '/stores', { name: 'shadow view' })).id;
    const write = async (m: unknown): Promise<string> =>
      (await api<{ authorization_model_id: string }>(server.base, 'POST', `/stores/${storeId}/authorization-models`, m))
        .authorization_model_id;
    candidate = await write(CANDIDATE);
    await write(BASE);
    await api(server.base, 'POST', `/stores/${storeId}/write`, { writes: { tuple_keys: TUPLES } });
    await page.goto(`${server.base}/playground/?store=${storeId}#model`);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('attaches the shadow, shows a disagreement, clears it', async () => {
    await page.click('#model-shadow summary');
    await page.fill('#shadow-model', candidate);
    await page.fill('#shadow-sampling', '1');
    await page.click('#shadow-set');
    await page.waitForFunction(() =>
      (globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }).document
        .querySelector('#shadow-status')
        ?.textContent.startsWith('Shadow '),
    );
    const check = await api<{ allowed: boolean }>(server.base, 'POST', `/stores/${storeId}/check`, {
      tuple_key: { user: 'user:bob', relation: 'editor', object: 'doc:roadmap' },
    });
    expect(check.allowed).toBe(true);
    await expect
      .poll(async () => {
        await page.click('#shadow-refresh');
        return page.locator('#shadow-records li').allTextContents();
      })
      .toEqual([expect.stringMatching(/^check doc:roadmap#editor@user:bob at revision 1: true → shadow false$/)]);
    expect(await page.textContent('#shadow-status')).toBe(
      `Shadow ${candidate} at sampling 1: 1 evaluated, 1 disagreements, 0 dropped`,
    );
    await screenshot(page, 'model-shadow');
    await page.click('#shadow-clear');
    await expect.poll(() => page.textContent('#shadow-status')).toMatch(/^No shadow: 1 evaluated/);
  });

  it("shows the server's code for a model that is not the store's", async () => {
    await page.fill('#shadow-model', '01ARZ3NDEKTSV4RRFFQ69G5FAV');
    await page.click('#shadow-set');
    await page.locator('#model-error').waitFor();
    expect(await page.textContent('#model-error')).toMatch(/^shadow_model_not_found: /);
    expect(errors).toEqual([]);
  });
});
