// docs/embedded.md stays true: its worked example runs against the real engine and prints
// exactly the output the page shows.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, it } from 'vitest';

it('the worked example of docs/embedded.md prints its documented output', () => {
  const doc = readFileSync('docs/embedded.md', 'utf8');
  const section = doc.slice(doc.indexOf('## Worked example'));
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  const output = /```text\n([\s\S]*?)```/.exec(section)?.[1];
  expect(code).toBeDefined();
  expect(output).toBeDefined();
  const dir = mkdtempSync(join(tmpdir(), 'latch-doc-'));
  try {
    const file = join(dir, 'example.mts');
    writeFileSync(file, (code as string).replace("from 'latch'", `from '${resolve('src/latch.ts')}'`));
    const run = spawnSync(process.execPath, ['--import', 'tsx', file], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(output);
    expect(run.status).toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it("package.json's entries resolve to the built embedded API and client (npm run build first)", () => {
  const script = [
    "const api = await import('latch');",
    "const client = await import('latch/client');",
    'console.log(JSON.stringify([Object.keys(api).sort(), typeof client.LatchChannelClient]));',
  ].join('\n');
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(run.stderr).toBe('');
  expect(JSON.parse(run.stdout)).toEqual([
    ['AppError', 'dslToModel', 'listAllObjects', 'listAllUsers', 'modelToDsl', 'openLatch'],
    'function',
  ]);
});
