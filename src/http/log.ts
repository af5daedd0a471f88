// Structured error logging of the HTTP layer: one JSON line on stderr per server-side failure,
// carrying the request id so an operator can match it with the response the client saw.

import type { AppError } from '../errors.js';

export function logFailure(requestId: string, route: string, err: AppError): void {
  const cause = err.cause instanceof Error ? { message: err.cause.message, stack: err.cause.stack } : err.cause;
  process.stderr.write(
    JSON.stringify({ time: new Date().toISOString(), level: 'error', msg: 'request failed', request_id: requestId, route, code: err.code, message: err.message, cause }) + '\n',
  );
}
