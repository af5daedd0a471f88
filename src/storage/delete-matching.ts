// Delete by filter on the key-value backends: one iterator over the filter's key range (the same
// scan Read uses, tuples.ts) visits the matches with their stored values, and each match becomes
// its batch ops and changelog fields at once: no second read of the keys it just saw, no object
// per match beyond the deleted tuple key itself. The caller holds the store's mutex from the scan
// until the batch has committed.
//
// Cost (the store's CPU per deleted tuple is what bounds delete by filter): a key that is ASCII
// and has no escaped NUL (every key of a plain store) is cut at its separators, its parts taken
// as slices of it, and a non-matching key is skipped on its relation and user slices alone; any
// other key is decoded as Read decodes it. A by-user filter (object type and user) scans its
// object type (tuples.ts kvScanFor): the engine deletes that shape through its index instead.
//
// Reads run ahead (ScanAhead): the iterator's next native reads are started while JavaScript
// works through the rows already read, and a scan stopped at its limit keeps reading the rows
// after its last deleted tuple (up to AHEAD_ROWS) while the batch commits and the reply goes out.
// The same filter's next request on the unchanged store (KvStorage checks the revision under the
// store's mutex) takes those rows, on the same iterator, instead of starting a new scan: its
// first reads overlap the write, index update and reply of the request before it.

import type { TupleKey } from '../domain/types.js';
import { typeOf } from '../domain/tuple.js';
import { BULK_DELETE, bulkChanges, decodeTupleText, ISO_LENGTH, key, prefixEnd, u32, u48 } from './codec.js';
import type { Kv, KvOp, KvTextEntry, KvWriter } from './kv.js';
import { kvScanFor } from './tuples.js';
import type { TupleFilter } from './types.js';
import { bulkOps, endRevisionOps, logOps, type PlannedWrite, type StoreState } from './write-plan.js';

/** A key needing the full decode: a byte ≥ 0x80 (UTF-8 or escaped text) or an escaped NUL. */
// eslint-disable-next-line no-control-regex
const NOT_PLAIN = /[\u0080-\u00ff]|\u0000\u00ff/;

/**
 * The batch being built: tuple ops, the bulk record's fields, the deleted keys. With a writer the
 * tuple ops go straight to it (the native batch, while the scan waits on its next read) and `ops`
 * gets only the changelog's: no op object per deleted key lives through the request.
 */
class Deletes {
  readonly ops: KvOp[] = [];
  /** `[BULK_DELETE, timestamp, o1, r1, u1, w1, …]` (codec.ts), the timestamp set at the end. */
  readonly flat: unknown[] = [BULK_DELETE, ''];
  readonly deleted: TupleKey[] = [];
  /** The object type of the first match, and whether every match has it. */
  type = '';
  mixed = false;

  constructor(
    private readonly storeId: string,
    private readonly writer: KvWriter | undefined,
  ) {}

  private del(key: string): void {
    if (this.writer) this.writer.del(key);
    else this.ops.push({ type: 'del', key });
  }

  /** One matched tuple: its key and its stored value's text. */
  add(object: string, relation: string, user: string, primary: string, value: string): void {
    const t = { user, relation, object };
    this.del(primary);
    let was: unknown = 0;
    if (value.length !== ISO_LENGTH) {
      const { condition, expires_at } = decodeTupleText(value);
      if (expires_at !== undefined) this.del(key.expiry(this.storeId, Date.parse(expires_at), t));
      if (condition || expires_at !== undefined)
        was = { ...(condition ? { condition } : {}), ...(expires_at === undefined ? {} : { expires_at }) };
    }
    if (this.deleted.length === 0) this.type = typeOf(object);
    else if (!this.mixed && !(object.startsWith(this.type) && object.charCodeAt(this.type.length) === 0x3a))
      this.mixed = true;
    this.flat.push(object, relation, user, was);
    this.deleted.push(t);
  }
}

/**
 * Delete by filter: the first `limit` tuples `filter` selects (Read order) after the key `after`
 * of the filter's scan (none: from its start), or the rows `after` holds (a stopped scan of the
 * same filter whose store has not changed since), planned as one batch (the tuple ops `planWrite`
 * makes for these deletes with onMissing 'ignore'), and whether more match. When every deleted
 * tuple has one object type (a keyed filter: always) the revision's changelog is ONE bulk record
 * (codec.ts BULK_DELETE) with one per-type index entry, read back as the same changes; otherwise
 * one entry per change as `planWrite` logs them. `last` is the scan key of the last tuple planned;
 * `rest`, when more match, the scan after it, still reading ahead: the caller resumes with it or
 * closes it. With `writer` the tuple deletes are added to it as they are found and the plan's ops
 * are the rest of the batch, to add before writing it (nothing deleted: no ops, discard it).
 */
