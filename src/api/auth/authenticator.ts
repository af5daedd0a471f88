// The four authentication modes behind one interface the HTTP layer calls once per request,
// before the body is parsed (docs/reference/decisions.md D1): `authenticate(header, op, storeId)` = verify the credential
// (synchronously on a warm token), then authorize the operation (store binding, scope).
// Example: `authenticate('Bearer eyJ…', 'Check', '01J…')` → Principal, or throws AppError
// (401 bearer_token_missing, 403 insufficient_permissions, …).

import { createHash, timingSafeEqual } from 'node:crypto';
import { createRemoteJWKSet, errors, type JWTPayload } from 'jose';
import { AppError } from '../../errors.js';
import type { ClientStore } from '../../storage/auth/clients.js';
import type { ResolvedAuthConfig } from './config.js';
import type { KeyRing } from './signing-keys.js';
import { SIGNING_ALG } from './signing-keys.js';
import type { Operation } from './operations.js';
import { ANONYMOUS, authorize, type Principal } from './principal.js';
import type { FailureLimiter } from './ratelimit.js';
import { bearerToken, invalidToken, TokenCache, verifyJwt, type JwtRules, type KeyResolver } from './verifier.js';

/** Where a request comes from; read only on the slow path (uWS responses satisfy it). */
export interface Peer {
  getRemoteAddressAsText(): ArrayBuffer;
}

function address(peer: Peer | undefined): string[] {
  if (!peer) return [];
  try {
    return [Buffer.from(peer.getRemoteAddressAsText()).toString('latin1')];
  } catch {
    return []; // a response already finished has no address left to read
  }
}

export interface Authenticator {
  readonly mode: ResolvedAuthConfig['mode'];
  /** Authentication and authorization of one call; throws AppError. Sync on a cache hit. */
  authenticate(
    authorizationHeader: string | undefined,
    op: Operation,
    storeId: string | undefined,
  ): Promise<Principal> | Principal;
  /**
   * Authentication only (e.g. once per msgpack channel connection); pair with `authorize`.
   * `peer` names the caller's address: failed verifications are counted per address and, past
   * the budget, refused before any signature work (429 auth_rate_limit_exceeded).
   */
  verify(authorizationHeader: string | undefined, peer?: Peer): Promise<Principal> | Principal;
  close(): void;
}

function scopesOf(payload: JWTPayload): Set<string> {
  const out = new Set<string>();
  const { scope, scp, permissions } = payload as Record<string, unknown>;
  if (typeof scope === 'string') for (const s of scope.split(' ')) if (s) out.add(s);
  for (const list of [scp, permissions])
    if (Array.isArray(list)) for (const s of list) if (typeof s === 'string') out.add(s);
  return out;
}

function authorized(
  p: Principal | Promise<Principal>,
  op: Operation,
  storeId: string | undefined,
): Principal | Promise<Principal> {
  if (p instanceof Promise) return p.then((q) => (authorize(q, op, storeId), q));
  authorize(p, op, storeId);
  return p;
}

class NoAuth implements Authenticator {
  readonly mode = 'none' as const;
  verify(): Principal {
    return ANONYMOUS;
  }
  authenticate(): Principal {
    return ANONYMOUS;
  }
  close(): void {}
}

/** Pre-shared keys, compared as SHA-256 digests in constant time (no length or prefix leak). */
class PresharedAuth implements Authenticator {
  readonly mode = 'preshared' as const;
  readonly #keys: { digest: Buffer; principal: Principal }[];

