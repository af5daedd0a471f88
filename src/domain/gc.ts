// A full garbage collection on demand, in whichever thread calls it: V8's `gc` is exposed once
// (the flag is process-wide; a new context then holds the function) without starting Node with
// `--expose-gc`. Used where resident memory is measured or trimmed at a known point: the benches'
// held-bytes figure (src/cli/bench-stats.ts) and an HTTP thread before it listens
// (src/http/threads/worker.ts). A runtime that refuses the flag makes it a no-op.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let gc: (() => void) | undefined;

/** Runs a full garbage collection (twice: the first may leave what finalizers released). */
export function collectGarbage(): void {
  if (gc === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc') as () => void;
    } catch {
      gc = () => {};
    }
  }
  gc();
  gc();
}
