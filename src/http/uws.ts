// Loads the native uWebSockets.js binary, and refuses to run on anything else (the trufflesuite
// wrapper's silent JS fallback is half as fast). Preference: the official package, then
// `@btc-vision/uwebsockets.js` (an optional dependency: uWS v20.57 for Node 20, 22, 24 and 25, but
// its Linux binaries need glibc ≥ 2.38), then the trufflesuite build (Node 16, 18, 20; older
// glibc): from its package in a checkout (a development dependency), from build/uws/ in the
// installed package, which ships its Linux x64 binary for Node 20 only (scripts/uws-binaries.mjs).
// A candidate that does not load is passed over silently; only when none loads does startup fail,
// naming each one and why.

import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as UwsTypes from '@trufflesuite/uws-js-unofficial';

export type Uws = typeof UwsTypes;
export type {
  HttpRequest,
  HttpResponse,
  TemplatedApp,
  WebSocket,
  us_listen_socket,
  us_socket,
} from '@trufflesuite/uws-js-unofficial';

const require = createRequire(import.meta.url);

/** `uws_<platform>_<arch>_<ABI>.node`, the file naming both packages use. */
function binaryName(): string {
  return `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
}

/** The native addon exports SSLApp and getParts; the wrapper's JS fallback has neither. */
function looksNative(mod: unknown): mod is Uws {
  if (typeof mod !== 'object' || mod === null) return false;
  const m = mod as Record<string, unknown>;
  return (
    typeof m.App === 'function' &&
    typeof m.SSLApp === 'function' &&
    typeof m.getParts === 'function' &&
    typeof m.us_socket_local_port === 'function'
  );
}

/** What build/uws/source.json holds: the package and version its binaries were copied from. */
interface ShippedSource {
  readonly package: string;
  readonly version: string;
}

/**
 * build/uws/, where the package ships its uWS binaries, from src/http (tsx, vitest), dist/src/http
 * or the HTTP thread bundle in dist/src/http/threads; undefined when there is none.
 */
function shippedDir(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const up of ['../..', '../../..', '../../../..']) {
    const dir = join(here, up, 'build', 'uws');
    if (existsSync(join(dir, 'source.json'))) return dir;
  }
  return undefined;
}

/** The places a native binary may live, in preference order. */
export function candidates(): string[] {
  const name = binaryName();
  const shipped = shippedDir();
  return [
    // The official package ships its binaries at its root and loads one from index.js.
    `uWebSockets.js/${name}`,
    // The same layout; on glibc < 2.38 (Debian 12) loading fails with `GLIBC_2.38' not found`.
    `@btc-vision/uwebsockets.js/${name}`,
    `@trufflesuite/uws-js-unofficial/binaries/${name}`,
    `@trufflesuite/uws-js-unofficial/dist/${name}`,
    ...(shipped === undefined ? [] : [join(shipped, name)]),
  ];
}

/**
 * The file of module id `pkg/file`. A package whose `exports` map hides its files (the btc-vision
 * build) is found through its main entry, which sits at its root next to the binaries.
 */
function resolveFile(id: string): string {
  try {
    return require.resolve(id);
  } catch (err) {
    const m = /^(@[^/]+\/[^/]+|[^@/][^/]*)\/(.+)$/.exec(id);
    if (!m) throw err;
    const file = join(dirname(require.resolve(m[1] as string)), m[2] as string);
    if (!existsSync(file)) throw err;
    return file;
  }
}

let cached: Uws | undefined;
let loadedFrom: string | undefined;

/** Which uWS build `loadUws()` loaded: its package, version and header limit (docs/auth.md). */
interface UwsBuild {
  readonly package: string;
  readonly version: string;
  /** What a request's header block may be when it arrives in more than one read. */
  readonly headerLimit: string;
}

/** The build that loaded (undefined before loadUws). */
export function uwsBuild(): UwsBuild | undefined {
  if (loadedFrom === undefined) return undefined;
  let pkg: string;
  let version = 'unknown';
  if (isAbsolute(loadedFrom)) {
    // A binary the package ships (build/uws): its source.json names where it came from.
    ({ package: pkg, version } = JSON.parse(
      readFileSync(join(dirname(loadedFrom), 'source.json'), 'utf8'),
    ) as ShippedSource);
  } else {
    const m = /^(@[^/]+\/[^/]+|[^@/][^/]*)\//.exec(loadedFrom);
    pkg = m?.[1] ?? loadedFrom;
    try {
      version = (require(`${pkg}/package.json`) as { version: string }).version;
    } catch {
      // an exports map hides package.json: the version stays unknown
    }
  }
  const fixed = pkg === '@trufflesuite/uws-js-unofficial';
  return {
    package: pkg,
    version,
    headerLimit: fixed ? '4 KiB when split over reads (no 431)' : 'UWS_HTTP_MAX_HEADERS_SIZE (431 beyond)',
  };
}

/**
 * The native uWS module. Throws an Error naming every path tried when none loads; callers
 * (main.ts) let it abort startup — latch never serves through a JS shim.
 */
export function loadUws(): Uws {
  if (cached === undefined) {
    const ids = candidates();
    cached = loadUwsFrom(ids, (id) => (loadedFrom = id));
  }
  return cached;
}

/** The first of `ids` (module ids or paths of .node files) that loads as native uWS; throws otherwise. */
export function loadUwsFrom(ids: readonly string[], onLoaded?: (id: string) => void): Uws {
  const failures: string[] = [];
  for (const id of ids) {
    let path: string;
    try {
      path = resolveFile(id);
    } catch {
      failures.push(`${id}: not installed`);
      continue;
    }
    try {
      const mod: unknown = require(path);
      if (looksNative(mod)) {
        onLoaded?.(id);
        return mod;
      }
      failures.push(`${path}: not a native uWS binary`);
    } catch (err) {
      failures.push(`${path}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    }
  }
  throw new Error(
    `latch needs a native uWebSockets.js binary for ${binaryName()} (Node ${process.version}); none loaded:\n  ` +
      failures.join('\n  ') +
      '\nInstall uWebSockets.js (github:uNetworking/uWebSockets.js), or @btc-vision/uwebsockets.js on glibc 2.38 or newer (Node 20, 22, 24, 25), or use a Node version that @trufflesuite/uws-js-unofficial ships (16, 18, 20).',
  );
}