export async function planMatchingDeletes(
  kv: Kv,
  storeId: string,
  state: StoreState,
  filter: TupleFilter,
  limit: number,
  after?: string | ScanAhead,
  writer?: KvWriter,
): Promise<{ plan: PlannedWrite; more: boolean; last: string | undefined; rest: ScanAhead | undefined }> {
  const scan = kvScanFor(filter);
  const base = key.tuples(storeId);
  const from = base + scan.prefix;
  const s = base.length;
  const rel = filter.relation || undefined;
  const usr = filter.user || undefined;
  const d = new Deletes(storeId, writer);
  let more = false;
  let last: string | undefined;

  /** The entry's tuple when the filter selects it (false: skipped; true: past the limit). */
  const visit = ([k, v]: KvTextEntry): boolean => {
    if (NOT_PLAIN.test(k)) {
      const t = scan.decode(k.slice(s));
      if (!t || !scan.match(t)) return false;
      if (d.deleted.length === limit) return true;
      d.add(t.object, t.relation, t.user, key.tuple(storeId, t), v);
      last = k;
      return false;
    }
    // Plain: every NUL is a separator. `D <id> t <obj>⁰¹<rel>⁰¹<user>⁰¹`.
    const z1 = k.indexOf('\u0000', s);
    if (z1 === -1) return false; // the revision key `D <id> t`
    const z2 = k.indexOf('\u0000', z1 + 2);
    const z3 = k.indexOf('\u0000', z2 + 2);
    if (rel !== undefined && (z2 - z1 - 2 !== rel.length || !k.startsWith(rel, z1 + 2))) return false;
    if (usr !== undefined && (z3 - z2 - 2 !== usr.length || !k.startsWith(usr, z2 + 2))) return false;
    if (d.deleted.length === limit) return true;
    d.add(k.slice(s, z1), k.slice(z1 + 2, z2), k.slice(z2 + 2, z3), k, v);
    last = k;
    return false;
  };

  let source: ScanAhead;
  if (after instanceof ScanAhead) source = after;
  else {
    const range = after === undefined ? { gte: from } : { gt: after };
    source = new ScanAhead(
      kv.textBatches({ ...range, lt: prefixEnd(from) })[Symbol.asyncIterator](),
      Math.min(limit + 1, AHEAD_ROWS),
    );
  }
  try {
    scan: for (let rows = await source.take(); rows !== undefined; rows = await source.take()) {
      for (let i = 0; i < rows.length; i++) {
        if (visit(rows[i] as KvTextEntry)) {
          more = true;
          // The row past the limit and the rest of its batch come first in the next request.
          source.putBack(rows.slice(i));
          break scan;
        }
      }
    }
  } catch (err) {
    await source.close();
    throw err;
  }
  if (!more) await source.close();
  return { plan: planOf(storeId, state, d), more, last, rest: more ? source : undefined };
}

type Rows = readonly KvTextEntry[];

/**
 * The most rows a scan reads ahead of what it has used: two native reads. Rows kept longer live
 * through a young-generation collection and are copied: reading a whole request of 10,000 ahead
 * cost more CPU per tuple (bench/delete-by-filter.ts, same run, three pairs: 11.2 / 12.0 / 9.9
 * against 10.6 / 11.1 / 8.9 µs at 2,048, load 19-28).
 */
const AHEAD_ROWS = 2048;

/**
 * The batches of one scan, read ahead: native reads run while at most `ahead` rows wait unread, so
 * LevelDB reads on its own thread while JavaScript works (and, once a request has stopped, while
 * the next one is on its way). One read at a time (an iterator takes no concurrent reads); a read
 * that fails ends the scan and its error is thrown by `take`. `close` must follow (it stops the
 * reads and releases the iterator and its snapshot).
 */
export class ScanAhead {
  private readonly queue: Rows[] = [];
  private queued = 0;
  private reading: Promise<void> | undefined;
  private ended = false;
  private failure: { readonly error: unknown } | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly batches: AsyncIterator<Rows>,
    private readonly ahead: number,
  ) {
    this.pump();
  }

  /** The next batch, undefined at the end of the range. */
  async take(): Promise<Rows | undefined> {
    for (;;) {
      const rows = this.queue.shift();
      if (rows !== undefined) {
        this.queued -= rows.length;
        this.pump();
        return rows;
      }
      if (this.failure) throw this.failure.error;
      this.pump();
      if (!this.reading) return undefined;
      await this.reading;
    }
  }

  /** Rows taken and not used: `take` returns them first. */
  putBack(rows: Rows): void {
    this.queue.unshift(rows);
    this.queued += rows.length;
  }

  /** Stops reading ahead and closes the iterator (once; later calls wait for the same close). */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.ended = true;
      this.queue.length = 0;
      await this.reading;
      await this.batches.return?.();
    })();
    return this.closing;
  }

  private pump(): void {
    if (this.reading || this.ended || this.queued >= this.ahead) return;
    this.reading = this.batches
      .next()
      .then(
        (r) => {
          if (r.done) this.ended = true;
          else if (!this.closing) {
            this.queue.push(r.value);
            this.queued += r.value.length;
          }
        },
        (error: unknown) => {
          this.ended = true;
          this.failure = { error };
        },
      )
      .finally(() => {
        this.reading = undefined;
        this.pump();
      });
  }
}

/** The batch of the collected deletes: tuple ops, then the changelog, time index and revision. */
function planOf(storeId: string, state: StoreState, d: Deletes): PlannedWrite {
  const ms = Math.max(Date.now(), state.lastMs);
  const timestamp = new Date(ms).toISOString();
  const { ops, flat, deleted } = d;
  if (deleted.length === 0)
    return { ops: [], ms, result: { revision: state.revision, timestamp, deleted, written: [] } };
  const rev = state.revision + 1;
  flat[1] = timestamp;
  if (d.mixed) logOps(ops, storeId, rev, ms, bulkChanges(flat, 0, deleted.length));
  else {
    bulkOps(ops, storeId, u48(rev) + u32(deleted.length - 1), d.type, flat);
    endRevisionOps(ops, storeId, rev, ms);
  }
  return { ops, ms, result: { revision: rev, timestamp, deleted, written: [] } };
}
