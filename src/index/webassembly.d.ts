// The few WebAssembly JS API declarations latch uses (lib "dom" is not in tsconfig and
// @types/node 20 does not declare them). Shapes follow the WebAssembly JS API.

declare namespace WebAssembly {
  interface MemoryDescriptor {
    initial: number;
    maximum?: number;
    shared?: boolean;
  }
  class Memory {
    constructor(descriptor: MemoryDescriptor);
    readonly buffer: ArrayBuffer | SharedArrayBuffer;
    grow(delta: number): number;
  }
  class Module {
    constructor(bytes: BufferSource);
  }
  class Instance {
    constructor(module: Module, imports?: Imports);
    readonly exports: Exports;
  }
  class RuntimeError extends Error {}
  type ImportValue = ((...args: number[]) => number | void) | Memory;
  type Imports = Record<string, Record<string, ImportValue>>;
  type Exports = Record<string, unknown>;
  function compile(bytes: BufferSource): Promise<Module>;
}
