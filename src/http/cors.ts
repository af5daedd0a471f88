// Cross-origin policy (docs/configuration.md `--cors-origin`): which browser origins may call the
// API. Configured origins (or `*`) are echoed with credentials allowed; without a configuration an
// authenticating server admits any origin (browsers never attach its bearer tokens by themselves),
// and a server in auth mode `none` admits none, so a page on another origin cannot drive a local
// development server. A request whose Origin is refused gets 403 `forbidden` before any work; a
// request from the server's own origin (the playground) or without an Origin is always served.

import { AppError } from '../errors.js';

export class CorsPolicy {
  readonly #any: boolean;
  readonly #origins: ReadonlySet<string>;

  /** `origins`: exact origins (`https://app.example.com`) or `*`; undefined → `openByDefault`. */
  constructor(origins: readonly string[] | undefined, openByDefault: boolean) {
    this.#any = origins === undefined ? openByDefault : origins.includes('*');
    this.#origins = new Set((origins ?? []).filter((o) => o !== '*').map((o) => o.replace(/\/+$/, '')));
  }

  /** True when replies to `origin` carry the CORS headers (the origin is echoed). */
  echoes(origin: string): boolean {
    return origin !== '' && (this.#any || this.#origins.has(origin));
  }

  /**
   * True when a request with this Origin header may be served: none, an admitted origin, or the
   * server's own (`host`, read only when needed: the Host header of the request).
   */
  admits(origin: string, host: () => string): boolean {
    return origin === '' || this.echoes(origin) || sameOrigin(origin, host());
  }
}

/** `http://h:p` or `https://h:p` naming the Host the request was sent to. */
function sameOrigin(origin: string, host: string): boolean {
  const at = origin.indexOf('://');
  return at > 0 && host !== '' && origin.slice(at + 3) === host;
}

export function crossOriginRefused(origin: string): AppError {
  return new AppError('forbidden', `cross-origin requests from ${origin} are not allowed (see --cors-origin)`);
}
