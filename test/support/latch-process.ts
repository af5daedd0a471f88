// How tests start a real `latch` process: `spawn(process.execPath, [...LATCH_ENTRY, 'serve', …])`,
// and which entry an in-process server's HTTP threads start (THREAD_ENTRY).
//
// `npm test` builds dist/ first (pretest), and Node starts the compiled CLI for about a third of
// the CPU time that tsx takes to compile src/ at every start (≈0.8 s against ≈2.3 s per process,
// and the suite starts dozens). After an edit to src/ without `npm run build:ts`, dist/ is older
// than src/: the process then runs src/ through tsx, so a test never runs stale code.

import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Whether every src/**\/*.ts has its dist/src/**\/*.js, written after it. */
function distIsFresh(dir = 'src'): boolean {
  for (const e of readdirSync(path.join(root, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!distIsFresh(rel)) return false;
    } else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) {
      try {
        const built = statSync(path.join(root, 'dist', rel.replace(/\.ts$/, '.js'))).mtimeMs;
        if (built < statSync(path.join(root, rel)).mtimeMs) return false;
      } catch {
        return false; // not built
      }
    }
  }
  return true;
}

const fresh = distIsFresh();

/** Node's arguments before latch's own: the compiled entry, or the source one through tsx. */
export const LATCH_ENTRY: readonly string[] = fresh
  ? [path.join(root, 'test/cli/latch-entry.mjs')]
  : ['--import', 'tsx', path.join(root, 'test/cli/latch-entry.ts')];

/**
 * The HTTP threads' entry for servers the tests start in-process (`LATCH_THREAD_ENTRY`, read by
 * src/http/threads/threads.ts): the built one-file bundle when dist/ is fresh and the bundle is as
 * new as the worker.js beside it, else undefined (the threads then compile the sources with tsx).
 */
export const THREAD_ENTRY: string | undefined = ((): string | undefined => {
  if (!fresh) return undefined;
  const dir = path.join(root, 'dist/src/http/threads');
  const bundle = path.join(dir, 'worker.bundle.js');
  if (!existsSync(bundle)) return undefined;
  return statSync(bundle).mtimeMs >= statSync(path.join(dir, 'worker.js')).mtimeMs ? bundle : undefined;
})();
