// Store logs (item 7, docs/reference/http-api.md §4.26): a recorder the HTTP layer calls once per finished call,
// buffered and written in batches; background pruning past the retention period; and the search
// behind `GET /stores/{store_id}/logs` (time range, sort, query, continuation tokens).
// Contract: a record carries client id, operation, store, model, tuple key or filter, status,
// error code, latency — built from the parsed input by picking named string fields, so request
// secrets, tokens and condition contexts never reach the log.

import { createHash } from 'node:crypto';
import { AppError } from '../../errors.js';
import {
  isPosition,
  type LogRecord,
  type LogRecords,
  type LogTupleKey,
  type StoredLog,
} from '../../storage/auth/logs.js';
import { FailureTally, type FailedCall } from './failure-tally.js';
import { parseLogQuery } from './log-query.js';
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

export interface LogSearch {
  readonly startTime?: string | undefined;
  readonly endTime?: string | undefined;
  readonly sort?: string | undefined;
  readonly query?: string | undefined;
  readonly continuationToken?: string | undefined;
  readonly pageSize?: number | undefined;
}

const DAY_MS = 86_400_000;
const MAX_PAGE = 100;
const MAX_SCAN = 10_000;
const FLUSH_AT = 256;
/** Calls that failed authentication are written as one tally record per key per window. */
const FAILURE_WINDOW_MS = 60_000;
const STORE_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

const bad = (m: string): AppError => new AppError('validation_error', m);
const badToken = (): AppError => new AppError('invalid_continuation_token', 'Invalid continuation token');

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

function time(v: string | undefined, what: string, fallback: number): number {
  if (v === undefined || v === '') return fallback;
  const ms = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(ms)) throw bad(`invalid ${what}: '${v}' is not an RFC 3339 time`);
  return ms;
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
    const now = Date.now();
    const sort = q.sort || 'timestamp:1';
    if (sort !== 'timestamp:1' && sort !== 'timestamp:-1')
      throw bad(`invalid sort '${sort}': use timestamp:1 or timestamp:-1`);
    const pageSize = q.pageSize ?? MAX_PAGE;
    if (!(Number.isInteger(pageSize) && pageSize >= 1 && pageSize <= MAX_PAGE)) {
      throw new AppError(
        'page_size_invalid',
        `invalid SearchStoreLogsRequest.PageSize: value must be inside range [1, ${MAX_PAGE}]`,
      );
    }
    const startMs = time(q.startTime, 'start_time', now - this.retentionDays * DAY_MS);
    const endMs = time(q.endTime, 'end_time', now) + 1;
    if (startMs >= endMs) throw bad('start_time must be before end_time');
    const predicate = parseLogQuery(q.query ?? '');
    const fingerprint = createHash('sha256')
      .update(`${sort}\u0000${q.query ?? ''}`)
      .digest('base64url')
      .slice(0, 8);
    const descending = sort === 'timestamp:-1';
    let after = q.continuationToken ? this.#decode(q.continuationToken, fingerprint) : undefined;
    await this.flush();
    const logs: Record<string, unknown>[] = [];
    let last: string | undefined;
    for (let scanned = 0; logs.length < pageSize && scanned < MAX_SCAN;) {
      const chunk = this.records
        ? await this.records.scan({
            storeId,
            startMs,
            endMs,
            after,
            descending,
            limit: Math.min(500, MAX_SCAN - scanned),
          })
        : [];
      for (const s of chunk) {
        last = s.position;
        scanned++;
        const entry = render(s);
        if (predicate(entry)) logs.push(entry);
        if (logs.length === pageSize) break;
      }
      if (chunk.length === 0 || logs.length === pageSize) break;
      after = last;
    }
    const token = last !== undefined ? this.#encode(last, fingerprint) : descending ? '' : (q.continuationToken ?? '');
    return { logs, continuation_token: token };
  }

  #encode(position: string, fingerprint: string): string {
    return Buffer.from(`v1\u0000${fingerprint}\u0000${position}`, 'utf8').toString('base64url');
  }

  #decode(token: string, fingerprint: string): string {
    if (!/^[A-Za-z0-9_-]+={0,2}$/.test(token) || token.length > 5120) throw bad('invalid continuation_token');
    const [v, f, t, u] = Buffer.from(token, 'base64url').toString('utf8').split('\u0000');
    const position = `${t ?? ''}\u0000${u ?? ''}`;
    if (v !== 'v1' || f !== fingerprint || !isPosition(position)) throw badToken();
    return position;
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
