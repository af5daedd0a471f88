// The `rate-limits` setting of `latch serve` (docs/reference/decisions.md D7): a list of `<class>=<rate>[:<burst>]`
// entries turned into the auth configuration's buckets. `<class>` is an operation class, `all`
// (every class not named), `auth-failures` or `token-failures`; `<rate>` is requests per second,
// or per minute / hour with `/m` / `/h`; the burst defaults to the rate per second, at least 1.
//
// Example: `check=200:400,write=20,token-failures=10/m:10` → Check 200/s with bursts of 400,
// Write 20/s (burst 20), 10 failed token requests per address a minute.

import type { Bucket } from '../api/auth/config.js';
import { OP_CLASSES } from '../api/auth/config.js';
import type { OpClass } from '../api/auth/operations.js';
import { UsageError } from './args.js';

interface RateLimitSettings {
  readonly rateLimits?: Partial<Record<OpClass, Bucket>> | undefined;
  readonly authFailures?: Bucket | undefined;
  readonly tokenFailures?: Bucket | undefined;
}

const ENTRY = /^([a-z-]+)=(\d+(?:\.\d+)?)(?:\/(s|m|h))?(?::(\d+))?$/;
const PER_SECOND = { s: 1, m: 60, h: 3600 } as const;
const KEYS = ['all', ...OP_CLASSES, 'auth-failures', 'token-failures'];

function bucket(entry: string, where: string): [string, Bucket] {
  const m = ENTRY.exec(entry.trim());
  if (!m) throw new UsageError(`${where}: '${entry}' is not <class>=<rate>[/s|/m|/h][:<burst>] (e.g. check=200:400)`);
  const [, key, rate, unit, burstText] = m as unknown as [
    string,
    string,
    string,
    's' | 'm' | 'h' | undefined,
    string | undefined,
  ];
  if (!KEYS.includes(key)) throw new UsageError(`${where}: unknown class '${key}' (one of ${KEYS.join(', ')})`);
  const perSecond = Number(rate) / PER_SECOND[unit ?? 's'];
  if (!(perSecond > 0)) throw new UsageError(`${where}: the rate of '${key}' must be above 0`);
  const burst = burstText === undefined ? Math.max(1, Math.ceil(perSecond)) : Number(burstText);
  if (!Number.isSafeInteger(burst) || burst < 1)
    throw new UsageError(`${where}: the burst of '${key}' must be an integer ≥ 1`);
  return [key, { perSecond, burst }];
}

/** The buckets named by `entries`; `where` names the setting's source in errors. Throws UsageError. */
export function parseRateLimits(entries: readonly string[] | undefined, where: string): RateLimitSettings {
  if (entries === undefined || entries.length === 0) return {};
  const given = new Map<string, Bucket>();
  for (const e of entries) {
    const [key, b] = bucket(e, where);
    if (given.has(key)) throw new UsageError(`${where}: '${key}' is given twice`);
    given.set(key, b);
  }
  const all = given.get('all');
  const classes = OP_CLASSES.filter((c) => given.has(c) || all !== undefined);
  return {
    rateLimits: classes.length > 0 ? Object.fromEntries(classes.map((c) => [c, given.get(c) ?? all])) : undefined,
    authFailures: given.get('auth-failures'),
    tokenFailures: given.get('token-failures'),
  };
}
