// Shared fixtures of the browser tests: Debian's Chromium (one per run) driven by playwright-core, a real latch
// server (LevelDB in a temp dir) serving the built playground, and screenshots saved for
// docs/playground.md. Without Chromium the suites are skipped, except under CI=true where they fail.

import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { inject } from 'vitest';
import { CHROMIUM, FLAGS } from '../support/chromium.js';
import { startServer, type RunningServer, type ServerOptions } from '../../src/main.js';

// timedClick's function runs in the page; its globals are declared for this module only (the
// project type-checks for Node, without the DOM library).
declare const document: { querySelector(selector: string): { click(): void } | null };
declare class MutationObserver {
  constructor(callback: () => void);
  observe(target: unknown, options: { childList: boolean; subtree: boolean; characterData: boolean }): void;
  disconnect(): void;
}
declare function requestAnimationFrame(callback: () => void): number;

export const HAVE_CHROMIUM = existsSync(CHROMIUM);
/** Under CI a missing browser is a failure, never a skip. */
export const MUST_RUN = process.env.CI === 'true';
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/**
 * Where the browser tests save their screenshots: docs/playground/, which docs/playground.md
 * shows, when LATCH_UPDATE_SCREENSHOTS=1 (`npm run screenshots`); otherwise .tmp/screenshots/
 * (ignored by git), so that a test run leaves the working tree clean.
 */
export const SCREENSHOTS =
  process.env.LATCH_UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'playground') : join(ROOT, '.tmp', 'screenshots');

export function requireChromium(): void {
  if (!HAVE_CHROMIUM)
    throw new Error(`Chromium is missing at ${CHROMIUM} (apt-get install chromium, or set LATCH_CHROMIUM)`);
}

/**
 * The run's one Chromium (test/support/chromium-setup.ts): a connection to it, whose close()
 * drops this file's contexts and leaves the browser to the other files. Launched here only when
 * the run has no browser server (a config without the setup).
 */
export async function launch(): Promise<Browser> {
  requireChromium();
  const endpoint = inject('latchChromiumEndpoint');
  if (endpoint) return chromium.connect(endpoint);
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
}

export interface Served extends RunningServer {
  readonly base: string;
  readonly dir: string;
  stop(): Promise<void>;
}

/** latch on 127.0.0.1 (random port, LevelDB in a fresh temp dir, or `dataDir`) with the playground. */
export async function serve(options: ServerOptions = {}): Promise<Served> {
  const dir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'latch-playground-')));
  const server = await startServer({
    host: '127.0.0.1',
    port: 0,
    dataDir: dir,
    playground: { required: true },
    ...options,
  });
  const base = `http://127.0.0.1:${server.port}`;
  return Object.assign(server, {
    base,
    dir,
    async stop() {
      await server.close(1000);
      if (!options.dataDir) await rm(dir, { recursive: true, force: true });
    },
  });
}

/**
 * A page that records every request leaving 127.0.0.1:<port>, every page error, and every
 * Content-Security-Policy refusal (a console error, not a page error).
 */
export async function openPage(
  browser: Browser,
  base: string,
  width = 1280,
  height = 860,
): Promise<{ page: Page; external: string[]; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  const external: string[] = [];
  const errors: string[] = [];
  page.on('request', (r) => {
    if (!r.url().startsWith(base + '/') && !r.url().startsWith('data:')) external.push(r.url());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && m.text().includes('Content Security Policy')) errors.push(m.text());
  });
  return { page, external, errors };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`) });
}

/** JSON API call for setting up data and checking what the UI did. */
export async function api<T = unknown>(base: string, method: string, path: string, body?: unknown): Promise<T> {
  const r = await fetch(base + path, {
    method,
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: { 'Content-Type': 'application/json' },
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/**
 * Clicks `selector` inside the page and resolves with the milliseconds until the element
 * `watch` changed (a MutationObserver in the page: the browser's own clock, no polling).
 */
export async function timedClick(page: Page, selector: string, watch: string): Promise<number> {
  return page.evaluate(
    ([sel, w]) =>
      new Promise<number>((resolve, reject) => {
        const target = document.querySelector(w as string);
        const button = document.querySelector(sel as string);
        if (!target || !button) return reject(new Error(`missing ${sel} or ${w}`));
        const t0 = performance.now();
        const obs = new MutationObserver(() => {
          obs.disconnect();
          // The next frame: the new rows are laid out and painted by then.
          requestAnimationFrame(() => resolve(performance.now() - t0));
        });
        obs.observe(target, { childList: true, subtree: true, characterData: true });
        button.click();
      }),
    [selector, watch],
  );
}
