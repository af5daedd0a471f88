// The model editor's Impact view in a real browser against a real latch (LevelDB): the unsaved
// model of docs/changing-models.md's worked example shows its structural changes, the rejected
// tuple, the changed assertion, the per-relation table and bob's lost editor grant, and nothing
// is written; an invalid candidate shows the server's refusal.

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { api, HAVE_CHROMIUM, launch, MUST_RUN, openPage, screenshot, serve, type Served } from './browser.js';

const BASE = readFileSync('test/fixtures/impact/base.fga', 'utf8');
const CANDIDATE = readFileSync('test/fixtures/impact/candidate.fga', 'utf8');
const TUPLES = [
  ['group:eng', 'member', 'user:anne'],
  ['group:eng', 'member', 'group:leads#member'],
  ['group:leads', 'member', 'user:bob'],
  ['folder:plans', 'viewer', 'group:eng#member'],
  ['doc:roadmap', 'parent', 'folder:plans'],
  ['doc:roadmap', 'owner', 'user:carl'],
  ['doc:roadmap', 'editor', 'group:leads#member'],
].map(([object, relation, user]) => ({ object, relation, user }));

const run = HAVE_CHROMIUM || MUST_RUN ? describe : describe.skip;

run('playground: impact of the unsaved model (Chromium)', () => {
  let browser: Browser;
  let server: Served;
  let page: Page;
  let errors: string[];
  let external: string[];
  let storeId = '';
  let modelId = '';

  beforeAll(async () => {
    browser = await launch();
    server = await serve();
    ({ page, errors, external } = await openPage(browser, server.base));
    storeId = (await api<{ id: string }>(server.base, 'POST', '/stores', { name: 'impact view' })).id;
    // The base model goes in through the editor's own save, as a user would.
    await page.goto(`${server.base}/playground/?store=${storeId}#model`);
    await page.fill('#dsl-editor', BASE);
    await page.click('#save-model');
    await page.waitForFunction(() =>
      (globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }).document
        .querySelector('.model-panel .status')
        ?.textContent.startsWith('Saved as model'),
    );
    const models = await api<{ authorization_models: { id: string }[] }>(
      server.base,
      'GET',
      `/stores/${storeId}/authorization-models`,
    );
    modelId = models.authorization_models[0]?.id ?? '';
    await api(server.base, 'POST', `/stores/${storeId}/write`, { writes: { tuple_keys: TUPLES } });
    await api(server.base, 'PUT', `/stores/${storeId}/assertions/${modelId}`, {
      assertions: [{ tuple_key: { object: 'doc:roadmap', relation: 'editor', user: 'user:bob' }, expectation: true }],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('shows who gains and who loses before saving, and writes nothing', async () => {
    await page.fill('#dsl-editor', CANDIDATE);
    await page.click('#impact-model');
    await page.locator('#impact-summary').waitFor();
    const notes = await page.locator('#impact-notes li').allTextContents();
    expect(notes).toContain('+ doc#blocked: [user]');
    expect(notes).toContain('~ doc#editor: [user, group#member] or owner → [user] or owner');
    expect(notes).toContain('rejected tuples (restriction_removed): 1, e.g. doc:roadmap#editor@group:leads#member');
    expect(notes).toContain('assertion doc:roadmap#editor@user:bob expects true: allowed → denied (FAILS)');
    expect(await page.locator('#impact-pairs li').allTextContents()).toEqual(['− user:bob editor doc:roadmap']);
    const editorRow = await page
      .locator('#impact-summary tr', { hasText: 'doc#editor' })
      .locator('td')
      .allTextContents();
    expect(editorRow).toEqual(['doc#editor', 'changed', '1', '0', '1', '0']);
    expect(await page.textContent('#impact-status')).toBe(
      '0 gained, 1 lost, 0 undetermined; 1 tuple(s) read differently; 1 assertion(s) change',
    );
    await screenshot(page, 'model-impact');
    const models = await api<{ authorization_models: unknown[] }>(
      server.base,
      'GET',
      `/stores/${storeId}/authorization-models`,
    );
    expect(models.authorization_models).toHaveLength(1);
    // The editor keeps the unsaved text.
    expect(await page.inputValue('#dsl-editor')).toBe(CANDIDATE);
  });

  it("shows the server's refusal of a candidate the language library accepts", async () => {
    // `viewer: [user] or viewer` parses, but the server refuses it (a relation referring to itself).
    await page.fill(
      '#dsl-editor',
      'model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user] or viewer\n',
    );
    await page.click('#impact-model');
    await page.locator('#model-error').waitFor();
    expect(await page.textContent('#model-error')).toMatch(/^[a-z_]+: /);
    expect(errors).toEqual([]);
    expect(external).toEqual([]);
  });
});
