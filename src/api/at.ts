// The past point of a query (latch extension, docs/audit.md): the body fields `at_revision` (a
// revision, as a JSON number or a decimal string like other int64 fields) and `at_time` (an RFC
// 3339 date-time with an offset), and the `Latch-At-Revision` request header (decimal text, the
// `Latch-Revision` a Write returned). At most one point per request: the header and `at_revision`
// may both be sent only with the same value. Malformed → 400 validation_error; whether the point
// lies in the store's history is the engine's check (revision_in_future, time_before_store, …).

import { parseExpiry } from '../domain/expiry.js';
import { AppError } from '../errors.js';
import type { PastPoint } from '../engine/contract.js';
import type { Obj } from './validate.js';

const MAX_REVISION = Number.MAX_SAFE_INTEGER;

function revisionOf(v: unknown, what: string): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const n = typeof v === 'string' && /^\d{1,16}$/.test(v) ? Number(v) : v;
  if (typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= MAX_REVISION) return n;
  throw new AppError(
    'validation_error',
    `invalid ${what}: value must be a revision, an integer in [0, ${MAX_REVISION}]`,
  );
}

function timeOf(v: unknown): number | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const ms = typeof v === 'string' ? parseExpiry(v) : undefined;
  if (ms === undefined || ms < 0)
    throw new AppError('validation_error', 'invalid at_time: value must be an RFC 3339 timestamp with an offset');
  return ms;
}

/** The point named by `body` and the Latch-At-Revision header's text; undefined → evaluate now. */
export function pastPoint(body: Obj, headerValue: unknown): PastPoint | undefined {
  const field = revisionOf(body['at_revision'], 'at_revision');
  const header = revisionOf(headerValue, 'Latch-At-Revision');
  const time = timeOf(body['at_time']);
  if (field !== undefined && header !== undefined && field !== header)
    throw new AppError('validation_error', 'at_revision and Latch-At-Revision name different revisions');
  const revision = field ?? header;
  if (revision !== undefined && time !== undefined)
    throw new AppError('validation_error', 'at_time cannot be combined with at_revision or Latch-At-Revision');
  if (revision !== undefined) return { revision };
  return time === undefined ? undefined : { time };
}
