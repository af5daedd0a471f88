// The one call the transports make per request, before the body is parsed (docs/reference/decisions.md D1): authenticate,
// authorize (store binding, scope) and take from the rate limit. The outcome is held as data so
// a transport can start reading the body meanwhile and decide later, without ever leaving a
// rejected promise unobserved. Unknown operation names fail closed (only PUBLIC_ROUTES pass).

import { AppError } from '../../errors.js';
import type { Peer } from './authenticator.js';
import { isOperation, OPERATIONS, PUBLIC_ROUTES, type Operation } from './operations.js';
import { ANONYMOUS, authorize, type Principal } from './principal.js';
import type { AuthService } from './service.js';

/** Receives the authenticated principal (see `admit`). */
interface Seen {
  principal: Principal | undefined;
}

export type Admission =
  | { readonly principal: Principal; readonly error?: undefined; readonly pending?: undefined }
  | { readonly error: unknown; readonly principal?: undefined; readonly pending?: undefined }
  | { readonly pending: Promise<Principal>; readonly principal?: undefined; readonly error?: undefined };

/** The principal of unauthenticated public routes (health probes). */
const PUBLIC: Principal = Object.freeze({
  clientId: '',
  storeId: undefined,
  scopes: new Set<string>(),
  expiresAt: Infinity,
});

/**
 * Never throws. `auth` undefined = no auth subsystem configured (embedded use): every call passes.
 * `seen.principal` receives the authenticated principal even when authorization then refuses the
 * call, so the store log names the client of a 403 (an object, not a callback: the HTTP exchange
 * passes itself, and a closure per request is garbage on the hot path).
 */
export function admit(
  auth: AuthService | undefined,
  op: string,
  authorizationHeader: string | undefined,
  storeId: string | undefined,
  seen?: Seen,
  peer?: Peer,
): Admission {
  if (!auth || PUBLIC_ROUTES.has(op)) return { principal: PUBLIC };
  if (!isOperation(op)) {
    // An endpoint missing from the scope table is refused whenever credentials are checked.
    if (auth.config.mode === 'none') return { principal: PUBLIC };
    return { error: new AppError('insufficient_permissions', `no scope grants ${op}`) };
  }
  try {
    const p = auth.authenticator.verify(authorizationHeader, peer);
    if (!(p instanceof Promise)) return { principal: decide(auth, p, op, storeId, seen) };
    const pending = p.then((q) => decide(auth, q, op, storeId, seen));
    pending.catch(() => undefined); // observed here; the transport awaits `pending` for the error
    return { pending };
  } catch (err) {
    return { error: err };
  }
}

/** The admission of one route's requests: `admit` with the operation fixed. */
type RouteGate = (
  authorizationHeader: string | undefined,
  storeId: string | undefined,
  seen?: Seen,
  peer?: Peer,
) => Admission;

const ADMIT_PUBLIC: Admission = Object.freeze({ principal: PUBLIC });
const ADMIT_ANONYMOUS: Admission = Object.freeze({ principal: ANONYMOUS });

/**
 * `admit` for one operation, decided once where the answer cannot depend on the request: no auth
 * subsystem or a public route (the public principal), and mode none without rate limits, which
 * admits every call as `anonymous` (it reads no credential, binds every store and grants every
 * scope, so the per-call lookups of the operation's rule would only ever say yes).
 */
export function routeGate(auth: AuthService | undefined, op: string): RouteGate {
  if (!auth || PUBLIC_ROUTES.has(op)) return () => ADMIT_PUBLIC;
  if (auth.authenticator.mode === 'none' && !auth.limiter.limited) {
    const fixed = isOperation(op) ? ADMIT_ANONYMOUS : ADMIT_PUBLIC;
    return () => fixed;
  }
  return (authorizationHeader, storeId, seen, peer) => admit(auth, op, authorizationHeader, storeId, seen, peer);
}

function decide(
  auth: AuthService,
  p: Principal,
  op: Operation,
  storeId: string | undefined,
  seen: Seen | undefined,
): Principal {
  if (seen) seen.principal = p;
  authorize(p, op, storeId);
  auth.limiter.take(p, storeId, OPERATIONS[op].opClass);
  return p;
}

/** The admitted principal, or the refusal thrown. */
export function admitted(a: Admission): Principal | Promise<Principal> {
  if (a.principal) return a.principal;
  if (a.pending) return a.pending;
  throw a.error;
}
