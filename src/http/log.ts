// Structured error logging of the HTTP layer: one line per server-side failure, carrying the
// request id so an operator can match it with the response the client saw. The cause is logged
// here and never sent (the client gets `internal_error` and the id).

import type { AppError } from '../errors.js';
import { logger } from '../log.js';

export function logFailure(requestId: string, route: string, err: AppError): void {
  const cause = err.cause instanceof Error ? { message: err.cause.message, stack: err.cause.stack } : err.cause;
  // 503 is expected while a datastore is down or the node drains: a warning, not an error.
  logger.log(err.status === 503 ? 'warn' : 'error', 'request failed', {
    request_id: requestId,
    endpoint: route,
    code: err.code,
    message: err.message,
    cause,
  });
}
