// `latch serve` and the playground: on by default in auth mode none on loopback, off otherwise
// unless asked for; a real `latch serve` process serving it; in an authenticated mode the page
// asks for a key in a real browser and keeps it in memory only.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { parseServeArgs } from '../../src/cli/serve.js';
import { startLatch, type LatchProcess } from '../ops/process.js';
import { HAVE_CHROMIUM, launch, MUST_RUN, openPage, screenshot, serve, type Served } from './browser.js';

declare const document: {
  querySelector(selector: string): { readonly open?: boolean; readonly length?: number } | null;
  readonly cookie: string;
};
declare const localStorage: { readonly length: number };
declare const sessionStorage: { readonly length: number };

const KEY = 'playground-test-key-0123456789';

describe('--playground', () => {
  const option = (args: string[], env: Record<string, string> = {}) => parseServeArgs(args, env).server.playground;

  it('is on by default in auth mode none on loopback, and a missing build only warns then', () => {
    expect(option([])).toEqual({ required: false });
    expect(option(['--host', '::1'])).toEqual({ required: false });
  });

  it('is off by default elsewhere, and on when asked for (then a missing build fails the start)', () => {
    expect(option(['--auth-mode', 'preshared'], { LATCH_AUTH_PRESHARED_KEYS: KEY })).toBeUndefined();
    expect(option(['--host', '0.0.0.0', '--auth-allow-non-loopback'])).toBeUndefined();
    expect(option(['--auth-mode', 'preshared', '--playground'], { LATCH_AUTH_PRESHARED_KEYS: KEY })).toEqual({
      required: true,
    });
    expect(option([], { LATCH_PLAYGROUND: 'true' })).toEqual({ required: true });
    expect(option(['--playground=false'])).toBeUndefined();
    expect(() => option(['--playground=yes'])).toThrow(/--playground/);
  });
});

describe('latch serve', () => {
  const procs: LatchProcess[] = [];
  afterAll(async () => {
    for (const p of procs) {
      p.proc.kill('SIGTERM');
      await p.exited;
    }
  });

  it('serves /playground by default (auth mode none, loopback) and not in an authenticated mode unless asked', async () => {
    // Both processes start at once (each start is mostly Node's and the wasm's load).
    const [none, keyed] = await Promise.all([
      startLatch(['--datastore', 'memory']),
      startLatch(['--datastore', 'memory', '--auth-mode', 'preshared'], { LATCH_AUTH_PRESHARED_KEYS: KEY }),
    ]);
    procs.push(none, keyed);
    const page = await fetch(`${none.base}/playground`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<title>latch playground</title>');
    expect((await fetch(`${keyed.base}/playground`)).status).toBe(404);
  });

  const run = HAVE_CHROMIUM || MUST_RUN ? describe : describe.skip;
  run('in an authenticated mode (Chromium)', () => {
    let browser: Browser;
    let latch: LatchProcess;
    beforeAll(async () => {
      browser = await launch();
      latch = await startLatch(['--datastore', 'memory', '--auth-mode', 'preshared', '--playground'], {
        LATCH_AUTH_PRESHARED_KEYS: KEY,
      });
      procs.push(latch);
    });
    afterAll(async () => {
      await browser?.close();
    });

    it('exchanges client credentials for a token at /oauth/token (auth mode client-credentials)', async () => {
      let server: Served | undefined;
      try {
        server = await serve({
          auth: { mode: 'client-credentials', issuer: 'http://127.0.0.1/', audience: 'https://fga.example.test' },
        });
        const clients = server.auth.clients;
        if (!clients) throw new Error('client-credentials mode has no client store');
        const { client, secret } = await clients.create({
          storeId: '*',
          scopes: ['read:stores', 'create:stores', 'read:authorization_models'],
        });
        const { page, external, errors } = await openPage(browser, server.base);
        const tokenCalls: string[] = [];
        page.on('request', (r) => {
          if (r.url().endsWith('/oauth/token')) tokenCalls.push(r.postData() ?? '');
        });
        await page.goto(`${server.base}/playground/`);
        await page.locator('#auth-dialog[open]').waitFor();
        await page.fill('#auth-client-id', client.id);
        await page.fill('#auth-client-secret', secret);
        await page.click('#auth-dialog button[type=submit]');
        await page.fill('#new-store-name', 'with a client');
        await page.click('#create-store');
        await page.waitForFunction(
          () =>
            (
              document.querySelector('#store-select option:checked') as { readonly text?: string } | null
            )?.text?.startsWith('with a client') === true,
        );
        // One token for both calls (list and create): it is reused until it nears expiry.
        expect(tokenCalls).toHaveLength(1);
        expect(tokenCalls[0]).toContain('grant_type=client_credentials');
        expect(
          await page.evaluate(() => ({
            local: localStorage.length,
            session: sessionStorage.length,
            cookie: document.cookie,
          })),
        ).toEqual({ local: 0, session: 0, cookie: '' });
        expect(await page.inputValue('#auth-client-secret')).toBe('');
        expect(external).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await server?.stop();
      }
    });

    it('asks for a key, works with it, and keeps it in memory only', async () => {
      const { page, external, errors } = await openPage(browser, latch.base);
      await page.goto(`${latch.base}/playground/`);
      await page.locator('#auth-dialog').waitFor();
      expect(await page.evaluate(() => document.querySelector('#auth-dialog')?.open)).toBe(true);
      // The refused call is shown where it happened, with the server's code.
      expect(await page.textContent('.storebar .error')).toMatch(/^bearer_token_missing: /);
      await screenshot(page, 'sign-in');
      await page.fill('#auth-key', KEY);
      await page.click('#auth-dialog button[type=submit]');
      await page.fill('#new-store-name', 'with a key');
      await page.click('#create-store');
      await page.waitForFunction(
        () =>
          (
            document.querySelector('#store-select option:checked') as { readonly text?: string } | null
          )?.text?.startsWith('with a key') === true,
      );
      const stored = await page.evaluate(() => ({
        local: localStorage.length,
        session: sessionStorage.length,
        cookie: document.cookie,
      }));
      expect(stored).toEqual({ local: 0, session: 0, cookie: '' });
      expect(page.url()).not.toContain(KEY);
      expect(await page.inputValue('#auth-key')).toBe('');
      // A reload forgets it: the page asks again.
      await page.reload();
      await page.locator('#auth-dialog[open]').waitFor();
      expect(external).toEqual([]);
      expect(errors).toEqual([]);
    });
  });
});
