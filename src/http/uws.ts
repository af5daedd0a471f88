// Loads the native uWebSockets.js binary (official package first, then the trufflesuite build),
// and refuses to run on anything else: the trufflesuite wrapper's silent JS fallback is half as fast.

import { createRequire } from 'node:module';
import type * as UwsTypes from '@trufflesuite/uws-js-unofficial';

export type Uws = typeof UwsTypes;
export type { HttpRequest, HttpResponse, TemplatedApp, WebSocket, us_listen_socket, us_socket } from '@trufflesuite/uws-js-unofficial';

const require = createRequire(import.meta.url);

/** `uws_<platform>_<arch>_<ABI>.node`, the file naming both packages use. */
function binaryName(): string {
  return `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
}

/** The native addon exports SSLApp and getParts; the wrapper's JS fallback has neither. */
function looksNative(mod: unknown): mod is Uws {
  if (typeof mod !== 'object' || mod === null) return false;
  const m = mod as Record<string, unknown>;
  return typeof m.App === 'function' && typeof m.SSLApp === 'function' && typeof m.getParts === 'function'
    && typeof m.us_socket_local_port === 'function';
}

/** The places a native binary may live, in preference order. */
function candidates(): string[] {
  const name = binaryName();
  return [
    // The official package ships its binaries at its root and loads one from index.js.
    `uWebSockets.js/${name}`,
    `@trufflesuite/uws-js-unofficial/binaries/${name}`,
    `@trufflesuite/uws-js-unofficial/dist/${name}`,
  ];
}

let cached: Uws | undefined;

/**
 * The native uWS module. Throws an Error naming every path tried when none loads; callers
 * (main.ts) let it abort startup — latch never serves through a JS shim.
 */
export function loadUws(): Uws {
  cached ??= loadUwsFrom(candidates());
  return cached;
}

/** The first of `ids` (module ids or paths of .node files) that loads as native uWS; throws otherwise. */
export function loadUwsFrom(ids: readonly string[]): Uws {
  const failures: string[] = [];
  for (const id of ids) {
    let path: string;
    try {
      path = require.resolve(id);
    } catch {
      failures.push(`${id}: not installed`);
      continue;
    }
    try {
      const mod: unknown = require(path);
      if (looksNative(mod)) return mod;
      failures.push(`${path}: not a native uWS binary`);
    } catch (err) {
      failures.push(`${path}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
    }
  }
  throw new Error(
    `latch needs a native uWebSockets.js binary for ${binaryName()} (Node ${process.version}); none loaded:\n  ` +
      failures.join('\n  ') +
      '\nInstall uWebSockets.js (github:uNetworking/uWebSockets.js) or use a Node version that @trufflesuite/uws-js-unofficial ships (16, 18, 20).',
  );
}
