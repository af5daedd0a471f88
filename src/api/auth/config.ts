// Authentication configuration: the four modes, their required settings and defaults. `resolve`
// refuses a configuration that would start an unsafe or unusable server (thrown AuthConfigError
// with a message naming the missing setting).

import type { OpClass } from './operations.js';

export type AuthMode = 'none' | 'preshared' | 'oidc' | 'client-credentials';

/** A pre-shared key; bare strings get full access on every store (OpenFGA semantics). */
export interface PresharedKey {
  readonly key: string;
  readonly clientId?: string | undefined;
  /** Store binding (`*` or omitted = every store). */
  readonly storeId?: string | undefined;
  /** Omitted = every scope. */
  readonly scopes?: readonly string[] | undefined;
}

export interface Bucket {
  /** Sustained requests per second. */
  readonly perSecond: number;
  /** Requests allowed at once. */
  readonly burst: number;
}

export interface AuthConfig {
  readonly mode: AuthMode;
  /** `none` only: allow a non-loopback bind address (a loud warning is logged). */
  readonly allowNonLoopback?: boolean | undefined;
  readonly presharedKeys?: readonly (string | PresharedKey)[] | undefined;
  /** oidc: the external issuer (`iss`); client-credentials: latch's own issuer URL. */
  readonly issuer?: string | undefined;
  /** The region's base URL; tokens must carry it with a trailing slash as `aud`. */
  readonly audience?: string | undefined;
  /** oidc: JWKS URL (default `<issuer>/.well-known/jwks.json`). */
  readonly jwksUri?: string | undefined;
  /** oidc: accepted signature algorithms (default RS256, ES256). */
  readonly algorithms?: readonly string[] | undefined;
  /** oidc: accepted subjects (`sub`); omitted = any non-empty subject. */
  readonly subjects?: readonly string[] | undefined;
  /** oidc: claim carrying the bound store (default `store_id`). */
  readonly storeClaim?: string | undefined;
  /** client-credentials: lifetime of issued tokens (default 3600 s). */
  readonly tokenTtlSeconds?: number | undefined;
  /** client-credentials: signing key rotation period (default 1 day). */
  readonly keyRotationSeconds?: number | undefined;
  readonly clockToleranceSeconds?: number | undefined;
  /**
   * Per operation class, per (client, store). Default 10 000 000/s, burst 10 000 000 (docs/reference/decisions.md D7: never
   * hit by suites, benchmarks or the batched msgpack channel); mode none: off unless given.
   */
  readonly rateLimits?: Partial<Record<OpClass, Bucket>> | undefined;
  /** Failed token requests per remote address and per (client id, address) (default burst 10, 10/min). */
  readonly tokenFailures?: Bucket | undefined;
  /** Failed bearer verifications per remote address (default burst 100, 10/s). */
  readonly authFailures?: Bucket | undefined;
  /** Store-log retention (default 7 days; mode none: 0); 0 disables recording. */
  readonly logRetentionDays?: number | undefined;
  /**
   * client-credentials: an operator key (≥ 16 characters) accepted as `Bearer <key>` on the client
   * management endpoints only (`/clients`): account-level, scope `manage:clients` and nothing else.
   * It creates the first clients of a server whose auth DB cannot be reached (`--datastore memory`).
   */
  readonly adminKey?: string | undefined;
}

export interface ResolvedAuthConfig {
  readonly mode: AuthMode;
  readonly presharedKeys: readonly PresharedKey[];
  readonly issuer: string;
  /** Always ends with exactly one `/`. */
  readonly audience: string;
  readonly jwksUri: string;
  readonly algorithms: readonly string[];
  readonly subjects: readonly string[] | undefined;
  readonly storeClaim: string;
  readonly tokenTtlSeconds: number;
  readonly keyRotationSeconds: number;
  readonly clockToleranceSeconds: number;
  /** Undefined = no rate limiting (mode none without configured limits). */
  readonly rateLimits: Readonly<Record<OpClass, Bucket>> | undefined;
  readonly tokenFailures: Bucket;
  readonly authFailures: Bucket;
  readonly logRetentionDays: number;
  readonly adminKey: string | undefined;
  /** Set when `none` runs on a non-loopback address by force. */
  readonly warning: string | undefined;
}

export class AuthConfigError extends Error {
  override readonly name = 'AuthConfigError';
}

/** One client on one store at 10M req/s: above what one latch process serves, channel included. */
export const DEFAULT_BUCKET: Bucket = { perSecond: 10_000_000, burst: 10_000_000 };
export const OP_CLASSES: readonly OpClass[] = [
  'stores',
  'model-read',
  'model-write',
  'assertions',
  'read',
  'write',
  'read-changes',
  'check',
  'expand',
  'list-objects',
  'list-users',
  'logs',
  'indexes',
];

