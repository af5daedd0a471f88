// The decision log's records (one per recorded decision) in their own ordered key-value space —
// `<dataDir>/decisions` on LevelDB, in memory, or the table latch_decisions on PostgreSQL —
// keyed for the scans that matter: one store's decisions in time order (search, export), one
// decision by store and id (explain), and every decision in age order (retention and size cap).
//
//   d \0 <store> \0 <id>   → the decision as JSON
//   t \0 <id> \0 <store>   → its stored size in bytes (pruning index, oldest first)
//   c \0 <store>           → the store's sampling setting, JSON `{"sampling": 0.25}`
//   m \0 bytes             → the bytes the records hold (approximate on several nodes)
//
// <id> is a ULID (time-ordered, unique across processes): a decision of another store is simply
// absent under this store's prefix.

import { encodeTime, isUlid } from '../domain/ids.js';
import { openAuthKv, type AuthKv, type AuthKvOp } from './auth/kv.js';
import type { PostgresOptions } from './postgres/db.js';

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

export interface DecisionScan {
  readonly storeId: string;
  readonly startMs: number;
  /** Exclusive. */
  readonly endMs: number;
  /** Exclusive id to continue after (ascending) or before (descending). */
  readonly after?: string | undefined;
  readonly descending: boolean;
  readonly limit: number;
}

const D = 'd\u0000';
const T = 't\u0000';
const C = 'c\u0000';
const BYTES = 'm\u0000bytes';
const SEP = '\u0000';

/** The smallest id of millisecond `ms` (every id of that millisecond sorts at or after it). */
const idFloor = (ms: number): string => encodeTime(Math.max(0, Math.floor(ms))) + '0'.repeat(16);

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

  /** Stores decisions (already JSON) in one batch; returns the bytes they added. */
  async append(
    rows: readonly { readonly storeId: string; readonly id: string; readonly json: string }[],
  ): Promise<number> {
    const ops: AuthKvOp[] = [];
    let added = 0;
    for (const r of rows) {
      const key = D + r.storeId + SEP + r.id;
      // Both rows, keys and values (the index row's value is at most 8 digits).
      const size = key.length + r.json.length + T.length + r.id.length + 1 + r.storeId.length + 8;
      added += size;
      ops.push({ type: 'put', key, value: r.json });
      ops.push({ type: 'put', key: T + r.id + SEP + r.storeId, value: String(size) });
    }
    ops.push({ type: 'put', key: BYTES, value: String(this.#bytes + added) });
    await this.kv.batch(ops, false);
    this.#bytes += added;
    return added;
  }

  async get(storeId: string, id: string): Promise<StoredDecision | undefined> {
    if (!isUlid(id)) return undefined;
    const v = await this.kv.get(D + storeId + SEP + id);
    return v === undefined ? undefined : (JSON.parse(v) as StoredDecision);
  }

  /** One store's decisions with times in [startMs, endMs), after `after`, in the requested order. */
  async scan(q: DecisionScan): Promise<{ position: string; record: StoredDecision }[]> {
    const base = D + q.storeId + SEP;
    let lower: { gte?: string; gt?: string } = { gte: base + idFloor(q.startMs) };
    let upper = { lt: base + idFloor(q.endMs) };
    if (q.after !== undefined && !q.descending && base + q.after >= (lower.gte ?? '')) lower = { gt: base + q.after };
    if (q.after !== undefined && q.descending && base + q.after < upper.lt) upper = { lt: base + q.after };
    const rows = await this.kv.range({ ...lower, ...upper, reverse: q.descending, limit: q.limit });
    return rows.map(([k, v]) => ({ position: k.slice(base.length), record: JSON.parse(v) as StoredDecision }));
  }

  /**
   * Deletes the oldest decisions, in bounded chunks, while one is older than `beforeMs` or the
   * records hold more than `maxBytes`; returns how many.
   */
  async prune(beforeMs: number, maxBytes: number, chunk = 1000): Promise<number> {
    let total = 0;
    const floor = T + idFloor(beforeMs);
    for (;;) {
      const rows = await this.kv.range({ gte: T, lt: T + '\uffff', limit: chunk });
      const ops: AuthKvOp[] = [];
      let freed = 0;
      let n = 0;
      for (const [k, v] of rows) {
        if (k >= floor && this.#bytes - freed <= maxBytes) break;
        const [, id, store] = k.split(SEP);
        ops.push({ type: 'del', key: k });
        ops.push({ type: 'del', key: D + (store ?? '') + SEP + (id ?? '') });
        freed += Number(v) || 0;
        n++;
      }
      if (n === 0) return total;
      ops.push({ type: 'put', key: BYTES, value: String(Math.max(0, this.#bytes - freed)) });
      await this.kv.batch(ops, false);
      this.#bytes = Math.max(0, this.#bytes - freed);
      total += n;
      if (n < rows.length) return total;
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
