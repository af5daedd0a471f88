// The V8 flags latch serves with (src/cli/node-flags.ts): `npm start` passes exactly them, and
// this Node accepts them and caps the young generation as intended.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { SERVE_ENV, SERVE_NODE_FLAGS } from '../../src/cli/node-flags.js';

const serveEnv = Object.entries(SERVE_ENV).map(([k, v]) => `${k}=${v}`);

test('npm start runs `latch serve` with SERVE_NODE_FLAGS and SERVE_ENV', () => {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    scripts: Record<string, string>;
  };
  expect(pkg.scripts.start).toBe(`${serveEnv.join(' ')} node ${SERVE_NODE_FLAGS.join(' ')} bin/latch.js serve`);
});

test('the Dockerfile and the systemd unit start it with the same flags and environment', () => {
  const read = (f: string): string => readFileSync(new URL(`../../deploy/${f}`, import.meta.url), 'utf8');
  const docker = read('Dockerfile');
  const unit = read('latch.service');
  expect(serveEnv.length).toBeGreaterThan(0);
  for (const kv of serveEnv) {
    expect(docker).toMatch(new RegExp(`^ENV .*\\b${kv}\\b`, 'm'));
    expect(unit).toMatch(new RegExp(`^Environment=${kv}$`, 'm'));
  }
  for (const f of SERVE_NODE_FLAGS) {
    expect(docker).toMatch(new RegExp(`^ENTRYPOINT \\[.*"${f}"`, 'm'));
    expect(unit).toMatch(new RegExp(`^ExecStart=.* ${f} `, 'm'));
  }
});

test('this Node accepts the flags, and the young generation stays within the 4 MB semi-space ceiling under churn', () => {
  // Allocation that survives briefly is what makes V8 grow the young generation.
  const churn = `
    const v8 = require('node:v8');
    let keep = [];
    for (let r = 0; r < 200; r++) {
      for (let i = 0; i < 100000; i++) { const o = { a: i, b: 'x' + i }; if (i % 50 === 0) keep.push(o); }
      if (keep.length > 20000) keep = keep.slice(10000);
    }
    const s = v8.getHeapSpaceStatistics().find((x) => x.space_name === 'new_space');
    process.stdout.write(String(s.space_size));`;
  const sized = (flags: readonly string[]): number =>
    Number(execFileSync(process.execPath, [...flags, '-e', churn], { encoding: 'utf8' }));
  const mb = 1024 * 1024;
  expect(sized(SERVE_NODE_FLAGS)).toBeLessThanOrEqual(8 * mb); // two semi-spaces of ≤ 4 MB
});
