// Runs the `language` conformance target under vitest: every DSL tooling case must pass.
import { expect, it } from 'vitest';
import { describeWithData } from './with-data.js';
import { languageTarget } from './language.js';

describeWithData('language conformance', '', (dir) => {
  it('passes every case of every language suite', async () => {
    const results = await languageTarget.run(dir, {});
    const failures = results.flatMap((r) => r.failures.map((f) => `${r.file} :: ${f.name}: ${f.message}`));
    expect(failures).toEqual([]);
    expect(results.length).toBe(8);
    expect(results.every((r) => r.passed > 0)).toBe(true);
  });
});
