// Builds dist/src/http/threads/worker.bundle.js: the HTTP thread of `latch serve --http-threads N`
// (src/http/threads/worker.ts and everything it imports) as one minified file. Every thread is a
// V8 isolate of its own that loads its whole module graph again; one file instead of ~300 modules
// (latch's and its packages') cuts what a thread holds idle from about 24 to about 15 MB (the
// figures in bench/README.md, "HTTP threads"). threads.ts starts the bundle when it exists and the
// tsc output (worker.js) otherwise.
//
// Packages a thread never runs are replaced by a stub that throws when used: storage drivers
// (the main thread alone reads and writes the datastore; the auth modes that would open one on a
// thread are refused with --http-threads) and the Piscina pool (the main thread's). Native addons
// stay external (loaded by path at run time, shared with the main thread).
//
//   node scripts/bundle-thread.mjs        (run by `npm run build:ts`, after tsc)

import { build } from 'esbuild';
import { URL, fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Packages no HTTP thread uses: imported by modules the thread shares with the main thread. */
const NOT_ON_A_THREAD = ['level', 'classic-level', 'pg', 'pg-native', 'piscina'];

const stub = {
  name: 'not-on-a-thread',
  setup(b) {
    const filter = new RegExp(`^(${NOT_ON_A_THREAD.join('|')})$`);
    b.onResolve({ filter }, (args) => ({ path: args.path, namespace: 'not-on-a-thread' }));
    b.onLoad({ filter: /.*/, namespace: 'not-on-a-thread' }, (args) => ({
      loader: 'js',
      // Empty: a use (never made on a thread) fails at once on an undefined export.
      contents: `module.exports = {}; // ${args.path}: not loaded on an HTTP thread`,
    }));
  },
};

await build({
  absWorkingDir: root,
  entryPoints: ['src/http/threads/worker.ts'],
  outfile: 'dist/src/http/threads/worker.bundle.js',
  bundle: true,
  minify: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // Native addons, resolved from the package at run time as the tsc output resolves them.
  external: ['uWebSockets.js', 'msgpackr-extract'],
  // Bundled CommonJS packages call `require` for Node's built-ins.
  banner: {
    js: "import { createRequire as __latchRequire } from 'node:module'; const require = __latchRequire(import.meta.url);",
  },
  plugins: [stub],
  logLevel: 'warning',
});
