// Authentication of the msgpack channel's WebSocket upgrade. The credential is verified once at
// the upgrade (401 JSON and no socket when it fails); each request of each frame is then admitted
// with the same header through `admit` (a verified-token cache hit: authorization, store binding,
// scope and rate limit per request, and an expired or revoked token stops working mid-connection).
// Also the connection's store-log recorder (ChannelLog).

import { toAppError } from '../../errors.js';
import type { LogTupleKey } from '../../storage/auth/logs.js';
import type { Peer } from './authenticator.js';
import type { CallReport, StoreLogs } from './logs.js';
import type { Principal } from './principal.js';
import type { AuthService } from './service.js';

interface UpgradeRes extends Peer {
  onAborted(cb: () => void): unknown;
  cork(cb: () => void): unknown;
  writeStatus(status: string): unknown;
  writeHeader(key: string, value: string): unknown;
  end(body?: string, closeConnection?: boolean): unknown;
}

const STATUS: Record<number, string> = {
  401: '401 Unauthorized',
  403: '403 Forbidden',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
};

function refuse(res: UpgradeRes, err: unknown): void {
  const e = toAppError(err);
  res.cork(() => {
    res.writeStatus(STATUS[e.status] ?? `${e.status} Error`);
    res.writeHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(e.toBody()), true);
  });
}

/**
 * Calls `upgrade` (synchronously when the token is cached) once `authorization` is a valid
 * credential, with the connection's store-log recorder (undefined when nothing is recorded);
 * otherwise answers the upgrade request with the auth error. No auth → upgrade.
 */
export function authenticateUpgrade(
  auth: AuthService | undefined,
  authorization: string | undefined,
  res: UpgradeRes,
  upgrade: (log: ChannelLog | undefined) => void,
): void {
  if (!auth) return upgrade(undefined);
  let verified;
  try {
    verified = auth.authenticator.verify(authorization, res);
  } catch (err) {
    return refuse(res, err);
  }
  if (!(verified instanceof Promise)) return upgrade(ChannelLog.for(auth, verified));
  let aborted = false;
  res.onAborted(() => void (aborted = true));
  verified.then(
    (p) => {
      if (!aborted) res.cork(() => upgrade(ChannelLog.for(auth, p)));
    },
    (err: unknown) => {
      if (!aborted) refuse(res, err);
    },
  );
}

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
export class CheckGroupLog {
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
