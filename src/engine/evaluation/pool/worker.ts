// The Piscina worker: instantiates the walker over the shared memory it was handed and runs
// batches of interned checks. It has no condition evaluator: a conditioned tuple yields status
// R_ERR_NEEDHOST and the main thread re-runs that one item inline.

import { workerData } from 'node:worker_threads';
import { instantiate, type WalkerExports } from '../walker/wasm.js';

export interface BatchTask {
  readonly ctx: number;
  readonly queries: number;
  readonly count: number;
  readonly out: number;
  /** Test hooks: 'trap' executes `unreachable`, 'crash' ends the thread. */
  readonly fault?: 'trap' | 'crash' | undefined;
}

const data = workerData as { module: WebAssembly.Module; memory: WebAssembly.Memory };
let walker: WalkerExports = instantiate(data.module, data.memory);

export default function run(task: BatchTask): number {
  if (task.fault === 'crash') process.exit(70);
  try {
    if (task.fault === 'trap') walker.trap();
    walker.checkBatch(task.ctx, task.queries, task.count, task.out);
    return task.count;
  } catch (err) {
    // A trap leaves only per-call state behind, but start from a fresh instance anyway.
    walker = instantiate(data.module, data.memory);
    throw err;
  }
}
