// The store-log recorder of one msgpack channel connection (ChannelLog): every request recorded
// like an HTTP call, checks once per group. The upgrade's authentication is the transport's
// (src/http/channel-upgrade.ts).

import type { LogTupleKey } from '../../storage/auth/logs.js';
import type { CallReport, StoreLogs } from './logs.js';
import type { Principal } from './principal.js';
import type { AuthService } from './service.js';

/**
 * The store log of one channel connection (docs/auth.md "Msgpack channel"): every request is
 * recorded like an HTTP call — one record per request — except checks, which the channel runs
 * in groups (one per store/model/consistency of a frame): one record per group, so the bulk
 * path costs one record per frame and store, never one per check. The client id is the
 * connection's: its credential is fixed at the upgrade.
 */
export class ChannelLog {
  private constructor(
    private readonly logs: StoreLogs,
    readonly clientId: string,
  ) {}

  /** Undefined when the store log records nothing (no per-request work at all then). */
  static for(auth: AuthService, principal: Principal): ChannelLog | undefined {
    return auth.logs.enabled ? new ChannelLog(auth.logs, principal.clientId) : undefined;
  }

  /**
   * One answered request (any operation but a grouped check); `startMs` from performance.now(),
   * `wireCode` the answer's error code ('' for success).
   */
  request(
    operation: string,
    storeId: string | undefined,
    modelId: string | undefined,
    input: unknown,
    status: number,
    wireCode: string,
    startMs: number,
  ): void {
    if (storeId === undefined) return; // like HTTP: store logs are per store
    this.logs.recordCall({
      time: Date.now(),
      clientId: this.clientId,
      operation,
      storeId,
      modelId,
      input,
      status,
      errorCode: logCode(wireCode),
      latencyMs: performance.now() - startMs,
    });
  }

  /** A tally of one check group's answers, recorded once the group is answered. */
  group(storeId: string, count: number, single: LogTupleKey | undefined, startMs: number): CheckGroupLog {
    return new CheckGroupLog(this, storeId, count, single, startMs);
  }

  /** @internal */
  record(c: CallReport): void {
    this.logs.recordCall(c);
  }
}

/** The catalog code of a wire code, as HTTP records it: the 409 body's "10" (docs/reference/decisions.md D4) is transaction_conflict. */
function logCode(wire: string): string {
  return wire === '10' ? 'transaction_conflict' : wire;
}

/**
 * One record for a group of checks: operation `Check`, `filter.checks` = how many, `filter.failed`
 * = how many did not answer 200; status 200, or the status and code of the first failure. A
 * group of one check records its tuple key instead, exactly like an HTTP Check.
 */
class CheckGroupLog {
  #failed = 0;
  #status = 200;
  #code = '';

  constructor(
    private readonly log: ChannelLog,
    private readonly storeId: string,
    private readonly count: number,
    private readonly single: LogTupleKey | undefined,
    private readonly startMs: number,
  ) {}

  /** One check's answer (no allocation). */
  see(status: number, code: string | undefined): void {
    if (status === 200) return;
    if (this.#failed++ === 0) {
      this.#status = status;
      this.#code = logCode(code ?? '');
    }
  }

  done(modelId: string | undefined): void {
    const filter = this.single ? undefined : { checks: String(this.count), failed: String(this.#failed) };
    this.log.record({
      time: Date.now(),
      clientId: this.log.clientId,
      operation: 'Check',
      storeId: this.storeId,
      modelId,
      tupleKey: this.single,
      filter,
      status: this.#status,
      errorCode: this.#code,
      latencyMs: performance.now() - this.startMs,
    });
  }
}
