// The decision log's records in their own ordered key-value space — `<dataDir>/decisions` on
// LevelDB, in memory, or the table latch_decisions on PostgreSQL. Decisions are stored in
// batches, one value per store per write (NDJSON, at most 1,024 lines), so that recording costs
// one key-value write per batch, not per decision. Keys serve the scans that matter: one store's
// decisions in time order (search, export), one decision by store and id (explain), and every
// batch in age order (retention and size cap).
//
//   d \0 <store> \0 <batch id>   → the batch: one decision per line, in the compact form `DecisionLine`
//   t \0 <batch id> \0 <store>   → `<bytes> <lines>` of the batch (pruning index, oldest first)
//   c \0 <store>                 → the store's sampling setting, JSON `{"sampling": 0.25}`
//   m \0 bytes                   → the bytes the records hold (approximate on several nodes)
//
// Ids are ULIDs: a batch id ends in `00`, and the decision on line i of the batch has the batch id
// with i in those two base-32 digits (`decisionIds`). Example: batch `01JQ…K400` holds decisions
// `01JQ…K400`, `01JQ…K401`, …; explaining `01JQ…K401` reads that one value, line 1. A decision of
// another store is simply absent under this store's prefix.

import { randomBytes } from 'node:crypto';
import { encodeTime, isUlid } from '../domain/ids.js';
import { openAuthKv, type AuthKv, type AuthKvOp } from './auth/kv.js';
import type { PostgresOptions } from './postgres/db.js';
import type { TimeScan } from './time-scan.js';

/** A decision as stored and served (the JSON of `GET /stores/{id}/decisions`). */
export interface StoredDecision {
  readonly id: string;
  readonly timestamp: string;
  readonly store_id: string;
  readonly client_id: string;
  readonly operation: string;
  readonly authorization_model_id: string;
  readonly revision: number;
  /** The instant tuple expiry was judged at (ms); 0 when no tuple of the store could expire. */
  readonly instant: number;
  readonly request: Readonly<Record<string, unknown>>;
  readonly answer: Readonly<Record<string, unknown>>;
}

const D = 'd\u0000';
const T = 't\u0000';
const C = 'c\u0000';
const BYTES = 'm\u0000bytes';
const SEP = '\u0000';

/** The smallest id of millisecond `ms` (every id of that millisecond sorts at or after it). */
const idFloor = (ms: number): string => encodeTime(Math.max(0, Math.floor(ms))) + '0'.repeat(16);

const B32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** 6 random base-32 digits per process: ids of two nodes never collide. */
const PROCESS_TAG = Array.from(randomBytes(6), (b) => B32[b % 32]).join('');
/** How much later than its batch's id a decision of the batch may be (the writer cuts batches at it). */
export const BATCH_SPAN_MS = 60_000;
/** Lines of one batch at most: the two last base-32 digits of an id. */
export const BATCH_LINES = 1024;
let idMs = -1;
let idPrefix = '';
let batchSeq = 0;

/** The batch of a decision id (its last two digits zeroed). */
const batchOf = (id: string): string => id.slice(0, 24) + '00';

/** Line of a decision id within its batch. */
const lineOf = (id: string): number => B32.indexOf(id[24] ?? '0') * 32 + B32.indexOf(id[25] ?? '0');

/**
 * A new batch id made at `ms` (or at the last time used, if the clock went back): the ULID time,
 * the process tag, an 8-digit counter and `00` — increasing within the process.
 */
export function batchId(ms: number): string {
  if (ms > idMs) {
    idMs = ms;
    idPrefix = encodeTime(ms) + PROCESS_TAG;
  }
  let n = ++batchSeq;
  let digits = '';
  for (let i = 0; i < 8; i++) {
    digits = B32[n % 32] + digits;
    n = Math.floor(n / 32);
  }
  return idPrefix + digits + '00';
}

