// Large models on the event loop, in-process on memory: a model of RELATIONS relations (default
// 2,000, the attack: refused past the documented limit of 1,000) and one at the limit, each
// written and then asked its first Check (which compiles it), next to a 50-relation model in the
// same run (the baseline). Prints wall time and the longest event-loop stall of each step.
// Run: `npx tsx bench/attack/large-model.ts` (RELATIONS; SHAPE = chain | reverse | parent).

import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { openLatch } from '../../src/engine/service.js';
import { MAX_MODEL_RELATIONS } from '../../src/model/validate-shape.js';
import { largeModel, topRelation, type LargeShape } from '../../test/fixtures/large-model.js';

const RELATIONS = Number(process.env.RELATIONS ?? 2000);
const SHAPE = (process.env.SHAPE ?? 'chain') as LargeShape;

/** Longest loop stall (ms) while `work` runs, and its wall time. */
async function stallOf<T>(work: () => Promise<T>): Promise<{ stallMs: number; ms: number; value: T | Error }> {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  await new Promise((r) => setTimeout(r, 20)); // the histogram's timer ticks before the work
  const t0 = performance.now();
  const value = await work().catch((err: unknown) => err as Error);
  const ms = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 20)); // and sees the last stall
  h.disable();
  return { stallMs: h.max / 1e6, ms, value };
}

const latch = await openLatch({});
const f = (x: number): string => x.toFixed(0).padStart(6);

async function measure(n: number): Promise<string> {
  const store = await latch.createStore(`large-${n}`);
  const write = await stallOf(() => latch.writeModel(store.id, largeModel(n, SHAPE)));
  const head = `${String(n).padStart(5)} relations (${SHAPE}): write ${f(write.ms)} ms, stall ${f(write.stallMs)} ms`;
  if (write.value instanceof Error) return `${head}: refused, ${(write.value as { code?: string }).code}`;
  const modelId = write.value;
  await latch.write({
    storeId: store.id,
    writes: [{ user: 'user:anne', relation: 'r0', object: 'doc:1' }],
    deletes: [],
  } as never);
  const tupleKey = { user: 'user:anne', relation: topRelation(n, SHAPE), object: 'doc:1' };
  const check = await stallOf(() =>
    latch.check({ storeId: store.id, modelId, tupleKey, contextualTuples: [] } as never),
  );
  if (check.value instanceof Error || !check.value.allowed) throw new Error(`${tupleKey.relation} should be allowed`);
  return `${head}; first Check ${f(check.ms)} ms, stall ${f(check.stallMs)} ms`;
}

await measure(10); // loads every module once, outside the figures
console.log(await measure(50));
console.log(await measure(MAX_MODEL_RELATIONS));
console.log(await measure(RELATIONS));
await latch.close();
