// The playground's "why" and its messages, in a real browser against a real latch: a Check that
// errors (a condition parameter missing from the context) shows the explanation tree and the
// failing node; a refused save names one 1-based line and column; the explanation's failing
// path is the chain of error nodes from the root.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { failingPath, type TraceNode } from '../../playground/src/explain.js';
import { api, HAVE_CHROMIUM, launch, MUST_RUN, openPage, serve, type Served } from './browser.js';

declare const document: { querySelector(selector: string): { textContent: string | null } | null };

const MODEL = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'document',
      relations: { viewer: { this: {} } },
      metadata: {
        relations: { viewer: { directly_related_user_types: [{ type: 'user', condition: 'in_office' }] } },
      },
    },
  ],
  conditions: {
    in_office: {
      name: 'in_office',
      expression: 'hour >= 9',
      parameters: { hour: { type_name: 'TYPE_NAME_INT' } },
    },
  },
};

it('failingPath follows the error nodes from the root', () => {
  const leaf: TraceNode = { kind: 'tuple', label: 't', outcome: 'error', error: 'missing hour' };
  const root: TraceNode = {
    kind: 'relation',
    label: 'document:a#viewer',
    outcome: 'error',
    children: [{ kind: 'direct', label: 'd', outcome: 'error', children: [leaf] }],
  };
  expect(failingPath(root).map((n) => n.kind)).toEqual(['relation', 'direct', 'tuple']);
  expect(failingPath({ ...root, outcome: 'denied' })).toEqual([]);
});

const run = HAVE_CHROMIUM || MUST_RUN ? describe : describe.skip;

run('the playground when things fail (Chromium)', () => {
  let browser: Browser;
  let server: Served;
  let page: Page;
  let storeId: string;

  beforeAll(async () => {
    browser = await launch();
    server = await serve();
    storeId = (await api<{ id: string }>(server.base, 'POST', '/stores', { name: 'why demo' })).id;
    await api(server.base, 'POST', `/stores/${storeId}/authorization-models`, MODEL);
    await api(server.base, 'POST', `/stores/${storeId}/write`, {
      writes: {
        tuple_keys: [{ user: 'user:anne', relation: 'viewer', object: 'document:a', condition: { name: 'in_office' } }],
      },
    });
    ({ page } = await openPage(browser, server.base));
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('a Check that errors shows the explanation tree with the failing node', async () => {
    await page.goto(`${server.base}/playground/?store=${storeId}#queries`);
    await page.fill('#check-user', 'user:anne');
    await page.fill('#check-relation', 'viewer');
    await page.fill('#check-object', 'document:a');
    await page.click('#check-run');
    await page.waitForFunction(
      () => document.querySelector('#check-verdict')?.textContent?.startsWith('Error') === true,
    );
    expect(await page.textContent('#check-verdict')).toMatch(/^Error: \w+/);
    expect(await page.locator('#why-tree .outcome-error').count()).toBeGreaterThan(0);
    expect(await page.textContent('#why-tree')).toContain('hour');
  });

  it('a refused save names one line and column, counted from 1', async () => {
    await page.goto(`${server.base}/playground/?store=${storeId}#model`);
    const text =
      'model\n  schema 1.1\n\ntype user\n\ntype document\n  relations\n    define viewer: [user]\n    define\n';
    await page.fill('#dsl-editor', text);
    await page.click('#save-model');
    await page.locator('#model-error').waitFor();
    const message = (await page.textContent('#model-error')) ?? '';
    const places = [...message.matchAll(/line (\d+)/gi)].map((m) => Number(m[1]));
    expect(places.length).toBe(1);
    expect(places[0]).toBeGreaterThanOrEqual(9); // the 1-based line of the bare `define`
  });
});

run('the playground signed in (Chromium)', () => {
  const KEY = 'playground-key-0123456789';
  let browser: Browser;
  let server: Served;
  let page: Page;
  let storeId: string;
  const authed = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const r = await fetch(server.base + path, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' },
    });
    return (await r.json()) as T;
  };

  beforeAll(async () => {
    browser = await launch();
    server = await serve({ auth: { mode: 'preshared', presharedKeys: [KEY] } });
    storeId = (await authed<{ id: string }>('POST', '/stores', { name: 'signed in' })).id;
    await authed('POST', `/stores/${storeId}/authorization-models`, MODEL);
    // Refused: an unknown relation.
    await authed('POST', `/stores/${storeId}/write`, {
      writes: { tuple_keys: [{ user: 'user:anne', relation: 'owner', object: 'document:a' }] },
    });
    ({ page } = await openPage(browser, server.base));
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('the model panel drops its bearer_token_missing error once the user signs in', async () => {
    await page.goto(`${server.base}/playground/?store=${storeId}#model`);
    await page.locator('#auth-dialog[open]').waitFor();
    // Before signing in, the model panel says why it shows nothing.
    await page.locator('.error[data-code="bearer_token_missing"]').first().waitFor({ state: 'attached' });
    await page.fill('#auth-key', KEY);
    await page.press('#auth-key', 'Enter');
    await page
      .locator('#auth-dialog[open]')
      .waitFor({ state: 'detached' })
      .catch(() => undefined);
    await page.waitForFunction(() => document.querySelector('.error[data-code="bearer_token_missing"]') === null);
    expect(await page.locator('.error[data-code="bearer_token_missing"]').count()).toBe(0);
  });

  it('the store log shows a refused write as refused, not as written', async () => {
    await page.click('#tab-changes');
    await page.locator('#store-log-search').waitFor();
    await page.click('#store-log-search');
    await page.waitForFunction(() => (document.querySelector('#store-log-body')?.textContent ?? '').includes('Write'));
    const text = (await page.textContent('#store-log-body')) ?? '';
    expect(text).toContain('refused: 1 to write, 0 to delete');
    expect(text).not.toContain('1 written');
  });
});
