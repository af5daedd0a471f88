// The OpenFGA query suites through a real latch server, as JSON over HTTP and as msgpack over
// the /stream channel: 0 failures, like the in-process targets.
import { expect, it } from 'vitest';
import { describeWithData } from './with-data.js';
import { QUERY_FILES } from './engine.js';
import { runHttp } from './http.js';

describeWithData('conformance: HTTP targets', 'openfga', (dir) => {
  for (const mode of ['json', 'msgpack'] as const) {
    for (const file of QUERY_FILES) {
      it(`${mode}: ${file}`, async () => {
        const [result] = await runHttp(mode, dir, { file });
        const failures = (result?.failures ?? []).map((f) => `${f.name}: ${f.message}`);
        expect(failures).toEqual([]);
        expect(result?.passed ?? 0).toBeGreaterThan(0);
        console.log(`conformance http-${mode} ${file}: ${result?.passed ?? 0} passed, ${result?.failed ?? 0} failed`);
      }, 600_000);
    }
  }
});
