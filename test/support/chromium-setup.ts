// vitest globalSetup of the browser tests (test/playground/): one Chromium per test run, started
// as a playwright browser server on 127.0.0.1 and handed to the test files as its WebSocket
// endpoint with `inject('latchChromiumEndpoint')` (test/playground/browser.ts connects to it);
// each file opens its own contexts and pages in it. Without Chromium the endpoint is empty and
// the browser suites skip (or fail under CI=true), as they did when each launched its own.

import { existsSync } from 'node:fs';
import { chromium, type BrowserServer } from 'playwright-core';
import type { TestProject } from 'vitest/node';
import { CHROMIUM, FLAGS } from './chromium.js';

declare module 'vitest' {
  export interface ProvidedContext {
    latchChromiumEndpoint: string;
  }
}

let server: BrowserServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  if (!existsSync(CHROMIUM)) {
    project.provide('latchChromiumEndpoint', '');
    return;
  }
  server = await chromium.launchServer({ executablePath: CHROMIUM, args: FLAGS, host: '127.0.0.1' });
  project.provide('latchChromiumEndpoint', server.wsEndpoint());
}

export async function teardown(): Promise<void> {
  await server?.close();
  server = undefined;
}
