// Wiring of the auth subsystem: configuration check (refuses unsafe or incomplete configs), the
// auth DB (`<dataDir>/auth`: clients, signing keys) and the log DB (`<dataDir>/logs`), both in
// memory for `--datastore memory` and tables shared by every node for `--datastore postgres`
// (then re-read every AUTH_REFRESH_MS), and the pieces the HTTP layer calls per request.

import { join } from 'node:path';
import { ClientStore } from '../../storage/auth/clients.js';
import { KeyRecords } from '../../storage/auth/signing-key-records.js';
import { openAuthKv, type AuthKv } from '../../storage/auth/kv.js';
import { LogRecords } from '../../storage/auth/logs.js';
import type { PostgresOpenOptions } from '../../storage/types.js';
import { clientCredentialsAuth, noAuth, oidcAuth, presharedAuth, type Authenticator } from './authenticator.js';
import { resolveAuthConfig, type AuthConfig, type ResolvedAuthConfig } from './config.js';
import { KeyRing } from './signing-keys.js';
import { StoreLogs } from './logs.js';
import { FailureLimiter, RateLimiter } from './ratelimit.js';
import { TokenIssuer, type RawReply, type TokenRequest } from './token-endpoint.js';
import { logger } from '../../log.js';

export interface AuthOptions {
  readonly config: AuthConfig;
  /** The address the server binds (mode none refuses non-loopback addresses unless forced). */
  readonly host: string;
  /** Server data directory; omitted → everything in memory. */
  readonly dataDir?: string | undefined;
  /** PostgreSQL instead of the data directory: one authentication state for every node. */
  readonly postgres?: PostgresOpenOptions | undefined;
}

/** On PostgreSQL, how often a node reads clients and signing keys again (changes by other nodes). */
const AUTH_REFRESH_MS = 1000;

export interface AuthService {
  readonly config: ResolvedAuthConfig;
  readonly authenticator: Authenticator;
  readonly limiter: RateLimiter;
  readonly logs: StoreLogs;
  /** client-credentials mode only. */
  readonly clients: ClientStore | undefined;
  readonly keys: KeyRing | undefined;
  readonly issuer: TokenIssuer;
  /** `POST /oauth/token`; 404 body outside client-credentials mode. */
  issueToken(req: TokenRequest): Promise<RawReply>;
  /** `GET /.well-known/jwks.json`; 404 body outside client-credentials mode. */
  jwks(): RawReply;
  close(): Promise<void>;
}

export function authDbPath(dataDir: string | undefined): string | undefined {
  return dataDir === undefined ? undefined : join(dataDir, 'auth');
}

function logDbPath(dataDir: string | undefined): string | undefined {
  return dataDir === undefined ? undefined : join(dataDir, 'logs');
}

/** Reads clients and keys again every AUTH_REFRESH_MS; a failure is logged and retried next time. */
function refreshing(clients: ClientStore, keys: KeyRing): NodeJS.Timeout {
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    busy = true;
    Promise.all([clients.reload(), keys.reload()])
      .catch((err: unknown) => logger.log('warn', 'auth state refresh failed', { cause: String(err) }))
      .finally(() => (busy = false));
  }, AUTH_REFRESH_MS);
  timer.unref();
  return timer;
}

export async function openAuth(options: AuthOptions): Promise<AuthService> {
  const config = resolveAuthConfig(options.config, options.host);
  if (config.warning) logger.log('warn', config.warning);
  const opened: AuthKv[] = [];
  const pg = options.postgres;
  try {
    let clients: ClientStore | undefined;
    let keys: KeyRing | undefined;
    let authenticator: Authenticator;
    const authFailures = new FailureLimiter(config.authFailures);
    if (config.mode === 'client-credentials') {
      const kv = await openAuthKv(authDbPath(options.dataDir), pg && { options: pg, table: 'latch_auth' });
      opened.push(kv);
      clients = await ClientStore.open(kv);
      keys = await KeyRing.open(new KeyRecords(kv), config.keyRotationSeconds, config.tokenTtlSeconds);
      authenticator = clientCredentialsAuth(config, keys, clients, authFailures);
    } else if (config.mode === 'oidc') authenticator = oidcAuth(config, authFailures);
    else if (config.mode === 'preshared') authenticator = presharedAuth(config, authFailures);
    else authenticator = noAuth();
    let logKv: AuthKv | undefined;
    if (config.logRetentionDays > 0) {
      logKv = await openAuthKv(logDbPath(options.dataDir), pg && { options: pg, table: 'latch_store_logs' });
      opened.push(logKv);
    }
    const logs = new StoreLogs(logKv ? new LogRecords(logKv) : undefined, config.logRetentionDays);
    const issuer = new TokenIssuer(config, keys, clients, new FailureLimiter(config.tokenFailures));
    const authKv = config.mode === 'client-credentials' ? opened[0] : undefined;
    const refresh = pg && clients && keys ? refreshing(clients, keys) : undefined;
    return {
      config,
      authenticator,
      limiter: new RateLimiter(config.rateLimits),
      logs,
      clients,
      keys,
      issuer,
      issueToken: (req) => issuer.issueToken(req),
      jwks: () => issuer.jwks(),
      async close() {
        if (refresh) clearInterval(refresh);
        authenticator.close();
        keys?.close();
        await logs.close();
        await authKv?.close();
      },
    };
  } catch (err) {
    for (const kv of opened) await kv.close().catch(() => undefined);
    throw err;
  }
}
