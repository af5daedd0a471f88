// The built-in OAuth 2.0 token endpoint (`POST /oauth/token`, docs/reference/http-api.md §4.30) and the JWKS
// (`GET /.well-known/jwks.json`), as transport-free functions returning {status, body, headers}.
// Grant: client_credentials, client authenticated by `client_secret` (body or HTTP Basic) or a
// `private_key_jwt` assertion. Failed client authentications are counted per remote address and
// per client id; past the budget every request is refused with 429 before any secret is hashed.
// Contract: the request's secret is only ever handed to scrypt; it is never logged or stored.

import { randomUUID } from 'node:crypto';
import { importJWK, jwtVerify, type JWK } from 'jose';
import { decoyHash, verifySecret, type ClientRecord, type ClientStore } from '../../storage/auth/clients.js';
import type { ResolvedAuthConfig } from './config.js';
import type { KeyRing } from './signing-keys.js';
import type { FailureLimiter } from './ratelimit.js';
import { RateLimitError } from './ratelimit.js';

export interface TokenRequest {
  readonly contentType: string | undefined;
  readonly raw: Buffer;
  /** The request's Authorization header (client_secret_basic), when any. */
  readonly authorization?: string | undefined;
  /** The peer address, for the failed-request budget. */
  readonly remoteAddress?: string | undefined;
}

export interface RawReply {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Readonly<Record<string, string>>;
}

const JSON_HEADERS = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', Pragma: 'no-cache' };
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const ASSERTION_ALGS = ['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA'];

class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}

function reply(status: number, body: unknown, extra: Record<string, string> = {}): RawReply {
  return { status, body, headers: { ...JSON_HEADERS, ...extra } };
}

