// Loading the walker module and instantiating it in this thread over the shared memory. One
// compiled WebAssembly.Module per process (handed to workers), one Instance per thread; the
// `evalCondition` import dispatches to whatever condition hook the thread installed.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ABI_VERSION } from '../../abi.js';

export interface WalkerExports {
  abiVersion(): number;
  check(ctx: number): number;
  /** Resolution depth (deepest hop) of the latest `check` on this instance. */
  readonly lastDepth: { readonly value: number };
  checkBatch(ctx: number, queries: number, count: number, out: number): void;
  trap(): void;
}

/** (cond, handle, obj, rel, subj, subjRel) → 0 false, 1 true, 2 error, 3 unavailable. */
export type ConditionHook = (cond: number, handle: number, obj: number, rel: number, subj: number, sr: number) => number;

let hook: ConditionHook = () => 3;

/** Installs this thread's condition evaluator (the main thread's checker does; workers do not). */
export function setConditionHook(h: ConditionHook): void {
  hook = h;
}

let deadline = Infinity;

/**
 * The running request's deadline (`Date.now()` ms) for this thread's walker: it reads the clock
 * every 65,536 evaluations (`env.deadlinePassed`) and gives up past it (R_ERR_BUDGET). Workers
 * never set one: their items are bounded by the step budget.
 */
export function setDeadline(ms: number): void {
  deadline = ms;
}

/** Path of build/walker.wasm from src/ (tsx, vitest) or dist/src/ (compiled). */
export function wasmPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../../..', '../../../..']) {
    const p = join(here, up, 'build', 'walker.wasm');
    if (existsSync(p)) return p;
  }
  throw new Error('latch: build/walker.wasm not found; run `npm run build:wasm`');
}

let compiled: WebAssembly.Module | undefined;

/** The process's compiled walker module (synchronous compile of a ~5 KB module). */
export function walkerModule(): WebAssembly.Module {
  compiled ??= new WebAssembly.Module(readFileSync(wasmPath()));
  return compiled;
}

/** A new instance over `memory`; checks the ABI version. */
export function instantiate(module: WebAssembly.Module, memory: WebAssembly.Memory): WalkerExports {
  const inst = new WebAssembly.Instance(module, {
    env: {
      memory,
      evalCondition: (c: number, h: number, o: number, r: number, s: number, sr: number) => hook(c, h, o, r, s, sr),
      deadlinePassed: () => (Date.now() > deadline ? 1 : 0),
    },
  });
  const ex = inst.exports as unknown as WalkerExports;
  if (ex.abiVersion() !== ABI_VERSION) throw new Error(`latch: walker ABI ${ex.abiVersion()} != host ABI ${ABI_VERSION}; rebuild the wasm`);
  return ex;
}
