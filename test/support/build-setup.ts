// vitest globalSetup: refuse to test a stale walker. The tests load build/walker.wasm, which
// `npm run build:wasm` compiles from assembly/; `npm test` builds first, but a bare
// `npx vitest run` after a change to assembly/ would otherwise test the old walker and report
// its answers as the new code's.

import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function newestIn(dir: string): { file: string; mtime: number } {
  let newest = { file: dir, mtime: 0 };
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    const n = e.isDirectory() ? newestIn(p) : { file: p, mtime: statSync(p).mtimeMs };
    if (n.mtime > newest.mtime) newest = n;
  }
  return newest;
}

export function setup(): void {
  const wasm = path.join(root, 'build', 'walker.wasm');
  let built: number;
  try {
    built = statSync(wasm).mtimeMs;
  } catch {
    throw new Error('build/walker.wasm is missing: run `npm run build` (or `npm test`, which builds first)');
  }
  const source = newestIn(path.join(root, 'assembly'));
  if (source.mtime > built) {
    throw new Error(
      `build/walker.wasm is older than ${path.relative(root, source.file)}: run \`npm run build:wasm\` (or \`npm test\`, which builds first)`,
    );
  }
}
