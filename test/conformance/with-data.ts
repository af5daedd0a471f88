// Conformance suites under vitest: a missing data folder is a skipped test on a developer's
// machine and a failing one under CI=true (a fresh clone whose suites silently skip proves nothing).

import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { conformanceDir, conformancePresent } from './data.js';

/**
 * `describe(title, body)` when the data is present; otherwise one skipped test, or under CI=true
 * one failing test naming the folder it looked for.
 */
export function describeWithData(title: string, sub: string, body: (dir: string) => void): void {
  const dir = conformanceDir();
  if (conformancePresent(sub)) {
    describe(title, () => body(dir));
    return;
  }
  const what = `conformance data not found at ${path.join(dir, sub)}`;
  describe(title, () => {
    if (process.env.CI === 'true')
      it('has its conformance data (required under CI=true)', () => expect.fail(`${what} (set LATCH_CONFORMANCE_DIR)`));
    else it.skip(what, () => undefined);
  });
}
