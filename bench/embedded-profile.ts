// A driver for CPU profiles of the embedded string path (not a scenario): the data of
// bench/scenarios/embedded.ts, then `checkSync` in a loop. Run
//   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/embedded-profile.ts [calls] [sync]
// and open the largest .cpuprofile (the main thread's) in Chrome DevTools. With `sync` it runs
// checkSync alone; without, five rounds alternating with the naive lookup, timed in process CPU
// time (all threads: a concurrent GC counts too), and their ratios.

import type { CheckInput } from '../src/engine/contract.js';
import { prepare } from './scenarios/embedded.js';

const calls = Number(process.argv[2] ?? 5_000_000);
const { latch, inputs, map } = await prepare();
await latch.check(inputs[0] as CheckInput);
const checkSync = latch.checkSync.bind(latch);
let sink = 0;
/** CPU µs (user + system) of `n` calls of `fn`: less sensitive to a loaded machine than wall time. */
const cpu = (fn: (i: number) => void, n: number): number => {
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) fn(i);
  const c = process.cpuUsage(c0);
  return ((c.user + c.system) * 1000) / n;
};
const naive = (i: number): void => {
  const k = (inputs[i & 4095] as CheckInput).tupleKey;
  sink += map.get(`${k.object}#${k.relation}`)?.has(k.user) ? 1 : 0;
};
const sync = (i: number): void => {
  sink += checkSync(inputs[i & 4095] as CheckInput)?.allowed ? 1 : 0;
};
if (process.argv[3] === 'sync') {
  // checkSync alone: the profile then holds nothing of the naive lookup.
  const t = cpu(sync, calls);
  console.log(`checkSync ${t.toFixed(0)} ns CPU/call (sink ${sink})`);
  await latch.close();
  process.exit(0);
}
const rounds = 5;
const per = Math.ceil(calls / rounds);
const ratios: number[] = [];
for (let r = 0; r < rounds; r++) {
  const a = cpu(naive, per);
  const b = cpu(sync, per);
  ratios.push(b / a);
  console.log(
    `round ${r}: naive ${a.toFixed(0)} ns, checkSync ${b.toFixed(0)} ns CPU/call, ratio ${(b / a).toFixed(2)}`,
  );
}
ratios.sort((x, y) => x - y);
console.log(`median ratio ${ratios[Math.floor(rounds / 2)]?.toFixed(2)} (sink ${sink})`);
await latch.close();
