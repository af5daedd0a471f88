// Token forging for the attack tables: real keys, real signatures, one fault per token.

import { createHmac, createPublicKey, type JsonWebKey } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export const b64 = (v: unknown): string =>
  Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

export const nowS = (): number => Math.floor(Date.now() / 1000);

/** A JWT signed with `key` (ES256 or RS256 per `alg`), header and claims exactly as given. */
export function sign(key: CryptoKey, alg: string, kid: string | undefined, claims: JWTPayload): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT', ...(kid ? { kid } : {}) }).sign(key);
}

/** An unsecured JWT (`alg: none`, empty signature). */
export function algNone(claims: JWTPayload, kid?: string): string {
  return `${b64({ alg: 'none', typ: 'JWT', ...(kid ? { kid } : {}) })}.${b64(claims)}.`;
}

/**
 * Algorithm confusion: HS256 keyed with the server's *public* key (its JWK JSON and its PEM are
 * both tried by attackers; the PEM form is used here), under the real key's kid.
 */
export function hs256WithPublicKey(publicJwk: JWK, claims: JWTPayload): string {
  const pem = createPublicKey({ key: publicJwk as JsonWebKey, format: 'jwk' })
    .export({ type: 'spki', format: 'pem' })
    .toString();
  const head = `${b64({ alg: 'HS256', typ: 'JWT', kid: publicJwk.kid })}.${b64(claims)}`;
  return `${head}.${createHmac('sha256', pem).update(head).digest('base64url')}`;
}

/** Flips one character of the signature (still valid base64url, wrong signature). */
export function tamper(token: string): string {
  const i = token.lastIndexOf('.') + 5;
  const c = token[i] === 'A' ? 'B' : 'A';
  return token.slice(0, i) + c + token.slice(i + 1);
}

export interface TestIssuer {
  readonly url: string;
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
  /** Requests the JWKS endpoint served. */
  hits: number;
  /** When false the JWKS endpoint answers 503 (and `close()` stops it entirely). */
  up: boolean;
  close(): Promise<void>;
}

/** A real external issuer on 127.0.0.1: RS256 key, `/.well-known/jwks.json`. */
export async function startIssuer(): Promise<TestIssuer> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid: 'test-rs-1', alg: 'RS256', use: 'sig' };
  const server: Server = createServer((req, res) => {
    state.hits++;
    if (!state.up || req.url !== '/.well-known/jwks.json') {
      res.writeHead(state.up ? 404 : 503).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: [publicJwk] }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const state: TestIssuer = {
    url: `http://127.0.0.1:${port}`,
    kid: publicJwk.kid,
    privateKey,
    publicJwk,
    hits: 0,
    up: true,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  return state;
}
