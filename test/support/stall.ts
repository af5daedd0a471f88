// Event-loop probes for the resource tests: the longest stall of this thread's loop and the time
// it spent busy, over a window. The servers under test run in-process, so a stall of the server is
// a stall measured here.

import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

export interface LoopLoad {
  /** The longest delay of a 10 ms-resolution timer over the window (ms): the longest stall. */
  readonly maxStallMs: number;
  /** Time the loop was busy over the window (ms), from `performance.eventLoopUtilization`. */
  readonly activeMs: number;
}

/** Starts measuring; `stop()` ends the window and returns what was seen. */
export function probeLoop(): { stop(): LoopLoad } {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  const start = performance.eventLoopUtilization();
  return {
    stop() {
      h.disable();
      const elu = performance.eventLoopUtilization(start);
      return { maxStallMs: h.max / 1e6, activeMs: elu.active };
    },
  };
}

/** Busy time of `work` run `times` times back to back (ms): the baseline a bound is set against. */
export function timeOf(work: () => void, times = 1): number {
  const t0 = performance.now();
  for (let i = 0; i < times; i++) work();
  return performance.now() - t0;
}

/**
 * Counts this thread's event-loop iterations until `stop()`: one `setImmediate` per iteration's
 * check phase. Work that yields once per item takes at least one iteration per item, however
 * busy the machine; work that holds the loop for many items takes one for all of them.
 */
export function countTurns(): { stop(): number } {
  let turns = 0;
  let stopped = false;
  const tick = (): void => {
    if (stopped) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  return {
    stop() {
      stopped = true;
      return turns;
    },
  };
}
