// Calls that failed authentication, counted instead of logged one by one: anyone can send them,
// to any well-formed store id, so one record each would let unauthenticated traffic grow the store
// log (and, in memory, the heap: ≈ 550 B per call) without bound. Per window they become one
// record per (store, error code, source address) with the count, the first and last time, and
// the first call's operation and request id as a sample; at most MAX_KEYS of them per window.

import type { LogRecord } from '../../storage/auth/logs.js';

/** Distinct (store, code, source) keys itemized per window; calls past them are only counted. */
export const MAX_KEYS = 1000;

/** One unauthenticated call as the HTTP layer reports it. */
export interface FailedCall {
  readonly time: number;
  readonly operation: string;
  readonly storeId: string;
  readonly status: number;
  readonly errorCode: string;
  /** The caller's address ('' when it could not be read). */
  readonly source: string;
  readonly requestId?: string | undefined;
}

interface Entry {
  readonly first: FailedCall;
  last: number;
  count: number;
}

export class FailureTally {
  #entries = new Map<string, Entry>();
  /** Calls of this window past MAX_KEYS (counted, not itemized). */
  #unitemized = 0;
  /** Totals since start, for operators (stats). */
  total = 0;
  unitemizedTotal = 0;

  add(c: FailedCall): void {
    this.total++;
    const key = `${c.storeId}\u0000${c.errorCode}\u0000${c.source}`;
    const e = this.#entries.get(key);
    if (e) {
      e.count++;
      e.last = c.time;
    } else if (this.#entries.size < MAX_KEYS) this.#entries.set(key, { first: c, last: c.time, count: 1 });
    else {
      this.#unitemized++;
      this.unitemizedTotal++;
    }
  }

  /** The window's records (one per key), and how many calls were counted without one; resets the window. */
  drain(): { records: LogRecord[]; unitemized: number } {
    const records: LogRecord[] = [];
    for (const { first, last, count } of this.#entries.values()) {
      records.push({
        time: first.time,
        clientId: '',
        operation: first.operation,
        storeId: first.storeId,
        modelId: '',
        filter: { unauthenticated_calls: String(count), source: first.source, last_time: new Date(last).toISOString() },
        status: first.status,
        errorCode: first.errorCode,
        latencyMs: 0,
        requestId: first.requestId,
      });
    }
    const unitemized = this.#unitemized;
    this.#entries = new Map();
    this.#unitemized = 0;
    return { records, unitemized };
  }
}
