// Token-bucket rate limits (docs/reference/decisions.md D7): one bucket per (client, store, operation class) for API calls,
// and buckets of failed token requests per remote address and per (client id, address) for
// /oauth/token.
// A refused call throws RateLimitError (429) carrying `retryAfter` seconds for the header.
// Example: Check at burst 20, 20/s: the 21st call within one instant → 429, Retry-After: 1.

import { AppError } from '../../errors.js';
import type { Bucket } from './config.js';
import type { OpClass } from './operations.js';
import type { Principal } from './principal.js';

/** A 429 with the seconds a client should wait before retrying (`Retry-After`). */
export class RateLimitError extends AppError {
  override readonly retryAfter: number;
  constructor(code: 'rate_limit_exceeded' | 'auth_rate_limit_exceeded', message: string, retryAfter: number) {
    super(code, message);
    this.retryAfter = retryAfter;
  }
}

/** `Retry-After` of any thrown value, when it is a rate-limit refusal or an AppError carrying one (placement's 503). */
export function retryAfterOf(err: unknown): number | undefined {
  return err instanceof AppError ? err.retryAfter : undefined;
}

interface State {
  tokens: number;
  last: number;
}

const MAX_KEYS = 100_000;

/** Buckets keyed by string; refilled lazily on use. */
class Buckets {
  readonly #states = new Map<string, State>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Seconds to wait until `cost` tokens exist in the bucket `key` (0 = available now). */
  wait(key: string, b: Bucket, cost: number): number {
    const s = this.#refill(key, b);
    return s.tokens >= cost ? 0 : Math.max(1, Math.ceil((cost - s.tokens) / b.perSecond));
  }

  consume(key: string, b: Bucket, cost: number): void {
    this.#refill(key, b).tokens -= cost;
  }

  /** Gives back `cost` tokens taken by `consume` (never above the burst). */
  refund(key: string, b: Bucket, cost: number): void {
    const s = this.#refill(key, b);
    s.tokens = Math.min(b.burst, s.tokens + cost);
  }

  #refill(key: string, b: Bucket): State {
    const now = this.now();
    let s = this.#states.get(key);
    if (!s) {
      if (this.#states.size >= MAX_KEYS) this.#sweep(b);
      s = { tokens: b.burst, last: now };
      this.#states.set(key, s);
      return s;
    }
    s.tokens = Math.min(b.burst, s.tokens + ((now - s.last) / 1000) * b.perSecond);
    s.last = now;
    return s;
  }

  /** Drops the oldest half: a forgotten bucket restarts full, which only errs on the generous side. */
  #sweep(_b: Bucket): void {
    let n = this.#states.size >>> 1;
    for (const k of this.#states.keys()) {
      if (n-- <= 0) break;
      this.#states.delete(k);
    }
  }
}

/**
 * Per (client, store, class) buckets in nested maps: client id → store id → one state per class.
 * No key string is built per request (a concatenated key cost ≈ 0.5 µs under load; this path
 * is two Map lookups and a clock read). Keyed by client id, not by token, so fetching more
 * tokens never buys more requests.
 */
export class RateLimiter {
  readonly #clients = new Map<string, Map<string, (State | undefined)[]>>();
  readonly #classes: readonly OpClass[];
  readonly #index: ReadonlyMap<OpClass, number>;
  #stores = 0;

  /** `limits` undefined → every take passes (rate limiting off). */
  constructor(
    private readonly limits: Readonly<Record<OpClass, Bucket>> | undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.#classes = Object.keys(limits ?? {}) as OpClass[];
    this.#index = new Map(this.#classes.map((c, i) => [c, i]));
  }

  /** False when rate limiting is off (every take passes). */
  get limited(): boolean {
    return this.limits !== undefined;
  }

  /** Takes `cost` requests from the caller's bucket; throws 429 rate_limit_exceeded when empty. */
  take(principal: Principal, storeId: string | undefined, opClass: OpClass, cost = 1): void {
    if (this.limits === undefined) return;
    const b = this.limits[opClass];
    const s = this.#state(principal.clientId, storeId ?? '', this.#index.get(opClass) ?? 0, b);
    const now = this.now();
    s.tokens = Math.min(b.burst, s.tokens + ((now - s.last) / 1000) * b.perSecond);
    s.last = now;
    if (s.tokens < cost) {
      const wait = Math.max(1, Math.ceil((cost - s.tokens) / b.perSecond));
      throw new RateLimitError(
        'rate_limit_exceeded',
        `rate limit exceeded for ${opClass} requests; retry in ${wait} s`,
        wait,
      );
    }
    s.tokens -= cost;
  }

  #state(clientId: string, storeId: string, cls: number, b: Bucket): State {
    let stores = this.#clients.get(clientId);
    if (!stores) this.#clients.set(clientId, (stores = new Map()));
    let states = stores.get(storeId);
    if (!states) {
      // Bounded memory: past MAX_KEYS (client, store) pairs every bucket restarts full, which
      // only errs on the generous side.
      if (++this.#stores > MAX_KEYS) {
        this.#clients.clear();
        this.#stores = 1;
        this.#clients.set(clientId, (stores = new Map()));
      }
      stores.set(storeId, (states = new Array<State | undefined>(this.#classes.length)));
    }
    let st = states[cls];
    if (!st) states[cls] = st = { tokens: b.burst, last: this.now() };
    return st;
  }
}

/**
 * Counts failures (token requests, bearer verifications) per key; once a key's bucket is empty,
 * requests are refused before any work.
 */
export class FailureLimiter {
  readonly #buckets: Buckets;

  constructor(
    private readonly bucket: Bucket,
    now?: () => number,
  ) {
    this.#buckets = new Buckets(now);
  }

  /** Throws 429 auth_rate_limit_exceeded when any of `keys` has no failures left. */
  check(keys: readonly string[]): void {
    let wait = 0;
    for (const k of keys) wait = Math.max(wait, this.#buckets.wait(k, this.bucket, 1));
    if (wait > 0) {
      throw new RateLimitError('auth_rate_limit_exceeded', `too many failed authentications; retry in ${wait} s`, wait);
    }
  }

  fail(keys: readonly string[]): void {
    for (const k of keys) this.#buckets.consume(k, this.bucket, 1);
  }

  /**
   * Takes one failure from each of `keys` before the attempt, so that attempts in flight together
   * cannot overdraw the budget (check-then-fail let 60 concurrent guesses all through); throws
   * 429 when any key is spent. `release` gives it back when the attempt did not fail.
   */
  reserve(keys: readonly string[]): void {
    this.check(keys);
    this.fail(keys);
  }

  release(keys: readonly string[]): void {
    for (const k of keys) this.#buckets.refund(k, this.bucket, 1);
  }
}
