// The live streams (Watch, ReadExpansions) a server runs now, and their bounds (docs/auth.md
// "Streams"): at most `perClient` open per client and `total` in all (more → 429
// stream_limit_exceeded before the stream starts); each ends after `maxLifetimeMs`
// (deadline_exceeded) and, within `recheckMs`, once the credential that opened it is revoked or
// expires (its own 401/403 code); shutdown ends them all (unavailable). One interval re-verifies
// every stream's credential (a verified-token cache hit each), not a timer per stream.

import type { AuthService } from '../api/auth/service.js';
import { AppError } from '../errors.js';

export interface LiveStreamLimits {
  /** Open live streams per client (per credential's client id). */
  readonly perClient: number;
  /** Open live streams on this server. */
  readonly total: number;
  /** A live stream ends after this long (ms); the consumer resumes from its last token. */
  readonly maxLifetimeMs: number;
  /** How often each stream's credential is verified again (ms). */
  readonly recheckMs: number;
}

const DEFAULT_LIVE_LIMITS: LiveStreamLimits = {
  perClient: 100,
  total: 2000,
  maxLifetimeMs: 60 * 60 * 1000,
  recheckMs: 1000,
};

/** One open stream: `end(reason)` stops it with that reason as its last line. */
interface Open {
  readonly clientId: string;
  readonly credential: string | undefined;
  readonly endsAt: number;
  readonly end: (reason: AppError) => void;
}

export class LiveStreams {
  readonly limits: LiveStreamLimits;
  readonly #open = new Set<Open>();
  readonly #perClient = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;

  constructor(
    limits: { readonly [K in keyof LiveStreamLimits]?: number | undefined } | undefined,
    private readonly auth: AuthService | undefined,
  ) {
    const d = DEFAULT_LIVE_LIMITS;
    this.limits = {
      perClient: limits?.perClient ?? d.perClient,
      total: limits?.total ?? d.total,
      maxLifetimeMs: limits?.maxLifetimeMs ?? d.maxLifetimeMs,
      recheckMs: limits?.recheckMs ?? d.recheckMs,
    };
  }

  get size(): number {
    return this.#open.size;
  }

  /**
   * Registers a stream of `clientId` opened with `credential` (the Authorization header); throws
   * stream_limit_exceeded when a cap is reached. Returns the function that unregisters it.
   */
  open(clientId: string, credential: string | undefined, end: (reason: AppError) => void): () => void {
    const mine = this.#perClient.get(clientId) ?? 0;
    if (mine >= this.limits.perClient)
      throw new AppError(
        'stream_limit_exceeded',
        `this client has ${mine} live streams open, the most allowed (${this.limits.perClient}); close one first`,
      );
    if (this.#open.size >= this.limits.total)
      throw new AppError(
        'stream_limit_exceeded',
        `the server has ${this.#open.size} live streams open, the most allowed (${this.limits.total})`,
      );
    const s: Open = { clientId, credential, endsAt: Date.now() + this.limits.maxLifetimeMs, end };
    this.#open.add(s);
    this.#perClient.set(clientId, mine + 1);
    this.#timer ??= setInterval(() => this.recheck(), this.limits.recheckMs).unref();
    return () => this.#close(s);
  }

  #close(s: Open): void {
    if (!this.#open.delete(s)) return;
    const n = (this.#perClient.get(s.clientId) ?? 1) - 1;
    if (n === 0) this.#perClient.delete(s.clientId);
    else this.#perClient.set(s.clientId, n);
    if (this.#open.size === 0 && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  /** Ends every stream past its lifetime or whose credential no longer verifies (the interval; tests call it too). */
  recheck(): void {
    const now = Date.now();
    for (const s of [...this.#open]) {
      if (now >= s.endsAt) {
        s.end(
          new AppError(
            'deadline_exceeded',
            `the stream reached its lifetime of ${this.limits.maxLifetimeMs} ms; resume from its last continuation_token`,
          ),
        );
        continue;
      }
      if (!this.auth || this.auth.config.mode === 'none') continue;
      try {
        const p = this.auth.authenticator.verify(s.credential);
        if (p instanceof Promise) p.catch((err: unknown) => s.end(asError(err)));
      } catch (err) {
        s.end(asError(err));
      }
    }
  }

  /** Ends every stream with `reason` (shutdown). */
  endAll(reason: AppError): void {
    for (const s of [...this.#open]) s.end(reason);
  }
}

function asError(err: unknown): AppError {
  return err instanceof AppError ? err : new AppError('unauthenticated', 'the credential no longer verifies');
}