/** The id of line `i` of batch `batch`. */
export function decisionIdOf(batch: string, i: number): string {
  return batch.slice(0, 24) + (B32[i >> 5] as string) + (B32[i & 31] as string);
}

/**
 * One stored decision: a JSON array, about a quarter of the served form's bytes (the store, the
 * id and the field names are implied). A checked tuple's request is
 * `[user, relation, object, contextual tuples or 0, context or 0, correlation id?]` and its answer
 * 1 or 0; a listing's request and answer are the served objects. Example:
 * `[1773309600000,"","Check","01JQ…",41,0,["user:bob","viewer","document:contract",0,0],1]`.
 */
type DecisionLine = [
  time: number,
  clientId: string,
  operation: string,
  modelId: string,
  revision: number,
  instant: number,
  request: unknown,
  answer: unknown,
];

/** A stored line in the served form. */
function expand(storeId: string, id: string, line: string): StoredDecision {
  const [time, clientId, operation, modelId, revision, instant, req, ans] = JSON.parse(line) as DecisionLine;
  let request = req as Record<string, unknown>;
  if (Array.isArray(req)) {
    const [user, relation, object, contextual, context, correlationId] = req as unknown[];
    request = { tuple_key: { user, relation, object }, contextual_tuples: contextual || [], context: context || null };
    if (correlationId !== undefined) request.correlation_id = correlationId;
  }
  const answer = typeof ans === 'number' ? { allowed: ans === 1 } : (ans as Record<string, unknown>);
  const timestamp = new Date(time).toISOString();
  const head = { id, timestamp, store_id: storeId, client_id: clientId, operation };
  return { ...head, authorization_model_id: modelId, revision, instant, request, answer };
}

/** A stored batch's lines with their ids. */
function lines(batch: string, value: string): { id: string; json: string }[] {
  return value.split('\n').map((json, i) => ({ id: decisionIdOf(batch, i), json }));
}

export class DecisionRecords {
  #bytes = 0;

  private constructor(private readonly kv: AuthKv) {}

  static async open(kv: AuthKv): Promise<DecisionRecords> {
    const r = new DecisionRecords(kv);
    r.#bytes = Number((await kv.get(BYTES)) ?? 0) || 0;
    return r;
  }

