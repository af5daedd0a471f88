// The changelog read side on PostgreSQL: ReadChanges pages (type filter, start_time, cursors
// identical to the key-value backends': revision u48 + sequence u32) and the changesSince stream.
//
// Reading without a snapshot is safe here: a store's revisions commit in order (tuples.ts), so
// any read sees a prefix of the log, and a page that ends at revision n is followed by n + 1.
//
// A row with `bulk` set is a compact row: the changes at seq `seq - n + 1` … `seq` of its
// revision, deletes of a delete by filter (delete-matching-function.ts; `deleted` true, each
// entry's `p` the deleted tuple's prior state) or writes of an import chunk (import.ts; `deleted`
// false, `p` the written tuple's condition and expiry). Both readers expand it into exactly the
// changes per-change rows give (same keys, timestamps, priors, positions and cursors); a
// ReadChanges page may end inside one and the next page resumes after its cursor's change.

import type { RelationshipCondition, TupleChange, TupleKey } from '../../domain/types.js';
import { readUint, u32, u48 } from '../codec.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { FlatIterator } from '../kv.js';
import type { ChangePage, ChangeQuery, RevisionChange } from '../types.js';
import { dec, enc, num, type Db, type Row } from './db.js';
import { toKey } from './tuples.js';

const POSITION_LENGTH = 10;
const LIVE = 'EXISTS (SELECT 1 FROM latch_stores s WHERE s.id = $1 AND s.deleted_ms IS NULL)';
const BATCH = 5000;

/**
 * One entry of a compact row's `bulk`: stored object, relation, user, and the pair
 * `[condition, expires_ms]` (a delete's prior state, a write's own) or 0 when both are null.
 */
type BulkEntry = [string, string, string, 0 | [RelationshipCondition | null, number | null]];

/** A compact row's entries (seq order), or undefined for a row of one change. */
function bulkOf(row: Row, at: number): BulkEntry[] | undefined {
  const text = row[at];
  return typeof text === 'string' ? (JSON.parse(text) as BulkEntry[]) : undefined;
}

function bulkKey(e: BulkEntry): TupleKey {
  return { object: dec(e[0]), relation: dec(e[1]), user: dec(e[2]) };
}

function toChange(row: Row): TupleChange {
  // revision, seq, deleted, object, relation, user, condition, ms, expires_ms; a delete row's
  // condition column is the deleted tuple's state (write-function.ts, latch_prior), not part of the change
  const deleted = row[2] === true;
  return {
    tuple_key: toKey([row[3], row[4], row[5], deleted ? null : row[6], row[8]]),
    operation: deleted ? 'TUPLE_OPERATION_DELETE' : 'TUPLE_OPERATION_WRITE',
    timestamp: new Date(num(row[7])).toISOString(),
  };
}

/** Same contract as ../changes.ts readChanges (cursor echo, start_time, type filter). */
export async function readChanges(db: Db, storeId: string, q: ChangeQuery): Promise<ChangePage> {
  const after = decodeCursor(q.after, 'c', (p) => p.length === POSITION_LENGTH);
  const values: unknown[] = [storeId];
  const where = ['store_id = $1', LIVE];
  if (q.type !== undefined) {
    values.push(enc(q.type));
    where.push(`object_type = $${values.length}`);
  }
  if (after !== undefined) {
    values.push(readUint(after, 0, 6), readUint(after, 6, 4));
    where.push(`(revision, seq) > ($${values.length - 1}, $${values.length})`);
  } else if (q.startTime !== undefined) {
    const ms = Date.parse(q.startTime);
    const first = await db.value(
      'SELECT revision FROM latch_revisions WHERE store_id = $1 AND ms >= $2 ORDER BY ms, revision LIMIT 1',
      [storeId, Number.isFinite(ms) ? Math.max(0, ms) : 0],
    );
    if (first === undefined) return { items: [], cursors: [] };
    values.push(num(first));
    where.push(`revision >= $${values.length}`);
  }
  values.push(q.pageSize);
  // Every row yields at least one change (a compact row after the cursor holds one past it), so
  // pageSize rows are enough.
  const rows = await db.rows(
    `SELECT revision, seq, deleted, object, relation, "user", condition, ms, expires_ms, bulk FROM latch_changes WHERE ${where.join(' AND ')} ORDER BY revision, seq LIMIT $${values.length}`,
    values,
  );
  const items: TupleChange[] = [];
  const cursors: string[] = [];
  for (const r of rows) {
    if (items.length === q.pageSize) break;
    const revision = num(r[0]);
    const seq = num(r[1]);
    const bulk = bulkOf(r, 9);
    if (bulk === undefined) {
      items.push(toChange(r));
      cursors.push(encodeCursor('c', u48(revision) + u32(seq)));
      continue;
    }
    const first = seq - bulk.length + 1;
    const from = after !== undefined && readUint(after, 0, 6) === revision ? readUint(after, 6, 4) + 1 : first;
    const timestamp = new Date(num(r[7])).toISOString();
    const rev = u48(revision);
    const deleted = r[2] === true;
    for (let s = Math.max(from, first); s <= seq && items.length < q.pageSize; s++) {
      const e = bulk[s - first] as BulkEntry;
      items.push(
        deleted
          ? { tuple_key: bulkKey(e), operation: 'TUPLE_OPERATION_DELETE', timestamp }
          : { tuple_key: withPair(bulkKey(e), e[3]), operation: 'TUPLE_OPERATION_WRITE', timestamp },
      );
      cursors.push(encodeCursor('c', rev + u32(s)));
    }
  }
  return { items, cursors, next: cursors[cursors.length - 1] ?? q.after };
}

