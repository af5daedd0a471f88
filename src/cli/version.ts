// latch's version, read from its package.json (for `latch --version` and telemetry).

import { readFileSync } from 'node:fs';

/**
 * The version in latch's package.json: the nearest one above this module, which is two folders up
 * from the source (src/cli) and three from the build (dist/src/cli).
 */
export function latchVersion(): string {
  for (const up of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === 'latch' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not at this level
    }
  }
  return 'unknown';
}
