// The playground with what the main flows leave out, in a real browser against a real latch: a
// conditioned tuple added through the form and Checks whose context the condition allows and
// denies; bad input shown where it happened with the server's code and message and the input
// kept as typed (a model the language library accepts and the server refuses, a malformed
// context, an unknown condition, a datastore that went away: 503 from latch on PostgreSQL); and
// the store log of an authenticated server with its search box.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startPostgres, type PostgresServer } from '../support/postgres-server.js';
import { api, HAVE_CHROMIUM, launch, MUST_RUN, openPage, screenshot, serve, type Served } from './browser.js';

interface PageElement {
  readonly textContent: string | null;
  readonly hidden?: boolean;
  getAttribute(name: string): string | null;
}
interface TableRow {
  readonly cells: ArrayLike<{ readonly textContent: string | null }>;
}
declare const document: {
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): { readonly length: number };
};

const CONDITIONED = `model
  schema 1.1

type user

type document
  relations
    define viewer: [user, user with in_office_hours]

condition in_office_hours(hour: int, start: int, end: int) {
  hour >= start && hour < end
}
`;

const run = HAVE_CHROMIUM || MUST_RUN ? describe : describe.skip;

/** Fills the add-tuple form and submits it. */
async function addTuple(
  page: Page,
  user: string,
  relation: string,
  object: string,
  condition = '',
  context = '',
): Promise<void> {
  await page.fill('#add-user', user);
  await page.fill('#add-relation', relation);
  await page.fill('#add-object', object);
  await page.fill('#add-condition', condition);
  await page.fill('#add-context', context);
  await page.click('#add-tuple button[type=submit]');
}

/** What the add-tuple form holds now. */
async function addForm(page: Page): Promise<string[]> {
  return Promise.all(
    ['#add-user', '#add-relation', '#add-object', '#add-condition', '#add-context'].map((s) => page.inputValue(s)),
  );
}

