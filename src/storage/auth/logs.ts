// Store-log records (one per API call) in their own DB, `<dataDir>/logs`, keyed for the two
// scans that matter: one store's records in time order (search) and all records older than the
// retention horizon (pruning).
//
//   s \0 <store> \0 <time ms, 13 digits> \0 <uniq>  → JSON record
//   t \0 <time ms, 13 digits> \0 <store> \0 <uniq>  → ''   (pruning index)
//
// <uniq> = 4 hex digits random per process + 8 hex digits counter: unique across restarts and
// ordered within one process, so records of one millisecond keep their arrival order.
// Contract: records hold no secret and no token; the recorder builds them from parsed inputs.

import { randomBytes } from 'node:crypto';
import type { TimeScan } from '../time-scan.js';
import type { AuthKv, AuthKvOp } from './kv.js';

export interface LogTupleKey {
  readonly user?: string | undefined;
  readonly relation?: string | undefined;
  readonly object?: string | undefined;
  readonly condition?: string | undefined;
}

export interface LogRecord {
  /** Unix ms. */
  readonly time: number;
  readonly clientId: string;
  readonly operation: string;
  readonly storeId: string;
  readonly modelId: string;
  /** The request's tuple key (Check, Expand, …) or, for Write, its tuple keys. */
  readonly tupleKey?: LogTupleKey | undefined;
  readonly tupleKeys?:
    { readonly writes: readonly LogTupleKey[]; readonly deletes: readonly LogTupleKey[] } | undefined;
  /** The request's filter (Read tuple filter, ReadChanges type, ListObjects type/relation/user…). */
  readonly filter?: Readonly<Record<string, string>> | undefined;
  readonly status: number;
  readonly errorCode: string;
  readonly latencyMs: number;
  readonly requestId?: string | undefined;
}

export interface StoredLog {
  /** `<time13>\0<uniq>`: the record's position within its store (continuation cursor). */
  readonly position: string;
  readonly record: LogRecord;
}

const S = 's\u0000';
const T = 't\u0000';
const SEP = '\u0000';
const PROCESS_TAG = randomBytes(2).toString('hex');
let counter = 0;

function timeKey(ms: number): string {
  return String(Math.max(0, Math.floor(ms))).padStart(13, '0');
}

function uniq(): string {
  counter = (counter + 1) >>> 0;
  return PROCESS_TAG + counter.toString(16).padStart(8, '0');
}

/** Valid position: 13 digits, NUL, 12 hex digits (what `append` makes). */
export function isPosition(p: string): boolean {
  const [t, u, rest] = p.split(SEP);
  return rest === undefined && /^\d{13}$/.test(t ?? '') && /^[0-9a-f]{12}$/.test(u ?? '');
}

export class LogRecords {
  constructor(private readonly kv: AuthKv) {}

  async append(records: readonly LogRecord[]): Promise<void> {
    const ops: AuthKvOp[] = [];
    for (const r of records) {
      const t = timeKey(r.time);
      const u = uniq();
      ops.push({ type: 'put', key: S + r.storeId + SEP + t + SEP + u, value: JSON.stringify(r) });
      ops.push({ type: 'put', key: T + t + SEP + r.storeId + SEP + u, value: '' });
    }
    await this.kv.batch(ops, false);
  }

  /** One store's records in [startMs, endMs), after `after`, in the requested order. */
  async scan(q: TimeScan): Promise<StoredLog[]> {
    const base = S + q.storeId + SEP;
    let lower = { gte: base + timeKey(q.startMs) } as { gte?: string; gt?: string };
    let upper = { lt: base + timeKey(q.endMs) };
    if (q.after !== undefined && !q.descending && base + q.after >= (lower.gte ?? '')) lower = { gt: base + q.after };
    if (q.after !== undefined && q.descending && base + q.after < (upper.lt ?? '')) upper = { lt: base + q.after };
    const rows = await this.kv.range({ ...lower, ...upper, reverse: q.descending, limit: q.limit });
    return rows.map(([k, v]) => ({ position: k.slice(base.length), record: JSON.parse(v) as LogRecord }));
  }

  /** Deletes every record older than `beforeMs`; returns how many. Works in bounded chunks. */
  async prune(beforeMs: number, chunk = 1000): Promise<number> {
    let total = 0;
    for (;;) {
      const rows = await this.kv.range({ gte: T, lt: T + timeKey(beforeMs), limit: chunk });
      if (rows.length === 0) return total;
      const ops: AuthKvOp[] = [];
      for (const [k] of rows) {
        const [, t, store, u] = k.split(SEP);
        ops.push({ type: 'del', key: k });
        ops.push({ type: 'del', key: S + (store ?? '') + SEP + (t ?? '') + SEP + (u ?? '') });
      }
      await this.kv.batch(ops, false);
      total += rows.length;
    }
  }

  close(): Promise<void> {
    return this.kv.close();
  }
}
