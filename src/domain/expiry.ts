// Tuple expiry (`expires_at`, a latch extension, docs/reference/decisions.md D15): the RFC 3339 parser, the
// normal form stored and shown, and the horizon. A tuple grants nothing from its expiry instant on.
//
// Example: parseExpiry('2026-12-01T10:00:00.1234+01:00') = Date.UTC(2026, 11, 1, 9, 0, 0, 123)
// (fractions below a millisecond are cut: the stored instant is never later than the one sent);
// formatExpiry of that is '2026-12-01T09:00:00.123Z'.

/** The latest expiry a write may set, counted from the write: 3,660 days (ten years and some). */
const EXPIRY_HORIZON_MS = 3660 * 86_400_000;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const daysIn = (y: number, m: number): number =>
  m === 2 ? (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(m) ? 30 : 31;

/**
 * The instant (ms since the epoch) of an RFC 3339 date-time with an explicit offset, or undefined
 * when the text is not one (a calendar date that does not exist, hour 24, a leap second, an offset
 * beyond ±23:59 are all refused rather than rolled over).
 */
export function parseExpiry(text: string): number | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i]));
  if (y === undefined || mo === undefined || d === undefined || h === undefined || mi === undefined || s === undefined)
    return undefined;
  // Year 0000 is no instant a tuple can expire at: malformed, like a month 13.
  if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || s > 59) return undefined;
  const ms = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  let offset = 0;
  if (m[8] === undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    offset = (m[9] === '-' ? -1 : 1) * (oh * 60 + om) * 60_000;
  }
  // Date.UTC maps years 0-99 to 1900-1999: the year is set on its own.
  const date = new Date(Date.UTC(2000, mo - 1, d, h, mi, s, ms));
  date.setUTCFullYear(y);
  const t = date.getTime() - offset;
  return Number.isFinite(t) ? t : undefined;
}

/** The stored and shown form: UTC with milliseconds. */
export function formatExpiry(ms: number): string {
  return new Date(ms).toISOString();
}

/** Why `ms` may not be written at instant `now`, or undefined when it may. */
export function expiryProblem(ms: number, now: number): string | undefined {
  if (ms <= now) return `expires_at ${formatExpiry(ms)} is not in the future`;
  if (ms - now > EXPIRY_HORIZON_MS)
    return `expires_at ${formatExpiry(ms)} is more than ${EXPIRY_HORIZON_MS / 86_400_000} days ahead`;
  return undefined;
}
