// vitest sequencer: the longest files start first, so that no long file starts near the end of a
// run and keeps it going after every other worker is idle (with three workers the run takes about
// the sum of the files' times divided by three, unless one long file starts late).
//
// Vitest orders by the durations it cached from the previous run in this checkout
// (node_modules/.vite/vitest); a fresh clone has no cache, and vitest then orders by file size,
// which put test/ops/pack.test.ts (60 s, a small file) among the last files to start. HINTS gives
// those files' durations for that case; the cache, where present, wins.

import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Seconds per file in a fresh-clone `npm test` (the files taking 5 s or more); only the order
 * depends on these, so a stale figure costs at most some wall time, never a result.
 */
const HINTS: Readonly<Record<string, number>> = {
  'test/ops/pack.test.ts': 62,
  'test/playground/large.test.ts': 60,
  'test/ops/replicas.test.ts': 39,
  'test/conformance/http.test.ts': 25,
  'test/playground/flows.test.ts': 24,
  'test/engine/differential.test.ts': 23,
  'test/cluster/placement.test.ts': 23,
  'test/http/delete-tuples.test.ts': 21,
  'test/permission-index/attack-expansions.test.ts': 18,
  'test/playground/input.test.ts': 17,
  'test/http/threads.test.ts': 17,
  'test/playground/serve.test.ts': 17,
  'test/engine/impact-differential.test.ts': 17,
  'test/auth/attack-streams.test.ts': 14,
  'test/storage/postgres.test.ts': 14,
  'test/engine/history.test.ts': 13,
  'test/ops/walkthrough.test.ts': 13,
  'test/http/watch.test.ts': 12,
  'test/cli/args.test.ts': 12,
  'test/cli/import-export.test.ts': 12,
  'test/playground/why.test.ts': 11,
  'test/ops/logs.test.ts': 10,
  'test/http/import-export.test.ts': 9,
  'test/permission-index/engine.test.ts': 8,
  'test/index/background-checkpoint.test.ts': 8,
  'test/ops/shutdown.test.ts': 8,
  'test/cli/fixtures.test.ts': 7,
  'test/storage/postgres-write-rules.test.ts': 7,
  'test/permission-index/differential.test.ts': 6,
  'test/playground/impact.test.ts': 6,
  'test/playground/shadow.test.ts': 6,
  'test/storage/postgres-checkpoint-read.test.ts': 6,
  'test/engine/listing.test.ts': 6,
  'test/http/serve.test.ts': 6,
  'test/storage/postgres-serve.test.ts': 5,
  'test/storage/postgres-group-commit.test.ts': 5,
  'test/auth/authenticator.test.ts': 5,
  'test/ops/backup.test.ts': 5,
  'test/engine/delete-by-filter.test.ts': 5,
};

export class LongestFirst extends BaseSequencer {
  override sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const cache = this.ctx.cache;
    const seconds = new Map<TestSpecification, number>();
    const size = new Map<TestSpecification, number>();
    for (const spec of files) {
      const file = path.relative(root, spec.moduleId).split(path.sep).join('/');
      const key = `${spec.project.name}:${file}`;
      const cached = cache.getFileTestResults(key);
      seconds.set(spec, cached ? cached.duration / 1000 : (HINTS[file] ?? 0));
      size.set(spec, cache.getFileStats(key)?.size ?? 0);
    }
    // Across projects: every project's files share the run's workers, in this order.
    return Promise.resolve(
      [...files].sort(
        (a, b) =>
          (seconds.get(b) as number) - (seconds.get(a) as number) || (size.get(b) as number) - (size.get(a) as number),
      ),
    );
  }
}
