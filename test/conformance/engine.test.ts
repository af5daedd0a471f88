// The OpenFGA query suites against the reference evaluator (in-process target): 0 failures.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { engineTarget, QUERY_FILES } from './engine.js';

const dir = process.env.LATCH_CONFORMANCE_DIR ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../shared/conformance');
const present = existsSync(path.join(dir, 'openfga'));

describe('conformance: engine target', () => {
  if (!present) {
    it.skip(`conformance data not found at ${dir}`, () => undefined);
    return;
  }
  for (const file of QUERY_FILES) {
    it(file, async () => {
      const [result] = await engineTarget().run(dir, { file });
      const failures = (result?.failures ?? []).map((f) => `${f.name}: ${f.message}`);
      expect(failures).toEqual([]);
      expect(result?.passed ?? 0).toBeGreaterThan(0);
    });
  }
});
