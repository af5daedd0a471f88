// The answers of the msgpack channel: `{id, status, body}` or `{id, status, error}`, and how an
// error becomes one (a 5xx is logged with the request id; the client sees only code and message).
// Shared by the channel (channel.ts) and its check groups (channel-checks.ts).

import { toAppError } from '../errors.js';
import { logFailure } from './log.js';

export type RequestId = string | number | null;

export interface Answer {
  readonly id: RequestId;
  readonly status: number;
  readonly body?: unknown;
  /** A write's resulting store revision (the HTTP `Latch-Revision` header). */
  readonly revision?: number;
  readonly error?: { code: string; message: string };
  /** Set on the answers of a live stream (Watch) before its last one (./channel-watch.ts). */
  readonly more?: true;
}

export function errorAnswer(id: RequestId, err: unknown, route: string): Answer {
  const e = toAppError(err);
  if (e.status >= 500) logFailure(`channel:${String(id)}`, route, e);
  return { id, status: e.status, error: e.toBody() };
}
