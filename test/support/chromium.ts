// Where the browser tests find Chromium and the flags they launch it with (shared by the one
// browser server of a run, test/support/chromium-setup.ts, and test/playground/browser.ts).

export const CHROMIUM = process.env.LATCH_CHROMIUM ?? '/usr/bin/chromium';
/** The launch flags these machines need (no sandbox, no GPU, no background traffic). */
export const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];
