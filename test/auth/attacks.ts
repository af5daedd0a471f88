// The attack table of the auth issue (item 5), as data: each row builds one Authorization header
// with exactly one fault and names the status and code it must get. Used against the
// authenticator directly and against a real server.

import { generateKeyPair, type JWK, type JWTPayload } from 'jose';
import { algNone, hs256WithPublicKey, nowS, sign, tamper } from './helpers.js';

export interface AttackContext {
  readonly issuer: string;
  /** With the trailing slash. */
  readonly audience: string;
  readonly clientId: string;
  readonly revokedClientId: string;
  /** The store the client is bound to. */
  readonly storeA: string;
  /** Signs claims with the server's real current key (header carries its kid). */
  readonly signReal: (claims: JWTPayload) => Promise<string>;
  readonly publicJwk: JWK;
}

export interface AttackRow {
  readonly name: string;
  /** The Authorization header (undefined = none sent). */
  readonly header: (c: AttackContext) => Promise<string | undefined>;
  /** The store in the request path (default storeA). */
  readonly store?: 'A' | 'B' | 'C';
  readonly status: number;
  readonly code: string;
}

export function goodClaims(c: AttackContext, extra: JWTPayload = {}): JWTPayload {
  const now = nowS();
  return {
    iss: c.issuer,
    sub: c.clientId,
    aud: c.audience,
    iat: now,
    nbf: now,
    exp: now + 300,
    client_id: c.clientId,
    store_id: c.storeA,
    scope: 'check:tuples read:tuples write:tuples',
    ...extra,
  };
}

function without(claims: JWTPayload, key: string): JWTPayload {
  const copy: Record<string, unknown> = { ...claims };
  delete copy[key];
  return copy as JWTPayload;
}

const bearer = (t: string): string => `Bearer ${t}`;

export const ATTACKS: readonly AttackRow[] = [
  { name: 'no Authorization header', header: async () => undefined, status: 401, code: 'bearer_token_missing' },
  {
    name: 'Basic scheme instead of Bearer',
    header: async () => 'Basic dXNlcjpwYXNz',
    status: 401,
    code: 'bearer_token_missing',
  },
  { name: 'empty bearer', header: async () => 'Bearer ', status: 401, code: 'bearer_token_missing' },
  {
    name: 'garbage token',
    header: async () => bearer('garbage'),
    status: 401,
    code: 'auth_failed_invalid_bearer_token',
  },
  {
    name: 'three garbage segments',
    header: async () => bearer('a.b.c'),
    status: 401,
    code: 'auth_failed_invalid_bearer_token',
  },
  {
    name: 'bad signature',
    header: async (c) => bearer(tamper(await c.signReal(goodClaims(c)))),
    status: 401,
    code: 'auth_failed_invalid_bearer_token',
  },
  {
    name: 'alg none',
    header: async (c) => bearer(algNone(goodClaims(c), c.publicJwk.kid)),
    status: 401,
    code: 'auth_failed_invalid_bearer_token',
  },
  {
    name: 'HS256 keyed with the public key (algorithm confusion)',
    header: async (c) => bearer(hs256WithPublicKey(c.publicJwk, goodClaims(c))),
    status: 401,
    code: 'auth_failed_invalid_bearer_token',
  },
  {
    name: 'unknown kid (signed by a foreign key)',
    header: async (c) => {
      const { privateKey } = await generateKeyPair('ES256');
      return bearer(await sign(privateKey, 'ES256', 'not-a-latch-key', goodClaims(c)));
    },
    status: 401,
    code: 'auth_failed_invalid_bearer_token',
  },
  {
    name: 'foreign key under the real kid',
    header: async (c) => {
      const { privateKey } = await generateKeyPair('ES256');
      return bearer(await sign(privateKey, 'ES256', c.publicJwk.kid, goodClaims(c)));
    },
    status: 401,
    code: 'auth_failed_invalid_bearer_token',
  },
  {
    name: 'expired',
    header: async (c) =>
      bearer(await c.signReal(goodClaims(c, { iat: nowS() - 7200, nbf: nowS() - 7200, exp: nowS() - 3600 }))),
    status: 401,
    code: 'invalid_claims',
  },
  {
    name: 'not yet valid',
    header: async (c) => bearer(await c.signReal(goodClaims(c, { nbf: nowS() + 3600, exp: nowS() + 7200 }))),
    status: 401,
    code: 'invalid_claims',
  },
  {
    name: 'issued in the future',
    header: async (c) =>
      bearer(await c.signReal(goodClaims(c, { iat: nowS() + 3600, nbf: undefined, exp: nowS() + 7200 }))),
    status: 401,
    code: 'invalid_claims',
  },
  {
    name: 'no exp',
    header: async (c) => bearer(await c.signReal(without(goodClaims(c), 'exp'))),
    status: 401,
    code: 'invalid_claims',
  },
  {
    name: 'wrong subject (no such client)',
    header: async (c) => bearer(await c.signReal(goodClaims(c, { sub: 'nobody', client_id: 'nobody' }))),
    status: 401,
    code: 'auth_failed_invalid_subject',
  },
  {
    name: 'subject and client_id disagree',
    header: async (c) => bearer(await c.signReal(goodClaims(c, { client_id: 'someone-else' }))),
    status: 401,
    code: 'auth_failed_invalid_subject',
  },
  {
    name: 'wrong audience (another region)',
    header: async (c) => bearer(await c.signReal(goodClaims(c, { aud: 'https://api.eu1.fga.dev/' }))),
    status: 401,
    code: 'auth_failed_invalid_audience',
  },
  {
    name: 'audience without the trailing slash',
    header: async (c) => bearer(await c.signReal(goodClaims(c, { aud: c.audience.replace(/\/$/, '') }))),
    status: 401,
    code: 'auth_failed_invalid_audience',
  },
  {
    name: 'no audience',
    header: async (c) => bearer(await c.signReal(without(goodClaims(c), 'aud'))),
    status: 401,
    code: 'auth_failed_invalid_audience',
  },
  {
    name: 'wrong issuer',
    header: async (c) => bearer(await c.signReal(goodClaims(c, { iss: 'https://evil.example/' }))),
    status: 401,
    code: 'auth_failed_invalid_issuer',
  },
  {
    name: 'missing store claim',
    header: async (c) => bearer(await c.signReal(without(goodClaims(c), 'store_id'))),
    status: 401,
    code: 'missing_store_in_bearer_token',
  },
  {
    name: 'token for store A on store B (exists)',
    header: async (c) => bearer(await c.signReal(goodClaims(c))),
    store: 'B',
    status: 403,
    code: 'store_mismatch_in_bearer_token',
  },
  {
    name: 'token for store A on store C (does not exist)',
    header: async (c) => bearer(await c.signReal(goodClaims(c))),
    store: 'C',
    status: 403,
    code: 'store_mismatch_in_bearer_token',
  },
  {
    name: 'scope missing',
    header: async (c) => bearer(await c.signReal(goodClaims(c, { scope: 'read:tuples' }))),
    status: 403,
    code: 'insufficient_permissions',
  },
  {
    name: 'revoked client',
    header: async (c) =>
      bearer(await c.signReal(goodClaims(c, { sub: c.revokedClientId, client_id: c.revokedClientId }))),
    status: 403,
    code: 'unauthorized_principal',
  },
];
