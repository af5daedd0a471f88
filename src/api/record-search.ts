// The search shared by the store logs (`GET /stores/{id}/logs`, ./auth/logs.ts) and the decision
// log (`GET /stores/{id}/decisions`, ./decisions/log.ts): a time range, a sort, the Lucene-subset
// query of ./auth/log-query.ts and continuation tokens over one store's records in time order.
// Contract: a page holds at most `page_size` matching entries and scans at most 10,000 records;
// an ascending search's token is returned unchanged when nothing newer exists (poll it).

import { createHash } from 'node:crypto';
import { AppError } from '../errors.js';
import { parseLogQuery } from './auth/log-query.js';
import type { ApiRequest } from './endpoint.js';
import { pageSize, tokenText } from './validate.js';

export interface RecordSearch {
  readonly startTime?: string | undefined;
  readonly endTime?: string | undefined;
  readonly sort?: string | undefined;
  readonly query?: string | undefined;
  readonly continuationToken?: string | undefined;
  readonly pageSize?: number | undefined;
}

/** One chunk of a store's records, each with its position (what a token resumes after). */
export type RecordScan = (q: {
  readonly startMs: number;
  readonly endMs: number;
  readonly after: string | undefined;
  readonly descending: boolean;
  readonly limit: number;
}) => Promise<readonly { readonly position: string; readonly entry: Record<string, unknown> }[]>;

interface SearchShape {
  /** The request message named by a page-size error (`SearchStoreLogsRequest`). */
  readonly message: string;
  /** How far back a search without `start_time` reaches (ms). */
  readonly retentionMs: number;
  /** Whether a position decoded from a token is one this kind of record has. */
  readonly isPosition: (p: string) => boolean;
}

const MAX_PAGE = 100;

function param(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  return typeof v === 'string' ? v : String(v);
}

/** The search's query parameters as sent; `message` names the request in page-size errors. */
export function searchParams(req: ApiRequest, message: string): RecordSearch {
  return {
    startTime: param(req.query('start_time')),
    endTime: param(req.query('end_time')),
    sort: param(req.query('sort')),
    query: param(req.query('query')),
    continuationToken: tokenText(req.query('continuation_token'), message) || undefined,
    pageSize: req.query('page_size') === undefined ? MAX_PAGE : pageSize(req.query('page_size'), message),
  };
}
const MAX_SCAN = 10_000;

const bad = (m: string): AppError => new AppError('validation_error', m);
const badToken = (): AppError => new AppError('invalid_continuation_token', 'Invalid continuation token');

/** Unix ms of an RFC 3339 time with an offset; `fallback` when absent. */
function rfc3339(v: string | undefined, what: string, fallback: number): number {
  if (v === undefined || v === '') return fallback;
  const ms = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(ms)) throw bad(`invalid ${what}: '${v}' is not an RFC 3339 time`);
  return ms;
}

function encode(position: string, fingerprint: string): string {
  return Buffer.from(`v1\u0000${fingerprint}\u0000${position}`, 'utf8').toString('base64url');
}

function decode(token: string, fingerprint: string, shape: SearchShape): string {
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(token) || token.length > 5120) throw bad('invalid continuation_token');
  const text = Buffer.from(token, 'base64url').toString('utf8');
  const [v, f] = text.split('\u0000', 2);
  const position = text.slice((v ?? '').length + (f ?? '').length + 2);
  if (v !== 'v1' || f !== fingerprint || !shape.isPosition(position)) throw badToken();
  return position;
}

/** One page of matching entries and the token of the next. */
export async function searchRecords(
  scan: RecordScan,
  q: RecordSearch,
  shape: SearchShape,
): Promise<{ entries: Record<string, unknown>[]; continuation_token: string }> {
  const now = Date.now();
  const sort = q.sort || 'timestamp:1';
  if (sort !== 'timestamp:1' && sort !== 'timestamp:-1')
    throw bad(`invalid sort '${sort}': use timestamp:1 or timestamp:-1`);
  const pageSize = q.pageSize ?? MAX_PAGE;
  if (!(Number.isInteger(pageSize) && pageSize >= 1 && pageSize <= MAX_PAGE)) {
    throw new AppError(
      'page_size_invalid',
      `invalid ${shape.message}.PageSize: value must be inside range [1, ${MAX_PAGE}]`,
    );
  }
  const startMs = rfc3339(q.startTime, 'start_time', now - shape.retentionMs);
  const endMs = rfc3339(q.endTime, 'end_time', now) + 1;
  if (startMs >= endMs) throw bad('start_time must be before end_time');
  const predicate = parseLogQuery(q.query ?? '');
  const fingerprint = createHash('sha256')
    .update(`${sort}\u0000${q.query ?? ''}`)
    .digest('base64url')
    .slice(0, 8);
  const descending = sort === 'timestamp:-1';
  let after = q.continuationToken ? decode(q.continuationToken, fingerprint, shape) : undefined;
  const entries: Record<string, unknown>[] = [];
  let last: string | undefined;
  for (let scanned = 0; entries.length < pageSize && scanned < MAX_SCAN;) {
    const chunk = await scan({ startMs, endMs, after, descending, limit: Math.min(500, MAX_SCAN - scanned) });
    for (const s of chunk) {
      last = s.position;
      scanned++;
      if (predicate(s.entry)) entries.push(s.entry);
      if (entries.length === pageSize) break;
    }
    if (chunk.length === 0 || entries.length === pageSize) break;
    after = last;
  }
  const token = last !== undefined ? encode(last, fingerprint) : descending ? '' : (q.continuationToken ?? '');
  return { entries, continuation_token: token };
}
