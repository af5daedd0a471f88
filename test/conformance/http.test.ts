// The OpenFGA query suites through a real latch server, as JSON over HTTP and as msgpack over
// the /stream channel: 0 failures, like the in-process target.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { QUERY_FILES } from './engine.js';
import { runHttp } from './http.js';

const dir = process.env.LATCH_CONFORMANCE_DIR ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../shared/conformance');
const present = existsSync(path.join(dir, 'openfga'));

describe('conformance: HTTP targets', () => {
  if (!present) {
    it.skip(`conformance data not found at ${dir}`, () => undefined);
    return;
  }
  for (const mode of ['json', 'msgpack'] as const) {
    for (const file of QUERY_FILES) {
      it(`${mode}: ${file}`, async () => {
        const [result] = await runHttp(mode, dir, { file });
        const failures = (result?.failures ?? []).map((f) => `${f.name}: ${f.message}`);
        expect(failures).toEqual([]);
        expect(result?.passed ?? 0).toBeGreaterThan(0);
      }, 600_000);
    }
  }
});
