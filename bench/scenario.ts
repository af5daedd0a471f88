// The benchmark contract: a scenario is a named module that verifies its own answers, times
// them, and returns rows of {scenario, metric, value, unit}. bench/run.ts is the registry.

export interface Metric {
  readonly scenario: string;
  readonly metric: string;
  readonly value: number;
  readonly unit: string;
}

export interface RunOptions {
  /** `--big`: 10M-tuple variants (long; not for a shared machine). */
  readonly big: boolean;
  /** `--quick`: fewer samples (smoke run). */
  readonly quick: boolean;
}

export interface Scenario {
  readonly name: string;
  readonly description: string;
  run(opts: RunOptions): Promise<Metric[]>;
}

/** Throws when a benchmark's answer is wrong: a fast wrong answer is not a result. */
export function verify(label: string, got: unknown, want: unknown): void {
  if (JSON.stringify(got) === JSON.stringify(want)) return;
  if (Array.isArray(got) && Array.isArray(want)) {
    const i = want.findIndex((w, k) => JSON.stringify(w) !== JSON.stringify(got[k]));
    throw new Error(
      `bench ${label}: item ${i} of ${want.length}: expected ${JSON.stringify(want[i])}, got ${JSON.stringify(got[i])}`,
    );
  }
  throw new Error(`bench ${label}: expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`.slice(0, 500));
}
