// `npm run test:quick`: the edit-test loop (unit, model, index, walker, engine, and the OpenFGA
// conformance suites through the reference evaluator and the walker), without servers, browsers
// or PostgreSQL. `npm test` runs everything (vitest.config.ts).
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
    // A stale build/walker.wasm fails the run (build-setup.ts); no PostgreSQL server.
    globalSetup: ['test/support/build-setup.ts'],
    reporters: ['default'],
  },
});
