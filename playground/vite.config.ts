// Build of the browser playground (docs/playground.md): one page, hashed assets under
// /playground/assets/, precompressed .gz and .br copies written next to every file so the server
// serves compressed bytes without compressing at run time.

import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

const OUT = '../dist/playground';

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (!path.endsWith('.gz') && !path.endsWith('.br')) yield path;
  }
}

/** Writes `<file>.gz` (level 9) and `<file>.br` (quality 11) for every output file of 512 bytes or more. */
function precompress(): Plugin {
  return {
    name: 'latch-precompress',
    apply: 'build',
    closeBundle() {
      const out = join(import.meta.dirname, OUT);
      for (const path of files(out)) {
        const raw = readFileSync(path);
        if (raw.length < 512) continue;
        writeFileSync(path + '.gz', gzipSync(raw, { level: 9 }));
        writeFileSync(path + '.br', brotliCompressSync(raw, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
      }
    },
  };
}

export default defineConfig({
  root: import.meta.dirname,
  base: '/playground/',
  logLevel: 'warn',
  plugins: [precompress()],
  resolve: {
    // src/cli/tuple-file.ts is shared with the CLI; only its pure parsers run here.
    alias: {
      'node:fs/promises': join(import.meta.dirname, 'src/node-shim.ts'),
      'node:path': join(import.meta.dirname, 'src/node-shim.ts'),
    },
  },
  build: {
    outDir: OUT,
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: false,
  },
});