  constructor(
    config: ResolvedAuthConfig,
    private readonly failures: FailureLimiter,
  ) {
    this.#keys = config.presharedKeys.map((k, i) => ({
      digest: createHash('sha256').update(k.key).digest(),
      principal: {
        clientId: k.clientId ?? `preshared-${i + 1}`,
        storeId: k.storeId ?? '*',
        scopes: k.scopes ? new Set(k.scopes) : 'all',
        expiresAt: Infinity,
      },
    }));
  }

  verify(header: string | undefined, peer?: Peer): Principal {
    const token = bearerToken(header);
    const from = address(peer);
    this.failures.check(from);
    const digest = createHash('sha256').update(token).digest();
    let found: Principal | undefined;
    for (const k of this.#keys) if (timingSafeEqual(k.digest, digest)) found = k.principal;
    if (!found) {
      this.failures.fail(from);
      throw new AppError('unauthenticated', 'unauthenticated');
    }
    return found;
  }

  authenticate(header: string | undefined, op: Operation, storeId: string | undefined): Principal {
    return authorized(this.verify(header), op, storeId) as Principal;
  }

  close(): void {}
}

/**
 * The operator's admin key (client-credentials): account-level, client management only, as the
 * account administrator (`admin:clients`: it may mint any scopes; it opens no store itself).
 */
const ADMIN: Principal = Object.freeze({
  clientId: 'admin-key',
  storeId: '*',
  scopes: new Set(['manage:clients', 'admin:clients']),
  expiresAt: Infinity,
});

/** Bearer JWTs (oidc and client-credentials): verify once, then serve from the cache until exp. */
class JwtAuth implements Authenticator {
  readonly cache = new TokenCache();

  constructor(
    readonly mode: 'oidc' | 'client-credentials',
    private readonly rules: JwtRules,
    private readonly principalOf: (payload: JWTPayload, kid: string | undefined) => Principal,
    private readonly revoked: (clientId: string) => boolean,
    private readonly failures: FailureLimiter,
    /** SHA-256 of the admin key, compared in constant time before any JWT work. */
    private readonly adminDigest?: Buffer,
  ) {}

  #live(p: Principal): Principal {
    if (this.revoked(p.clientId)) throw new AppError('unauthorized_principal', 'the client has been revoked');
    return p;
  }

  verify(header: string | undefined, peer?: Peer): Principal | Promise<Principal> {
    if (header !== undefined) {
      const hit = this.cache.get(header);
      if (hit !== undefined) return this.#live(hit);
    }
    const token = bearerToken(header);
    const from = address(peer);
    if (this.adminDigest && !jwtShaped(token)) return this.#admin(token, from);
    // The failure is taken before the signature work and given back unless the token is refused
    // (401): verifications in flight together cannot overdraw the address's budget.
    this.failures.reserve(from);
    if (this.adminDigest && timingSafeEqual(this.adminDigest, createHash('sha256').update(token).digest())) {
      this.failures.release(from);
      return ADMIN;
    }
    return verifyJwt(token, this.rules)
      .then(({ payload, header: h }) => {
        const p = this.principalOf(payload, h.kid);
        this.cache.set(header as string, p);
        this.failures.release(from);
        return p;
      })
      .catch((err: unknown) => {
        // Forged or stale tokens (any 401) spend the address's budget; an issuer outage does not.
        if (!(err instanceof AppError && err.status === 401)) this.failures.release(from);
        throw err;
      })
      .then((p) => this.#live(p));
  }

  /**
   * A credential that is no JWT can only be the admin key: its failures are counted in a budget
   * of their own per address, so other callers' failed tokens from the same address (everyone
   * behind one reverse proxy) never lock the operator out, while guesses at the key stay limited.
   */
  #admin(token: string, from: readonly string[]): Principal {
    const keys = from.map((a) => `admin-key\u0000${a}`);
    this.failures.reserve(keys);
    if (timingSafeEqual(this.adminDigest as Buffer, createHash('sha256').update(token).digest())) {
      this.failures.release(keys);
      return ADMIN;
    }
    throw invalidToken('not a token');
  }

  authenticate(header: string | undefined, op: Operation, storeId: string | undefined): Principal | Promise<Principal> {
    return authorized(this.verify(header), op, storeId);
  }

  close(): void {
    this.cache.close();
  }
}