/** Form or JSON body → string parameters; a repeated or non-string parameter is invalid_request. */
function parameters(req: TokenRequest): Map<string, string> {
  const type = (req.contentType ?? '').toLowerCase();
  const text = req.raw.toString('utf8');
  const out = new Map<string, string>();
  if (type.startsWith('application/x-www-form-urlencoded')) {
    for (const [k, v] of new URLSearchParams(text)) {
      if (out.has(k)) throw new OAuthError(400, 'invalid_request', `parameter '${k}' is repeated`);
      out.set(k, v);
    }
    return out;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new OAuthError(400, 'invalid_request', 'the body must be application/x-www-form-urlencoded or JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new OAuthError(400, 'invalid_request', 'the body must be a JSON object');
  for (const [k, v] of Object.entries(body)) {
    if (typeof v === 'string') out.set(k, v);
    else if (v !== null && v !== undefined)
      throw new OAuthError(400, 'invalid_request', `parameter '${k}' must be a string`);
  }
  return out;
}

/** client_secret_basic: `Basic base64(urlencode(id) ":" urlencode(secret))`. */
function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const m = header ? /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(header) : null;
  if (!m) return undefined;
  const decoded = Buffer.from(m[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    return { id: decodeURIComponent(decoded.slice(0, colon)), secret: decodeURIComponent(decoded.slice(colon + 1)) };
  } catch {
    return undefined;
  }
}

export class TokenIssuer {
  /** jti of accepted client assertions → expiry (ms): an assertion is good for one token. */
  readonly #seenAssertions = new Map<string, number>();
  /** Token requests answered with a token (observability for tests and metrics). */
  issued = 0;

  constructor(
    private readonly config: ResolvedAuthConfig,
    private readonly ring: KeyRing | undefined,
    private readonly clients: ClientStore | undefined,
    private readonly failures: FailureLimiter,
  ) {}

  jwks(): RawReply {
    if (!this.ring) return reply(404, { code: 'undefined_endpoint', message: 'Not Found' });
    return reply(200, this.ring.jwks(), { 'Cache-Control': 'public, max-age=300' });
  }

  async issueToken(req: TokenRequest): Promise<RawReply> {
    if (!this.ring || !this.clients) return reply(404, { code: 'undefined_endpoint', message: 'Not Found' });
    let keys: string[] = [];
    let reserved = false;
    try {
      const p = parameters(req);
      const basic = basicCredentials(req.authorization);
      const clientId = basic?.id ?? p.get('client_id') ?? '';
      // Failures are counted per source address and per (client, address), never per client
      // alone: whoever knows a client id could otherwise spend its budget and lock it out for
      // everyone, right secret included. Secrets are 256-bit random, so spreading guesses over
      // many addresses gains nothing.
      const from = req.remoteAddress ?? '';
      keys = [`addr:${from}`, ...(clientId ? [`client:${clientId}\u0000${from}`] : [])];
      this.failures.reserve(keys);
      reserved = true;
      if (p.get('grant_type') !== 'client_credentials')
        throw new OAuthError(400, 'unsupported_grant_type', "grant_type must be 'client_credentials'");
      if (!clientId) throw new OAuthError(400, 'invalid_request', 'client_id is required');
      const client = await this.#authenticateClient(clientId, basic?.secret ?? p.get('client_secret'), p);
      return await this.#grant(client, p.get('audience'), p.get('scope'));
    } catch (err) {
      if (err instanceof RateLimitError) {
        const body = { code: err.code, message: err.message, error: err.code, error_description: err.message };
        return reply(429, body, { 'Retry-After': String(err.retryAfter) });
      }
      if (!(err instanceof OAuthError)) throw err;
      if (err.error === 'invalid_client') reserved = false; // the failure reserved up front stays spent
      return reply(err.status, { error: err.error, error_description: err.description });
    } finally {
      if (reserved) this.failures.release(keys);
    }
  }

  async #authenticateClient(
    clientId: string,
    secret: string | undefined,
    p: Map<string, string>,
  ): Promise<ClientRecord> {
    const client = await this.clients?.lookup(clientId);
    const assertion = p.get('client_assertion');
    if (assertion !== undefined) {
      if (p.get('client_assertion_type') !== ASSERTION_TYPE)
        throw new OAuthError(400, 'invalid_request', `client_assertion_type must be '${ASSERTION_TYPE}'`);
      if (!client?.publicKey || client.revokedAt || !(await this.#assertionValid(client, assertion))) {
        throw new OAuthError(401, 'invalid_client', 'client authentication failed');
      }
      return client;
    }
    if (secret === undefined || secret === '')
      throw new OAuthError(401, 'invalid_client', 'client authentication failed');
    // Hash even for an unknown client so timing does not reveal which ids exist.
    const ok = await verifySecret(secret, client?.secretHash ?? (await decoyHash()));
    // A private_key_jwt client authenticates with its key only (records made before that rule hold a secret).
    if (!client || !ok || client.revokedAt || client.publicKey !== undefined)
      throw new OAuthError(401, 'invalid_client', 'client authentication failed');
    return client;
  }

  async #assertionValid(client: ClientRecord, assertion: string): Promise<boolean> {
    const base = this.config.issuer.replace(/\/+$/, '');
    try {
      const jwk = client.publicKey as JWK;
      const { payload } = await jwtVerify(assertion, (h) => importJWK(jwk, jwk.alg ?? h.alg), {
        issuer: client.id,
        subject: client.id,
        audience: [base, base + '/', base + '/oauth/token'],
        algorithms: jwk.alg ? [jwk.alg] : ASSERTION_ALGS,
        requiredClaims: ['exp', 'jti'],
        maxTokenAge: 600,
        clockTolerance: this.config.clockToleranceSeconds,
      });
      const now = Date.now();
      for (const [j, exp] of this.#seenAssertions) if (exp < now) this.#seenAssertions.delete(j);
      const jti = `${client.id}\u0000${String(payload.jti)}`;
      if (this.#seenAssertions.has(jti)) return false;
      this.#seenAssertions.set(jti, (payload.exp as number) * 1000 + this.config.clockToleranceSeconds * 1000);
      return true;
    } catch {
      return false;
    }
  }

  async #grant(client: ClientRecord, audience: string | undefined, scope: string | undefined): Promise<RawReply> {
    if (audience !== undefined && audience !== this.config.audience) {
      throw new OAuthError(403, 'access_denied', `Service not found: ${audience}`);
    }
    let scopes = client.scopes;
    if (scope !== undefined && scope.trim() !== '') {
      const asked = new Set(scope.split(' '));
      scopes = scopes.filter((s) => asked.has(s));
      if (scopes.length === 0)
        throw new OAuthError(400, 'invalid_scope', 'none of the requested scopes is granted to this client');
    }
    const ring = this.ring as KeyRing;
    const now = Math.floor(Date.now() / 1000);
    const ttl = Math.round(this.config.tokenTtlSeconds);
    const accessToken = await ring.sign({
      iss: this.config.issuer,
      sub: client.id,
      aud: this.config.audience,
      iat: now,
      nbf: now,
      exp: now + ttl,
      jti: randomUUID(),
      client_id: client.id,
      store_id: client.storeId,
      scope: scopes.join(' '),
    });
    this.issued++;
    return reply(200, { access_token: accessToken, token_type: 'Bearer', expires_in: ttl, scope: scopes.join(' ') });
  }
}
