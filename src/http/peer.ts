// The caller's address for the failed-credential budgets (docs/auth.md): the socket's peer, or,
// when that peer is a configured trusted proxy (`--trusted-proxy`), the nearest X-Forwarded-For
// entry that is not itself a trusted proxy. Behind a reverse proxy every caller shares the
// proxy's address, so without this one caller's failures would spend everybody's budget.
// Example: peer 10.0.0.2 (trusted), `X-Forwarded-For: 203.0.113.7, 10.0.0.3` with 10.0.0.3
// trusted too → 203.0.113.7.

import type { Peer } from '../api/auth/authenticator.js';
import type { HttpRequest, HttpResponse } from './uws.js';

/** `::ffff:1.2.3.4` → `1.2.3.4`; other addresses as written, lower-cased. */
function plain(address: string): string {
  const a = address.trim().toLowerCase();
  return a.startsWith('::ffff:') && a.includes('.') ? a.slice(7) : a;
}

/** The trusted proxies' addresses, normalised; undefined when none is configured. */
export function trustedProxies(list: readonly string[] | undefined): ReadonlySet<string> | undefined {
  return list && list.length > 0 ? new Set(list.map(plain)) : undefined;
}

/** The caller's address given the socket's peer and its X-Forwarded-For header. */
export function callerAddress(remote: string, forwardedFor: string, trusted: ReadonlySet<string> | undefined): string {
  let caller = plain(remote);
  if (!trusted?.has(caller) || forwardedFor === '') return caller;
  const hops = forwardedFor.split(',');
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = plain(hops[i] as string);
    if (hop === '') break;
    caller = hop;
    if (!trusted.has(hop)) break;
  }
  return caller;
}

/**
 * The peer of a request: `res` itself when no proxy is trusted (the address is read only on the
 * slow path), else one that names the forwarded caller (the header is read now, while `req` is valid).
 */
export function peerOf(res: HttpResponse, req: HttpRequest, trusted: ReadonlySet<string> | undefined): Peer {
  if (!trusted) return res;
  const forwardedFor = req.getHeader('x-forwarded-for');
  return {
    // A fresh ArrayBuffer (a small Buffer's `.buffer` is the shared pool).
    getRemoteAddressAsText: () =>
      new TextEncoder().encode(
        callerAddress(Buffer.from(res.getRemoteAddressAsText()).toString('latin1'), forwardedFor, trusted),
      ).buffer as ArrayBuffer,
  };
}
