// The auth subsystem's public surface for the HTTP layer, `main.ts` and the CLI.
export { openAuth, type AuthOptions, type AuthService } from './service.js';
export type { Authenticator } from './authenticator.js';
export {
  AuthConfigError,
  isLoopback,
  type AuthConfig,
  type AuthMode,
  type Bucket,
  type PresharedKey,
} from './config.js';
export {
  OPERATIONS,
  PUBLIC_ROUTES,
  isOperation,
  operationOfChannelOp,
  type Operation,
  type OpClass,
  type Scope,
} from './operations.js';
export { ANONYMOUS, authorize, type Principal } from './principal.js';
export { RateLimitError, retryAfterOf } from './ratelimit.js';
export type { RawReply, TokenRequest } from './token-endpoint.js';
export type { CallReport, LogSearch, StoreLogs } from './logs.js';
export { logsEndpoint } from './logs-endpoint.js';
