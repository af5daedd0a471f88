// An HTTP thread's heap limits take effect although the process runs with the serve flags
// (src/cli/node-flags.ts), whose --max-semi-space-size V8 would otherwise take over a worker's
// resourceLimits; and the flag is back for isolates created afterwards.
import { execFileSync } from 'node:child_process';
import { expect, test } from 'vitest';
import { SERVE_NODE_FLAGS } from '../../src/cli/node-flags.js';

const threads = new URL('../../src/http/threads/threads.ts', import.meta.url).href;

// A worker that makes V8 grow its young generation (allocation that survives briefly), then
// reports the new space's size.
const churn = `
  const v8 = require('node:v8');
  let keep = [];
  for (let r = 0; r < 200; r++) {
    for (let i = 0; i < 100000; i++) { const o = { a: i, b: 'x' + i }; if (i % 50 === 0) keep.push(o); }
    if (keep.length > 20000) keep = keep.slice(10000);
  }
  const s = v8.getHeapSpaceStatistics().find((x) => x.space_name === 'new_space');
  require('node:worker_threads').parentPort.postMessage(s.space_size);`;

const script = `
  import { Worker } from 'node:worker_threads';
  import { THREAD_RESOURCE_LIMITS, withThreadHeapLimits } from ${JSON.stringify(threads)};
  const churn = ${JSON.stringify(churn)};
  const run = (resourceLimits) => new Promise((resolve, reject) => {
    const w = new Worker(churn, { eval: true, resourceLimits, execArgv: [] });
    w.once('message', (size) => void w.terminate().then(() => resolve(size)));
    w.once('error', reject);
  });
  const thread = await withThreadHeapLimits(() => run(THREAD_RESOURCE_LIMITS));
  const later = await run(THREAD_RESOURCE_LIMITS); // outside withThreadHeapLimits the flag wins
  process.stdout.write(JSON.stringify({ thread, later }));`;

test('a thread gets its 3 MB young generation under the serve flags, and the flag is set back after', () => {
  const out = execFileSync(
    process.execPath,
    [...SERVE_NODE_FLAGS, '--import', 'tsx', '--input-type=module', '-e', script],
    {
      encoding: 'utf8',
    },
  );
  const { thread, later } = JSON.parse(out) as { thread: number; later: number };
  const mb = 1024 * 1024;
  expect(thread).toBeLessThanOrEqual(2 * mb); // two semi-spaces of 1 MB
  // Created after withThreadHeapLimits returned: the process's 4 MB semi-spaces again.
  expect(later).toBeGreaterThan(2 * mb);
  expect(later).toBeLessThanOrEqual(8 * mb);
});