run('playground: conditions and bad input (Chromium)', () => {
  let browser: Browser;
  let server: Served;
  let page: Page;
  let external: string[];
  let errors: string[];
  let storeId = '';

  beforeAll(async () => {
    browser = await launch();
    server = await serve();
    ({ page, external, errors } = await openPage(browser, server.base));
    storeId = (await api<{ id: string }>(server.base, 'POST', '/stores', { name: 'conditions' })).id;
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it('saves a model with a condition; one the server refuses shows its code and message and stays as typed', async () => {
    await page.goto(`${server.base}/playground/?store=${storeId}#model`);
    // The language library parses a condition's CEL but does not compile it: this model passes its
    // checks, and latch refuses it.
    const refused = CONDITIONED.replace('hour >= start && hour < end', 'hour >= begin && hour < end');
    await page.fill('#dsl-editor', refused);
    await page.click('#save-model');
    await page.waitForFunction(() => document.querySelector('#model-error')?.hidden === false);
    expect(await page.textContent('#model-error')).toBe(
      "validation_error: failed to compile expression on condition 'in_office_hours': Unknown variable: begin",
    );
    expect(await page.inputValue('#dsl-editor')).toBe(refused);
    expect(
      (await api<{ authorization_models: unknown[] }>(server.base, 'GET', `/stores/${storeId}/authorization-models`))
        .authorization_models,
    ).toHaveLength(0);
    await screenshot(page, 'model-refused');
    // A model the library refuses is not sent: its own message, the text kept.
    const broken = CONDITIONED.replace(
      'define viewer: [user, user with in_office_hours]',
      'define viewer: [user, user with in_ofice_hours]',
    );
    await page.fill('#dsl-editor', broken);
    await page.click('#save-model');
    await page.waitForFunction(() => /in_ofice_hours/.test(document.querySelector('#model-error')?.textContent ?? ''));
    expect(await page.inputValue('#dsl-editor')).toBe(broken);
    // Fixed: saved.
    await page.fill('#dsl-editor', CONDITIONED);
    await page.waitForFunction(() => document.querySelector('#dsl-editor')?.getAttribute('aria-invalid') === 'false');
    await page.click('#save-model');
    await page.waitForFunction(
      () => document.querySelector('.model-panel .status')?.textContent?.startsWith('Saved as model') === true,
    );
    expect(await page.isHidden('#model-error')).toBe(true);
  });

  it('adds a conditioned tuple through the form; a bad context or condition is shown and kept', async () => {
    await page.click('#tab-tuples');
    // A context that is not JSON: refused in the page, nothing sent, the form as typed.
    await addTuple(page, 'user:anne', 'viewer', 'document:plan', 'in_office_hours', '{"start": 9, "end": }');
    await page.waitForFunction(() => document.querySelector('#add-error')?.hidden === false);
    expect(await page.textContent('#add-error')).toMatch(/^the condition context is not valid JSON: /);
    expect(await addForm(page)).toEqual([
      'user:anne',
      'viewer',
      'document:plan',
      'in_office_hours',
      '{"start": 9, "end": }',
    ]);
    // A condition the model does not define: the server's code and message.
    await addTuple(page, 'user:anne', 'viewer', 'document:plan', 'in_office', '{"start": 9, "end": 17}');
    await page.waitForFunction(() => /in_office\b/.test(document.querySelector('#add-error')?.textContent ?? ''));
    expect(await page.textContent('#add-error')).toMatch(/^validation_error: /);
    expect(await addForm(page)).toEqual([
      'user:anne',
      'viewer',
      'document:plan',
      'in_office',
      '{"start": 9, "end": 17}',
    ]);
    // Right: written with its condition and context, shown in the table.
    await addTuple(page, 'user:anne', 'viewer', 'document:plan', 'in_office_hours', '{"start": 9, "end": 17}');
    await page.waitForFunction(() => document.querySelectorAll('#tuples-body tr').length === 1);
    expect(await page.isHidden('#add-error')).toBe(true);
    expect(await page.textContent('#tuples-body tr td:nth-child(4)')).toBe('in_office_hours {"start":9,"end":17}');
    const read = await api<{ tuples: { key: unknown }[] }>(server.base, 'POST', `/stores/${storeId}/read`, {});
    expect(read.tuples.map((t) => t.key)).toEqual([
      {
        user: 'user:anne',
        relation: 'viewer',
        object: 'document:plan',
        condition: { name: 'in_office_hours', context: { start: 9, end: 17 } },
      },
    ]);
    await screenshot(page, 'tuple-condition');
  });

  it('runs Checks with a context the condition allows and one it denies', async () => {
    await page.click('#tab-queries');
    await page.fill('#check-user', 'user:anne');
    await page.fill('#check-relation', 'viewer');
    await page.fill('#check-object', 'document:plan');
    await page.fill('#check-context', '{"hour": 10}');
    await page.click('#check-run');
    await page.waitForFunction(() => document.querySelector('#check-verdict')?.textContent === 'Allowed');
    const chain = await page.locator('#why-chain li').allTextContents();
    expect(chain[chain.length - 1]).toContain('document:plan#viewer@user:anne');
    expect(chain.join('\n')).toContain('in_office_hours');
    await screenshot(page, 'check-condition');
    // Outside the hours: denied, the branch tried shown with its condition.
    await page.fill('#check-context', '{"hour": 20}');
    await page.click('#check-run');
    await page.waitForFunction(() => document.querySelector('#check-verdict')?.textContent === 'Denied');
    expect(await page.textContent('#why-tree')).toContain('in_office_hours');
    // The API agrees with what the page showed.
    const check = (hour: number): Promise<{ allowed: boolean }> =>
      api(server.base, 'POST', `/stores/${storeId}/check`, {
        tuple_key: { user: 'user:anne', relation: 'viewer', object: 'document:plan' },
        context: { hour },
      });
    expect([(await check(10)).allowed, (await check(20)).allowed]).toEqual([true, false]);
    // A context that is not an object: refused in the page, the inputs kept.
    await page.fill('#check-context', '[20]');
    await page.click('#check-run');
    await page.waitForFunction(() => document.querySelector('#check-error')?.hidden === false);
    expect(await page.textContent('#check-error')).toMatch(/context/);
    expect(await page.inputValue('#check-context')).toBe('[20]');
  });

  it('made no request outside 127.0.0.1 and raised no page error', () => {
    expect(external).toEqual([]);
    expect(errors).toEqual([]);
  });
});

run('playground: a datastore that went away (Chromium, PostgreSQL)', () => {
  let browser: Browser;
  let pg: PostgresServer;
  let server: Served;

  beforeAll(async () => {
    // An embedded server of this file's own, so that it can be stopped under latch.
    pg = await startPostgres();
    browser = await launch();
    server = await serve({ datastore: 'postgres', postgres: { url: pg.url, poolSize: 3, startTimeoutMs: 0 } });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await pg?.stop();
  });

  it('shows 503 unavailable where the write failed, keeps the form, and writes it once the database is back', async () => {
    const store = (await api<{ id: string }>(server.base, 'POST', '/stores', { name: 'outage' })).id;
    await api(server.base, 'POST', `/stores/${store}/authorization-models`, {
      schema_version: '1.1',
      type_definitions: [
        { type: 'user' },
        {
          type: 'document',
          relations: { viewer: { this: {} } },
          metadata: { relations: { viewer: { directly_related_user_types: [{ type: 'user' }] } } },
        },
      ],
    });
    const { page, external, errors } = await openPage(browser, server.base);
    await page.goto(`${server.base}/playground/?store=${store}#tuples`);
    await page.waitForFunction(() => document.querySelector('#tuples-page-info')?.textContent === 'No tuples match.');
    await pg.pause();
    try {
      await addTuple(page, 'user:anne', 'viewer', 'document:plan');
      await page.waitForFunction(() => document.querySelector('#add-error')?.hidden === false);
      expect(await page.textContent('#add-error')).toMatch(/^unavailable: the datastore is unavailable: /);
      expect(await addForm(page)).toEqual(['user:anne', 'viewer', 'document:plan', '', '']);
      await screenshot(page, 'server-error');
    } finally {
      await pg.resume();
    }
    // Back: the same form, submitted again as it was kept, is written.
    await page.click('#add-tuple button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('#tuples-body tr').length === 1, undefined, {
      timeout: 60_000,
    });
    expect(await page.isHidden('#add-error')).toBe(true);
    expect(await page.textContent('#tuples-body tr td:nth-child(3)')).toBe('document:plan');
    expect(external).toEqual([]);
    expect(errors).toEqual([]);
  }, 120_000);
});

run('playground: the store log (Chromium, auth mode preshared, logs kept)', () => {
  const KEY = 'playground-store-log-key-0123456789';
  let browser: Browser;
  let server: Served;

  beforeAll(async () => {
    browser = await launch();
    server = await serve({ auth: { mode: 'preshared', presharedKeys: [KEY], logRetentionDays: 7 } });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("lists the store's calls, newest first, and searches them; a refused search is shown and kept", async () => {
    const { page, external, errors } = await openPage(browser, server.base);
    await page.goto(`${server.base}/playground/`);
    await page.locator('#auth-dialog[open]').waitFor();
    await page.fill('#auth-key', KEY);
    await page.click('#auth-dialog button[type=submit]');
    await page.fill('#new-store-name', 'logged');
    await page.click('#create-store');
    await page.waitForFunction(
      () => (document.querySelector('#store-select') as { value?: string } | null)?.value !== '',
    );
    const store = await page.inputValue('#store-select');
    const headers = { Authorization: `Bearer ${KEY}`, 'Content-Type': 'application/json' };
    const model = await fetch(`${server.base}/stores/${store}/authorization-models`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        schema_version: '1.1',
        type_definitions: [
          { type: 'user' },
          {
            type: 'document',
            relations: { viewer: { this: {} } },
            metadata: { relations: { viewer: { directly_related_user_types: [{ type: 'user' }] } } },
          },
        ],
      }),
    });
    expect(model.status).toBe(201);
    // Two operations through the page: a write and a Check.
    await page.click('#tab-tuples');
    await addTuple(page, 'user:anne', 'viewer', 'document:log');
    await page.waitForFunction(() => document.querySelectorAll('#tuples-body tr').length === 1);
    await page.click('#tab-queries');
    await page.fill('#check-user', 'user:anne');
    await page.fill('#check-relation', 'viewer');
    await page.fill('#check-object', 'document:log');
    await page.click('#check-run');
    await page.waitForFunction(() => document.querySelector('#check-verdict')?.textContent === 'Allowed');

    await page.click('#tab-changes');
    await page.waitForFunction(() => document.querySelectorAll('#store-log-body tr').length > 0);
    const rows = async (): Promise<string[][]> =>
      page.$$eval('#store-log-body tr', (trs) =>
        trs.map((tr) => Array.from((tr as unknown as TableRow).cells, (td) => td.textContent ?? '')),
      );
    const all = await rows();
    const ops = all.map((r) => r[1]);
    // Newest first: the Check after the Write.
    expect(ops.indexOf('Check')).toBeGreaterThanOrEqual(0);
    expect(ops.indexOf('Check')).toBeLessThan(ops.indexOf('Write'));
    const write = all.find((r) => r[1] === 'Write') as string[];
    expect(write[3]).toBe('200');
    expect(write[4]).toBe('1 written, 0 deleted');
    expect(all.find((r) => r[1] === 'Check')?.[4]).toBe('user:anne viewer document:log');
    await screenshot(page, 'store-log');

    // Search: the writes only.
    await page.fill('#store-log-query', 'request.operation:Write');
    await page.click('#store-log-search');
    await page.waitForFunction(() =>
      /matching the search/.test(document.querySelector('#store-log-status')?.textContent ?? ''),
    );
    expect((await rows()).map((r) => r[1])).toEqual(['Write']);
    // A query the server refuses: its code and message where it happened, the query kept.
    await page.fill('#store-log-query', 'request.operation:"Write');
    await page.click('#store-log-search');
    await page.waitForFunction(() => document.querySelector('#store-log-error')?.hidden === false);
    expect(await page.textContent('#store-log-error')).toBe('validation_error: invalid query: unterminated quote');
    expect(await page.inputValue('#store-log-query')).toBe('request.operation:"Write');
    expect(external).toEqual([]);
    expect(errors).toEqual([]);
  });
});
