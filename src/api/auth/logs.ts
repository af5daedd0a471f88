// Store logs (item 7, docs/reference/http-api.md §4.26): a recorder the HTTP layer calls once per finished call,
// buffered and written in batches; background pruning past the retention period; and the search
// behind `GET /stores/{store_id}/logs` (time range, sort, query, continuation tokens).
// Contract: a record carries client id, operation, store, model, tuple key or filter, status,
// error code, latency — built from the parsed input by picking named string fields, so request
// secrets, tokens and condition contexts never reach the log.

import {
  isPosition,
  type LogRecord,
  type LogRecords,
  type LogTupleKey,
  type StoredLog,
} from '../../storage/auth/logs.js';
import { FailureTally, type FailedCall } from './failure-tally.js';
import { searchRecords, type RecordScan, type RecordSearch } from '../record-search.js';
import { logger } from '../../log.js';

/** What the HTTP layer reports per call. `input` is the endpoint's parsed input (optional). */
export interface CallReport {
  /** Unix ms; pass the completion time so records land in time order. */
  readonly time: number;
  readonly clientId: string;
  readonly operation: string;
  readonly storeId: string | undefined;
  readonly modelId: string | undefined;
  readonly input?: unknown;
  readonly tupleKey?: LogTupleKey | undefined;
  readonly filter?: Readonly<Record<string, string>> | undefined;
  readonly status: number;
  readonly errorCode: string;
  readonly latencyMs: number;
  readonly requestId?: string | undefined;
}

export type LogSearch = RecordSearch;

const DAY_MS = 86_400_000;
const FLUSH_AT = 256;
/** Calls that failed authentication are written as one tally record per key per window. */
const FAILURE_WINDOW_MS = 60_000;
const STORE_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

function text(v: unknown): string | undefined {
  return typeof v === 'string' ? v.slice(0, 512) : undefined;
}

function key(v: unknown): LogTupleKey | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  const cond = o.condition as { name?: unknown } | undefined;
  return { user: text(o.user), relation: text(o.relation), object: text(o.object), condition: text(cond?.name) };
}

/** Tuple key / filter of a parsed input, by field name only (never `context`). */
export function summarize(input: unknown): Pick<LogRecord, 'tupleKey' | 'tupleKeys' | 'filter'> {
  if (typeof input !== 'object' || input === null) return {};
  const o = input as Record<string, unknown>;
  if (o.tupleKey !== undefined) return { tupleKey: key(o.tupleKey) };
  if (Array.isArray(o.writes) || Array.isArray(o.deletes)) {
    const list = (a: unknown): LogTupleKey[] => (Array.isArray(a) ? a.slice(0, 100).map((k) => key(k) ?? {}) : []);
    return { tupleKeys: { writes: list(o.writes), deletes: list(o.deletes) } };
  }
  const filter: Record<string, string> = {};
  const src = typeof o.filter === 'object' && o.filter !== null ? (o.filter as Record<string, unknown>) : o;
  for (const f of ['type', 'relation', 'user', 'object'] as const) {
    const v = src[f];
    if (typeof v === 'string') filter[f] = v.slice(0, 512);
    else if (typeof v === 'object' && v !== null && f === 'object')
      filter[f] = `${text((v as Record<string, unknown>).type) ?? ''}:${text((v as Record<string, unknown>).id) ?? ''}`;
  }
  if (Array.isArray(o.checks)) filter.checks = String(o.checks.length);
  return Object.keys(filter).length > 0 ? { filter } : {};
}

function render(s: StoredLog): Record<string, unknown> {
  const r = s.record;
  return {
    timestamp: new Date(r.time).toISOString(),
    store_id: r.storeId,
    client_id: r.clientId,
    request: {
      operation: r.operation,
      authorization_model_id: r.modelId,
      tuple_key: r.tupleKey ?? null,
      tuple_keys: r.tupleKeys ?? null,
      filter: r.filter ?? null,
      request_id: r.requestId ?? '',
    },
    response: { status: r.status, error_code: r.errorCode, latency_ms: r.latencyMs },
  };
}

export class StoreLogs {
  #buffer: LogRecord[] = [];
  #flushing: Promise<void> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  readonly #pruner: NodeJS.Timeout | undefined;
  #pruning: Promise<number> = Promise.resolve(0);
  readonly #failures = new FailureTally();
  readonly #window: NodeJS.Timeout | undefined;