  /** Bytes the stored decisions hold (keys and values). */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Stores batches in one write: `json[i]` of a batch is the decision (a `DecisionLine`) whose id
   * is `decisionIdOf(batch, i)` (at most BATCH_LINES; JSON.stringify never makes a newline).
   * Returns the bytes they added.
   */
  async append(
    batches: readonly { readonly storeId: string; readonly batch: string; readonly json: readonly string[] }[],
  ): Promise<number> {
    const ops: AuthKvOp[] = [];
    let added = 0;
    for (const b of batches) {
      const key = D + b.storeId + SEP + b.batch;
      const value = b.json.join('\n');
      const index = T + b.batch + SEP + b.storeId;
      const size = key.length + value.length + index.length + 8;
      ops.push({ type: 'put', key, value }, { type: 'put', key: index, value: `${size} ${b.json.length}` });
      added += size;
    }
    ops.push({ type: 'put', key: BYTES, value: String(this.#bytes + added) });
    await this.kv.batch(ops, false);
    this.#bytes += added;
    return added;
  }

  async get(storeId: string, id: string): Promise<StoredDecision | undefined> {
    if (!isUlid(id)) return undefined;
    const v = await this.kv.get(D + storeId + SEP + batchOf(id));
    const line = v?.split('\n')[lineOf(id)];
    return line === undefined ? undefined : expand(storeId, id, line);
  }

  /**
   * One store's decisions whose batches began in [startMs, endMs), after (ascending) or before
   * (descending) the id `after`, in that order; at least `limit` when that many remain (whole
   * batches are read, so a chunk may hold up to BATCH_LINES − 1 more).
   */
  async scan(q: TimeScan): Promise<{ position: string; record: StoredDecision }[]> {
    const base = D + q.storeId + SEP;
    // A batch's id carries its first decision's time: one begun a little earlier may hold later ones.
    let lower: { gte?: string; gt?: string } = { gte: base + idFloor(q.startMs - BATCH_SPAN_MS) };
    let upper = { lt: base + idFloor(q.endMs) };
    const from = q.after === undefined ? undefined : batchOf(q.after);
    if (from !== undefined && !q.descending && base + from >= (lower.gte ?? '')) lower = { gte: base + from };
    if (from !== undefined && q.descending && base + from < upper.lt) upper = { lt: base + from + SEP };
    const out: { position: string; record: StoredDecision }[] = [];
    for (;;) {
      const rows = await this.kv.range({ ...lower, ...upper, reverse: q.descending, limit: 16 });
      for (const [k, v] of rows) {
        const ls = lines(k.slice(base.length), v);
        if (q.descending) ls.reverse();
        for (const l of ls) {
          if (q.after !== undefined && (q.descending ? l.id >= q.after : l.id <= q.after)) continue;
          const record = expand(q.storeId, l.id, l.json);
          const t = Date.parse(record.timestamp);
          if (t >= q.startMs && t < q.endMs) out.push({ position: l.id, record });
        }
      }
      const last = rows[rows.length - 1]?.[0];
      if (out.length >= q.limit || rows.length < 16 || last === undefined) return out;
      if (q.descending) upper = { lt: last };
      else lower = { gt: last };
    }
  }

  /**
   * Deletes the oldest batches while one began before `beforeMs` or the records hold more than
   * `maxBytes`; returns how many decisions went. Works in bounded chunks.
   */
  async prune(beforeMs: number, maxBytes: number, chunk = 256): Promise<number> {
    let total = 0;
    const floor = T + idFloor(beforeMs);
    for (;;) {
      const rows = await this.kv.range({ gte: T, lt: T + '\uffff', limit: chunk });
      const ops: AuthKvOp[] = [];
      let bytes = this.#bytes;
      let n = 0;
      for (const [k, v] of rows) {
        if (k >= floor && bytes <= maxBytes) break;
        const [, batch = '', store = ''] = k.split(SEP);
        const [size = '0', count = '0'] = v.split(' ');
        total += Number(count) || 0;
        ops.push({ type: 'del', key: D + store + SEP + batch }, { type: 'del', key: k });
        bytes = Math.max(0, bytes - (Number(size) || 0));
        n++;
      }
      if (n === 0) return total;
      ops.push({ type: 'put', key: BYTES, value: String(bytes) });
      await this.kv.batch(ops, false);
      this.#bytes = bytes;
      if (n < rows.length || rows.length < chunk) return total;
    }
  }

  /** Every store's sampling setting. */
  async settings(): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const [k, v] of await this.kv.range({ gte: C, lt: C + '\uffff' })) {
      const s = (JSON.parse(v) as { sampling?: unknown }).sampling;
      if (typeof s === 'number') out.set(k.slice(C.length), s);
    }
    return out;
  }

  /** Sets (a number) or clears (undefined: the server's default applies) a store's sampling. */
  async setSampling(storeId: string, sampling: number | undefined): Promise<void> {
    const op: AuthKvOp =
      sampling === undefined
        ? { type: 'del', key: C + storeId }
        : { type: 'put', key: C + storeId, value: JSON.stringify({ sampling }) };
    await this.kv.batch([op], true);
  }

  close(): Promise<void> {
    return this.kv.close();
  }
}

/** Opens the decision records: the PostgreSQL table, else the LevelDB directory `path`, else memory. */
export async function openDecisionRecords(
  path: string | undefined,
  postgres?: PostgresOptions | undefined,
): Promise<DecisionRecords> {
  const kv = await openAuthKv(path, postgres && { options: postgres, table: 'latch_decisions' });
  try {
    return await DecisionRecords.open(kv);
  } catch (err) {
    await kv.close();
    throw err;
  }
}
