// Bearer JWT verification with jose, the mapping of every failure to its list-B code, and the
// cache of verified tokens (keyed by the exact Authorization header, kept until `exp`).
//
// Failure → code (item 5 of the auth issue):
//   no header / not `Bearer <token>`               → 401 bearer_token_missing
//   garbage, bad signature, alg none/HS*, unknown kid → 401 auth_failed_invalid_bearer_token
//   expired, not yet valid, issued in the future, no exp → 401 invalid_claims
//   iss / aud / sub wrong or missing              → 401 auth_failed_invalid_{issuer,audience,subject}
//   the issuer's JWKS cannot be fetched           → 500 auth_failed_error_fetching_well_known_jwks

import { errors, jwtVerify, type CryptoKey, type JWTHeaderParameters, type JWTPayload } from 'jose';
import { AppError } from '../../errors.js';
import type { Principal } from './principal.js';

const missingToken = (): AppError => new AppError('bearer_token_missing', 'missing bearer token');
export const invalidToken = (why: string): AppError =>
  new AppError('auth_failed_invalid_bearer_token', `invalid bearer token: ${why}`);
const invalidClaims = (why: string): AppError => new AppError('invalid_claims', `invalid claims: ${why}`);

/** Longest Authorization header considered; longer ones are refused before any parsing. */
const MAX_HEADER = 8192;
const BEARER = /^Bearer +(\S+) *$/i;

/** The token of a `Bearer` Authorization header; throws bearer_token_missing otherwise. */
export function bearerToken(header: string | undefined): string {
  if (header === undefined || header === '') throw missingToken();
  if (header.length > MAX_HEADER) throw invalidToken('too long');
  const m = BEARER.exec(header);
  if (!m) throw missingToken();
  return m[1] as string;
}

export type KeyResolver = (header: JWTHeaderParameters) => CryptoKey | Promise<CryptoKey>;

export interface JwtRules {
  readonly issuer: string;
  readonly audience: string;
  readonly algorithms: readonly string[];
  readonly clockToleranceSeconds: number;
  readonly key: KeyResolver;
}

function mapJoseError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof errors.JWTExpired) return invalidClaims('the token has expired');
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'iss') return new AppError('auth_failed_invalid_issuer', 'invalid issuer');
    if (err.claim === 'aud') return new AppError('auth_failed_invalid_audience', 'invalid audience');
    if (err.claim === 'sub') return new AppError('auth_failed_invalid_subject', 'invalid subject');
    if (err.claim === 'nbf') return invalidClaims('the token is not valid yet');
    if (err.claim === 'exp') return invalidClaims(err.reason === 'missing' ? 'the token has no expiry' : 'bad expiry');
    return invalidClaims(`bad '${err.claim}' claim`);
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return invalidToken('signature algorithm not allowed');
  if (err instanceof errors.JWSSignatureVerificationFailed) return invalidToken('signature verification failed');
  if (err instanceof errors.JOSEError) return invalidToken('malformed token');
  // WebCrypto rejects keys of the wrong kind (e.g. an EC key for an RSA alg) with a TypeError.
  return invalidToken('malformed token');
}

/**
 * Verifies signature and standard claims; `exp` is required, `iat` may not lie in the future.
 * Returns the payload and header, or throws an AppError with the code above.
 */
export async function verifyJwt(
  token: string,
  rules: JwtRules,
): Promise<{ payload: JWTPayload; header: JWTHeaderParameters }> {
  try {
    const { payload, protectedHeader } = await jwtVerify(token, rules.key, {
      issuer: rules.issuer,
      audience: rules.audience,
      algorithms: [...rules.algorithms],
      requiredClaims: ['exp'],
      clockTolerance: rules.clockToleranceSeconds,
    });
    const now = Date.now() / 1000;
    if (typeof payload.iat === 'number' && payload.iat > now + rules.clockToleranceSeconds)
      throw invalidClaims('issued in the future');
    return { payload, header: protectedHeader };
  } catch (err) {
    throw mapJoseError(err);
  }
}

const CACHE_MAX = 50_000;

/**
 * Verified principals by exact Authorization header. A hit costs one Map lookup and a clock read;
 * entries die at the token's `exp` (or when their signing key is retired). Only successful
 * verifications are stored, so a cached header is byte-identical to one jose accepted.
 */
export class TokenCache {
  readonly #entries = new Map<string, Principal>();
  readonly #timer: NodeJS.Timeout;

  constructor() {
    this.#timer = setInterval(() => this.sweep(), 60_000);
    this.#timer.unref();
  }

  get(header: string): Principal | undefined {
    const p = this.#entries.get(header);
    if (p === undefined) return undefined;
    if (Date.now() < p.expiresAt) return p;
    this.#entries.delete(header);
    return undefined;
  }

  set(header: string, p: Principal): void {
    if (this.#entries.size >= CACHE_MAX) {
      let n = CACHE_MAX >>> 3;
      for (const k of this.#entries.keys()) {
        if (n-- <= 0) break;
        this.#entries.delete(k);
      }
    }
    this.#entries.set(header, p);
  }

  /** Drops the tokens signed by `kid` (a retired key) or, without `kid`, every expired entry. */
  sweep(kid?: string): void {
    const now = Date.now();
    for (const [k, p] of this.#entries)
      if (p.expiresAt <= now || (kid !== undefined && p.kid === kid)) this.#entries.delete(k);
  }

  get size(): number {
    return this.#entries.size;
  }

  close(): void {
    clearInterval(this.#timer);
  }
}