/**
 * The change of a changelog row (revision, seq, deleted, object, relation, user, condition,
 * expires_ms). A delete row holds the deleted tuple's state in its condition column,
 * `[condition | null, expires ms | null]` (write-function.ts, latch_prior), returned as `prior`;
 * one without it (NULL: every write function records it, so only a row not written by latch) has
 * no `prior`, and a past view then reads that key's last write instead.
 */
function toRevisionChange(row: Row): RevisionChange {
  const revision = num(row[0]);
  if (row[2] !== true) return { revision, operation: 'write', tuple: toKey([row[3], row[4], row[5], row[6], row[7]]) };
  const tuple = toKey([row[3], row[4], row[5], null, row[7]]);
  if (typeof row[6] !== 'string') return { revision, operation: 'delete', tuple };
  const [condition, expires] = JSON.parse(row[6]) as [RelationshipCondition | null, number | null];
  return { revision, operation: 'delete', tuple, prior: priorOf(tuple, condition, expires) };
}

/** The deleted tuple's state before its delete: its key with the condition and expiry it had. */
function priorOf(tuple: TupleKey, condition: RelationshipCondition | null, expires: number | null): TupleKey {
  const { object, relation, user } = tuple;
  return {
    object,
    relation,
    user,
    ...(condition === null ? {} : { condition }),
    ...(expires === null ? {} : { expires_at: new Date(expires).toISOString() }),
  };
}

/** A key with the condition and expiry of an entry's pair. */
function withPair(tuple: TupleKey, p: BulkEntry[3]): TupleKey {
  return p === 0 ? priorOf(tuple, null, null) : priorOf(tuple, p[0], p[1]);
}

/**
 * The changes of a compact row, appended to `out`: deletes (delete-matching-function.ts) each
 * with its prior state, or writes (import.ts) each with its condition and expiry.
 */
function bulkChanges(out: RevisionChange[], revision: number, deleted: boolean, bulk: readonly BulkEntry[]): void {
  for (const e of bulk) {
    const tuple = bulkKey(e);
    if (deleted) out.push({ revision, operation: 'delete', tuple, prior: withPair(tuple, e[3]) });
    else out.push({ revision, operation: 'write', tuple: withPair(tuple, e[3]) });
  }
}

/** Changes with revision > `revision`, oldest first, in keyset batches of 5000 rows. */
export function changesSince(db: Db, storeId: string, revision: number): AsyncIterable<RevisionChange> {
  async function* batches(): AsyncGenerator<readonly RevisionChange[]> {
    let at: [number, number] = [revision + 1, -1];
    for (;;) {
      const rows = await db.rows(
        `SELECT revision, seq, deleted, object, relation, "user", condition, expires_ms, bulk FROM latch_changes
          WHERE store_id = $1 AND ${LIVE} AND (revision, seq) > ($2, $3) ORDER BY revision, seq LIMIT ${BATCH}`,
        [storeId, at[0], at[1]],
      );
      const out: RevisionChange[] = [];
      for (const r of rows) {
        const bulk = bulkOf(r, 8);
        if (bulk === undefined) out.push(toRevisionChange(r));
        else bulkChanges(out, num(r[0]), r[2] === true, bulk);
      }
      if (out.length > 0) yield out;
      const last = rows[rows.length - 1];
      if (rows.length < BATCH || !last) return;
      at = [num(last[0]), num(last[1])];
    }
  }
  return {
    [Symbol.asyncIterator]: () => new FlatIterator(batches(), (c: RevisionChange) => c),
  };
}