/** Three dot-separated parts, as every JWS compact serialisation has. */
function jwtShaped(token: string): boolean {
  return token.split('.').length === 3;
}

function expiry(payload: JWTPayload): number {
  return (payload.exp as number) * 1000;
}

/** latch's own tokens: ES256 from the key ring; `sub` must be a registered client. */
export function clientCredentialsAuth(
  config: ResolvedAuthConfig,
  ring: KeyRing,
  clients: ClientStore,
  failures: FailureLimiter,
): JwtAuth {
  const key: KeyResolver = (h) => {
    const k = ring.publicKey(h.kid);
    if (!k) throw invalidToken('unknown key id');
    return k;
  };
  const rules: JwtRules = {
    issuer: config.issuer,
    audience: config.audience,
    algorithms: [SIGNING_ALG],
    clockToleranceSeconds: config.clockToleranceSeconds,
    key,
  };
  const principalOf = (payload: JWTPayload, kid: string | undefined): Principal => {
    const sub = payload.sub;
    const client = typeof sub === 'string' ? clients.get(sub) : undefined;
    if (!client || (payload.client_id !== undefined && payload.client_id !== sub)) {
      throw new AppError('auth_failed_invalid_subject', 'invalid subject');
    }
    const store = payload.store_id;
    return {
      clientId: client.id,
      storeId: typeof store === 'string' && store ? store : undefined,
      scopes: scopesOf(payload),
      expiresAt: expiry(payload),
      kid,
    };
  };
  const admin = config.adminKey === undefined ? undefined : createHash('sha256').update(config.adminKey).digest();
  const auth = new JwtAuth(
    'client-credentials',
    rules,
    principalOf,
    (id) => clients.get(id)?.revokedAt !== undefined,
    failures,
    admin,
  );
  ring.onRetire = (kid) => auth.cache.sweep(kid);
  return auth;
}

/** An external issuer's tokens, verified against its JWKS; a fetch failure never lets a call in. */
export function oidcAuth(config: ResolvedAuthConfig, failures: FailureLimiter): JwtAuth {
  const remote = createRemoteJWKSet(new URL(config.jwksUri), {
    timeoutDuration: 5000,
    cooldownDuration: 30_000,
    cacheMaxAge: 600_000,
  });
  const key: KeyResolver = async (h) => {
    try {
      return await remote(h);
    } catch (err) {
      if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys)
        throw invalidToken('unknown key id');
      if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported)
        throw invalidToken('signature algorithm not allowed');
      throw new AppError('auth_failed_error_fetching_well_known_jwks', "error fetching the issuer's signing keys", {
        cause: err,
      });
    }
  };
  const rules: JwtRules = {
    issuer: config.issuer,
    audience: config.audience,
    algorithms: config.algorithms,
    clockToleranceSeconds: config.clockToleranceSeconds,
    key,
  };
  const subjects = config.subjects ? new Set(config.subjects) : undefined;
  const principalOf = (payload: JWTPayload, kid: string | undefined): Principal => {
    const sub = payload.sub;
    if (typeof sub !== 'string' || sub === '' || (subjects && !subjects.has(sub)))
      throw new AppError('auth_failed_invalid_subject', 'invalid subject');
    const store = (payload as Record<string, unknown>)[config.storeClaim];
    const clientId =
      typeof payload.client_id === 'string' ? payload.client_id : typeof payload.azp === 'string' ? payload.azp : sub;
    return {
      clientId,
      storeId: typeof store === 'string' && store ? store : undefined,
      scopes: scopesOf(payload),
      expiresAt: expiry(payload),
      kid,
    };
  };
  return new JwtAuth('oidc', rules, principalOf, () => false, failures);
}

export function noAuth(): Authenticator {
  return new NoAuth();
}

export function presharedAuth(config: ResolvedAuthConfig, failures: FailureLimiter): Authenticator {
  return new PresharedAuth(config, failures);
}