export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h) || h === '::ffff:127.0.0.1';
}

function url(value: string | undefined, what: string, mode: AuthMode): string {
  if (!value) throw new AuthConfigError(`auth mode '${mode}' needs ${what} (refusing to start without it)`);
  try {
    const u = new URL(value);
    if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new Error('not http(s)');
  } catch {
    throw new AuthConfigError(`${what} must be an absolute http(s) URL, got '${value}'`);
  }
  return value;
}

function positive(v: number | undefined, fallback: number, what: string): number {
  if (v === undefined) return fallback;
  if (!(Number.isFinite(v) && v > 0)) throw new AuthConfigError(`${what} must be a positive number, got ${String(v)}`);
  return v;
}

/** Checks `config` for a server bound to `host`; throws AuthConfigError when it cannot start. */
export function resolveAuthConfig(config: AuthConfig, host: string): ResolvedAuthConfig {
  const mode = config.mode;
  if (!['none', 'preshared', 'oidc', 'client-credentials'].includes(mode))
    throw new AuthConfigError(`unknown auth mode '${String(mode)}'`);
  let warning: string | undefined;
  if (mode === 'none' && !isLoopback(host)) {
    if (!config.allowNonLoopback) {
      throw new AuthConfigError(
        `auth mode 'none' serves ${host} without authentication; bind a loopback address, choose an auth mode, or force it with --auth-allow-non-loopback (LATCH_AUTH_ALLOW_NON_LOOPBACK=true)`,
      );
    }
    warning = `AUTHENTICATION IS DISABLED on ${host}: anyone who can reach this address can read and change every store`;
  }
  const presharedKeys = (config.presharedKeys ?? []).map((k) => (typeof k === 'string' ? { key: k } : k));
  if (mode === 'preshared' && presharedKeys.length === 0)
    throw new AuthConfigError(`auth mode 'preshared' needs at least one key`);
  if (presharedKeys.some((k) => k.key.length < 16))
    throw new AuthConfigError('pre-shared keys must be at least 16 characters');
  const needsIssuer = mode === 'oidc' || mode === 'client-credentials';
  const issuer = needsIssuer ? url(config.issuer, 'an issuer', mode) : (config.issuer ?? '');
  const rawAudience = needsIssuer
    ? url(config.audience, 'an audience (the base URL of this region)', mode)
    : (config.audience ?? '');
  const audience = rawAudience === '' ? '' : rawAudience.replace(/\/+$/, '') + '/';
  const rateLimits =
    mode === 'none' && !config.rateLimits
      ? undefined
      : (Object.fromEntries(OP_CLASSES.map((c) => [c, config.rateLimits?.[c] ?? DEFAULT_BUCKET])) as Record<
          OpClass,
          Bucket
        >);
  // Mode none is local development: no store log unless asked for (it costs a write per call).
  const retention = config.logRetentionDays ?? (mode === 'none' ? 0 : 7);
  if (!(retention >= 0)) throw new AuthConfigError(`logRetentionDays must be ≥ 0, got ${retention}`);
  const adminKey = config.adminKey || undefined;
  if (adminKey !== undefined && mode !== 'client-credentials')
    throw new AuthConfigError(`an admin key manages the clients of auth mode 'client-credentials', not '${mode}'`);
  if (adminKey !== undefined && adminKey.length < 16)
    throw new AuthConfigError('the admin key must be at least 16 characters');
  return {
    mode,
    presharedKeys,
    issuer,
    audience,
    jwksUri: config.jwksUri ?? (issuer ? issuer.replace(/\/+$/, '') + '/.well-known/jwks.json' : ''),
    algorithms: config.algorithms ?? ['RS256', 'ES256'],
    subjects: config.subjects,
    storeClaim: config.storeClaim ?? 'store_id',
    tokenTtlSeconds: positive(config.tokenTtlSeconds, 3600, 'tokenTtlSeconds'),
    keyRotationSeconds: positive(config.keyRotationSeconds, 86_400, 'keyRotationSeconds'),
    clockToleranceSeconds: config.clockToleranceSeconds ?? 5,
    rateLimits,
    tokenFailures: config.tokenFailures ?? { perSecond: 10 / 60, burst: 10 },
    authFailures: config.authFailures ?? { perSecond: 10, burst: 100 },
    logRetentionDays: retention,
    adminKey,
    warning,
  };
}
