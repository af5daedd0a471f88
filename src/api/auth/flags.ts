// `latch serve` flags for authentication. Pre-shared keys are better passed in the environment
// (LATCH_AUTH_PRESHARED_KEYS, comma-separated): command lines are visible to every local user.

import type { AuthConfig, AuthMode } from './config.js';

export const AUTH_FLAGS: readonly string[] = [
  '--auth-mode', '--auth-issuer', '--auth-audience', '--auth-jwks-uri', '--auth-preshared-keys',
  '--auth-token-ttl', '--auth-allow-non-loopback', '--log-retention-days',
];

export const AUTH_HELP = `
Authentication (docs/auth.md):
  --auth-mode <mode>             none (default; loopback only), preshared, oidc, client-credentials
  --auth-issuer <url>            oidc: the external issuer; client-credentials: latch's issuer URL
  --auth-audience <url>          This region's base URL; tokens must carry it + '/' as audience
  --auth-jwks-uri <url>          oidc: JWKS URL (default <issuer>/.well-known/jwks.json)
  --auth-preshared-keys <k,…>    preshared: keys (prefer env LATCH_AUTH_PRESHARED_KEYS)
  --auth-token-ttl <seconds>     client-credentials: token lifetime (default 3600)
  --auth-allow-non-loopback true none: serve without authentication on a public address
  --log-retention-days <n>       Store-log retention (default 7; 0 = off; mode none: 0)
`;

const MODES: readonly AuthMode[] = ['none', 'preshared', 'oidc', 'client-credentials'];

function number(flag: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^\d+(\.\d+)?$/.test(v) || !Number.isFinite(n)) throw new Error(`${flag} must be a number, got '${v}'`);
  return n;
}

/** The auth configuration of the serve flags; throws Error with a usage message on bad values. */
export function authConfigFromFlags(values: ReadonlyMap<string, string>, env: NodeJS.ProcessEnv = process.env): AuthConfig {
  const mode = (values.get('--auth-mode') ?? env.LATCH_AUTH_MODE ?? 'none') as AuthMode;
  if (!MODES.includes(mode)) throw new Error(`--auth-mode must be one of ${MODES.join(', ')}, got '${mode}'`);
  const keys = values.get('--auth-preshared-keys') ?? env.LATCH_AUTH_PRESHARED_KEYS;
  const force = values.get('--auth-allow-non-loopback');
  if (force !== undefined && force !== 'true' && force !== 'false') throw new Error(`--auth-allow-non-loopback must be true or false`);
  return {
    mode,
    issuer: values.get('--auth-issuer') ?? env.LATCH_AUTH_ISSUER,
    audience: values.get('--auth-audience') ?? env.LATCH_AUTH_AUDIENCE,
    jwksUri: values.get('--auth-jwks-uri') ?? env.LATCH_AUTH_JWKS_URI,
    presharedKeys: keys ? keys.split(',').map((k) => k.trim()).filter(Boolean) : undefined,
    tokenTtlSeconds: number('--auth-token-ttl', values.get('--auth-token-ttl')),
    allowNonLoopback: force === 'true',
    logRetentionDays: number('--log-retention-days', values.get('--log-retention-days')),
  };
}
