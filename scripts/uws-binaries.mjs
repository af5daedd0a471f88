// Copies the uWebSockets.js binaries latch's package ships into build/uws/ (run by `npm run
// build`, so `npm pack`'s prepack runs it too): the trufflesuite build's binary for each platform
// latch supports (README: Linux x64) and the Node ABI its Node versions have there (115, Node 20),
// its licence, and `source.json` naming the package and version it came from (src/http/uws.ts
// reports them in the `latch listening` line).
//
// The trufflesuite package itself is a development dependency, no longer bundled: it carries 18
// binaries (six platforms × Node 16, 18, 20; 96 MB) plus 20 MB of second copies, of which latch
// can load one. Node 22 and newer, macOS, Windows and Linux arm64 load the optional
// @btc-vision/uwebsockets.js, which npm installs when it can reach the registry or its cache.
//
//   node scripts/uws-binaries.mjs

import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { URL, fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const PACKAGE = '@trufflesuite/uws-js-unofficial';
/** `<platform>_<arch>_<ABI>` of each binary shipped. */
const SHIPPED = ['linux_x64_115'];

const from = path.dirname(createRequire(path.join(root, 'package.json')).resolve(`${PACKAGE}/package.json`));
const { version } = JSON.parse(readFileSync(path.join(from, 'package.json'), 'utf8'));
const to = path.join(root, 'build/uws');
rmSync(to, { recursive: true, force: true });
mkdirSync(to, { recursive: true });
for (const target of SHIPPED)
  copyFileSync(path.join(from, 'binaries', `uws_${target}.node`), path.join(to, `uws_${target}.node`));
copyFileSync(path.join(from, 'LICENSE'), path.join(to, 'LICENSE'));
writeFileSync(path.join(to, 'source.json'), JSON.stringify({ package: PACKAGE, version }, null, 2) + '\n');
