// Loading the walker module and instantiating it in this thread over the shared memory. One
// compiled WebAssembly.Module per process (handed to workers), one Instance per thread, each with
// the imports its owner gives it (no process-wide state besides the compiled module).

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ABI_VERSION } from '../../../abi.js';

export interface WalkerExports {
  abiVersion(): number;
  check(ctx: number): number;
  checkBatch(ctx: number, queries: number, count: number, out: number): void;
  trap(): void;
}

/** (cond, handle, obj, rel, subj, subjRel) → 0 false, 1 true, 2 error, 3 unavailable. */
type ConditionHook = (cond: number, handle: number, obj: number, rel: number, subj: number, sr: number) => number;

/**
 * What an instance calls back: the condition evaluator and the deadline poll (1 once the running
 * request's deadline passed; read every 65,536 evaluations). The main thread's `WalkerHost` binds
 * both to itself; a pool worker has neither (conditions answer R_ERR_NEEDHOST, no deadline: its
 * items are bounded by the step budget).
 */
interface WalkerImports {
  readonly evalCondition: ConditionHook;
  readonly deadlinePassed: () => number;
}

const WORKER_IMPORTS: WalkerImports = { evalCondition: () => 3, deadlinePassed: () => 0 };

/** Path of build/walker.wasm from src/ (tsx, vitest) or dist/src/ (compiled). */
function wasmPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../../../..', '../../../../..']) {
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

/** A new instance over `memory` calling back `imports`; checks the ABI version. */
export function instantiate(
  module: WebAssembly.Module,
  memory: WebAssembly.Memory,
  imports: WalkerImports = WORKER_IMPORTS,
): WalkerExports {
  const inst = new WebAssembly.Instance(module, {
    env: { memory, evalCondition: imports.evalCondition, deadlinePassed: imports.deadlinePassed },
  });
  const ex = inst.exports as unknown as WalkerExports;
  if (ex.abiVersion() !== ABI_VERSION)
    throw new Error(`latch: walker ABI ${ex.abiVersion()} != host ABI ${ABI_VERSION}; rebuild the wasm`);
  return ex;
}
