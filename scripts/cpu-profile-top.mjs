#!/usr/bin/env node
// Summarises a V8 .cpuprofile (from LATCH_TEST_CPU_PROF, test/support/cpu-log.ts, or node
// --cpu-prof): self time by area (src/, test/, vitest and vite, other packages, Node internals,
// GC, idle) and the functions with the most self time.
//
// Usage: node scripts/cpu-profile-top.mjs <file.cpuprofile> [count]

import { readFileSync } from 'node:fs';
import path from 'node:path';

const [file, countArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node scripts/cpu-profile-top.mjs <file.cpuprofile> [count]');
  process.exit(2);
}
const count = Number(countArg ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const root = process.cwd();

/** Microseconds of self time per node id, from the sample intervals. */
const self = new Map();
const { samples, timeDeltas } = profile;
for (let i = 0; i < samples.length; i++) {
  const dt = timeDeltas[i + 1] ?? 0;
  self.set(samples[i], (self.get(samples[i]) ?? 0) + dt);
}

function area(url, name) {
  if (name === '(garbage collector)') return 'GC';
  if (name === '(idle)') return 'idle';
  if (name === '(program)') return 'program';
  if (!url) return 'native / builtin';
  if (url.startsWith('node:')) return 'node internals';
  const rel = url.replace(/^file:\/\//, '');
  if (rel.includes('/node_modules/')) {
    const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(rel);
    const pkg = m ? m[1] : 'node_modules';
    return /^(vitest|vite|@vitest\/.*|tinypool|esbuild|rollup)$/.test(pkg) ? `vitest/vite (${pkg})` : pkg;
  }
  const r = path.relative(root, rel);
  return r.split('/')[0] ?? r;
}

const byArea = new Map();
const byFn = new Map();
let total = 0;
for (const n of profile.nodes) {
  const us = self.get(n.id) ?? 0;
  if (us === 0) continue;
  total += us;
  const { functionName, url, lineNumber } = n.callFrame;
  const a = area(url, functionName);
  byArea.set(a, (byArea.get(a) ?? 0) + us);
  const where = url ? `${path.relative(root, url.replace(/^file:\/\//, ''))}:${lineNumber + 1}` : '';
  const key = `${functionName || '(anonymous)'} ${where}`;
  byFn.set(key, (byFn.get(key) ?? 0) + us);
}
const ms = (us) => (us / 1000).toFixed(0).padStart(7);
const pct = (us) => ((100 * us) / total).toFixed(1).padStart(5);
console.log(`total ${ms(total)} ms sampled`);
console.log('\nby area:');
for (const [a, us] of [...byArea].sort((x, y) => y[1] - x[1])) console.log(`${ms(us)} ms ${pct(us)} %  ${a}`);
console.log(`\ntop ${count} functions by self time:`);
for (const [k, us] of [...byFn].sort((x, y) => y[1] - x[1]).slice(0, count))
  console.log(`${ms(us)} ms ${pct(us)} %  ${k}`);
