// `npm run test:quick`: the edit-test loop (unit, model, index, walker, engine, and the OpenFGA
// conformance suites through the reference evaluator and the walker), without servers, browsers
// or PostgreSQL. `npm test` runs everything (vitest.config.ts).
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'test/domain/**/*.test.ts',
      'test/model/**/*.test.ts',
      'test/index/**/*.test.ts',
      'test/walker/**/*.test.ts',
      'test/reference/**/*.test.ts',
      'test/list/**/*.test.ts',
      'test/engine/**/*.test.ts',
      'test/conformance/engine.test.ts',
    ],
    exclude: ['test/engine/*postgres*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // In-process files only: no per-file isolation, so each worker imports src/ once (the `unit`
    // project of vitest.config.ts runs the same files the same way).
    isolate: false,
    // Vitest's default is one worker fewer than the cores (one on two cores: every file in turn);
    // these files compute, so one worker per core. LATCH_TEST_WORKERS overrides.
    maxWorkers: Number(process.env.LATCH_TEST_WORKERS) || Math.max(2, availableParallelism()),
    // A stale build/walker.wasm fails the run (build-setup.ts); no PostgreSQL server.
    globalSetup: ['test/support/build-setup.ts'],
    // The randomized and large-data suites at a smaller size for the edit-test loop (`npm test`
    // runs their full default sizes); an explicit setting wins.
    env: {
      LATCH_DIFF_CASES: process.env.LATCH_DIFF_CASES ?? '4000',
      LATCH_IMPACT_SEEDS: process.env.LATCH_IMPACT_SEEDS ?? '20',
      LATCH_LISTING_OBJECTS: process.env.LATCH_LISTING_OBJECTS ?? '20000',
      LATCH_HISTORY_SEEDS: process.env.LATCH_HISTORY_SEEDS ?? '3',
    },
    reporters: ['default'],
  },
});
