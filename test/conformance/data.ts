// Where the conformance data lives ($LATCH_CONFORMANCE_DIR or ../shared/conformance). A missing
// folder is a skip on a developer's machine and a failure under CI=true (with-data.ts, cli.ts).

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The conformance data folder: $LATCH_CONFORMANCE_DIR, else `<project>/../shared/conformance`. */
export function conformanceDir(): string {
  return process.env.LATCH_CONFORMANCE_DIR ?? path.resolve(projectRoot, '../shared/conformance');
}

/** True when `sub` (e.g. `openfga`) exists under the data folder. */
export function conformancePresent(sub = ''): boolean {
  return existsSync(path.join(conformanceDir(), sub));
}
