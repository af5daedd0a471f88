// The OpenFGA query suites in-process, 0 failures on each target: `reference` runs the reference
// evaluator directly; `walker` runs the service (openLatch: Check on the wasm walker, ListObjects
// on the indexed walk confirmed by the walker, ListUsers in TypeScript) through writes and the index.
import { expect, it } from 'vitest';
import { describeWithData } from './with-data.js';
import { QUERY_FILES } from './engine.js';
import { referenceTarget, walkerTarget } from './targets.js';

for (const target of [referenceTarget(), walkerTarget()]) {
  describeWithData(`conformance: ${target.name} target`, 'openfga', (dir) => {
    for (const file of QUERY_FILES) {
      it(
        file,
        async () => {
          const [result] = await target.run(dir, { file });
          const failures = (result?.failures ?? []).map((f) => `${f.name}: ${f.message}`);
          expect(failures).toEqual([]);
          expect(result?.passed ?? 0).toBeGreaterThan(0);
          console.log(
            `conformance ${target.name} ${file}: ${result?.passed ?? 0} passed, ${result?.failed ?? 0} failed`,
          );
        },
        600_000,
      );
    }
  });
}
