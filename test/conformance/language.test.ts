// Runs the `language` conformance target under vitest: every DSL tooling case must pass.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { languageTarget } from './language.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = process.env.LATCH_CONFORMANCE_DIR ?? path.resolve(root, '../shared/conformance');
const exists = existsSync(dir);
if (!exists) console.log(`conformance data not found at ${dir}: language suites skipped`);

describe.skipIf(!exists)('language conformance', () => {
  it('passes every case of every language suite', async () => {
    const results = await languageTarget.run(dir, {});
    const failures = results.flatMap((r) => r.failures.map((f) => `${r.file} :: ${f.name}: ${f.message}`));
    expect(failures).toEqual([]);
    expect(results.length).toBe(8);
    expect(results.every((r) => r.passed > 0)).toBe(true);
  });
});