  constructor(
    private readonly records: LogRecords | undefined,
    private readonly retentionDays: number,
  ) {
    if (records && retentionDays > 0) {
      this.#pruning = this.prune();
      this.#pruner = setInterval(() => void (this.#pruning = this.prune()), 3_600_000);
      this.#pruner.unref();
      this.#window = setInterval(() => void this.drainFailures(), FAILURE_WINDOW_MS);
      this.#window.unref();
    }
  }

  /** Calls that failed authentication since start, and how many of them no record itemizes. */
  get failureCounts(): { total: number; unitemized: number } {
    return { total: this.#failures.total, unitemized: this.#failures.unitemizedTotal };
  }

  /** Counts one call that failed authentication (see failure-tally.ts); written at the window's end. Never throws. */
  recordFailure(c: FailedCall): void {
    if (!this.enabled || !STORE_ID.test(c.storeId)) return;
    this.#failures.add(c);
  }

  /** Ends the current failure window: its tally records are buffered and written. */
  drainFailures(): Promise<void> {
    const { records, unitemized } = this.#failures.drain();
    if (unitemized > 0) {
      logger.log('warn', 'unauthenticated calls past the store-log tally', { calls: unitemized });
    }
    if (records.length === 0) return this.#flushing;
    this.#buffer.push(...records);
    return this.flush();
  }

  get enabled(): boolean {
    return this.records !== undefined && this.retentionDays > 0;
  }

  /** Buffers one call's record; written within ~50 ms (or at once past 256 pending). Never throws. */
  recordCall(c: CallReport): void {
    // Only well-formed store ids become keys: a raw path segment must not reach another store's range.
    if (!this.enabled || (c.storeId !== undefined && !STORE_ID.test(c.storeId))) return;
    const summary = c.tupleKey || c.filter ? { tupleKey: c.tupleKey, filter: c.filter } : summarize(c.input);
    this.#buffer.push({
      time: c.time,
      clientId: c.clientId,
      operation: c.operation,
      storeId: c.storeId ?? '',
      modelId: c.modelId ?? '',
      ...summary,
      status: c.status,
      errorCode: c.errorCode,
      latencyMs: Math.round(c.latencyMs * 1000) / 1000,
      requestId: c.requestId,
    });
    if (this.#buffer.length >= FLUSH_AT) void this.flush();
    else if (!this.#timer) {
      this.#timer = setTimeout(() => void this.flush(), 50);
      this.#timer.unref();
    }
  }

  /** Writes every buffered record; resolves when they are stored. */
  flush(): Promise<void> {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#buffer;
    this.#buffer = [];
    const records = this.records;
    if (batch.length === 0 || !records) return this.#flushing;
    this.#flushing = this.#flushing
      .then(() => records.append(batch))
      .catch((err: unknown) => {
        logger.log('error', 'store log write failed', { records: batch.length, cause: String(err) });
      });
    return this.#flushing;
  }

  async prune(now = Date.now()): Promise<number> {
    if (!this.records) return 0;
    try {
      return await this.records.prune(now - this.retentionDays * DAY_MS);
    } catch (err) {
      logger.log('error', 'store log pruning failed', { cause: String(err) });
      return 0;
    }
  }

  /** One page of a store's logs; the token is sticky when nothing newer exists (poll-friendly). */
  async search(
    storeId: string,
    q: LogSearch,
  ): Promise<{ logs: Record<string, unknown>[]; continuation_token: string }> {
    await this.flush();
    const records = this.records;
    const scan: RecordScan = async (s) =>
      records ? (await records.scan({ storeId, ...s })).map((r) => ({ position: r.position, entry: render(r) })) : [];
    const page = await searchRecords(scan, q, {
      message: 'SearchStoreLogsRequest',
      retentionMs: this.retentionDays * DAY_MS,
      isPosition,
    });
    return { logs: page.entries, continuation_token: page.continuation_token };
  }

  async close(): Promise<void> {
    if (this.#pruner) clearInterval(this.#pruner);
    if (this.#window) clearInterval(this.#window);
    await this.drainFailures();
    await this.#pruning;
    await this.flush();
    await this.records?.close();
  }
}
