// The changelog read side on PostgreSQL: ReadChanges pages (type filter, start_time, cursors
// identical to the key-value backends': revision u48 + sequence u32) and the changesSince stream.
//
// Reading without a snapshot is safe here: a store's revisions commit in order (tuples.ts), so
// any read sees a prefix of the log, and a page that ends at revision n is followed by n + 1.

import type { RelationshipCondition, TupleChange, TupleKey } from '../../domain/types.js';
import { readUint, u32, u48 } from '../codec.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { FlatIterator } from '../kv.js';
import type { ChangePage, ChangeQuery, RevisionChange } from '../types.js';
import { enc, num, type Db, type Row } from './db.js';
import { toKey } from './tuples.js';

const POSITION_LENGTH = 10;
const LIVE = 'EXISTS (SELECT 1 FROM latch_stores s WHERE s.id = $1 AND s.deleted_ms IS NULL)';
const BATCH = 5000;

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
  const rows = await db.rows(
    `SELECT revision, seq, deleted, object, relation, "user", condition, ms, expires_ms FROM latch_changes WHERE ${where.join(' AND ')} ORDER BY revision, seq LIMIT $${values.length}`,
    values,
  );
  const cursors = rows.map((r) => encodeCursor('c', u48(num(r[0])) + u32(num(r[1]))));
  return { items: rows.map(toChange), cursors, next: cursors[cursors.length - 1] ?? q.after };
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
  const { object, relation, user } = tuple;
  const prior: TupleKey = {
    object,
    relation,
    user,
    ...(condition === null ? {} : { condition }),
    ...(expires === null ? {} : { expires_at: new Date(expires).toISOString() }),
  };
  return { revision, operation: 'delete', tuple, prior };
}

/** Changes with revision > `revision`, oldest first, in keyset batches of 5000. */
export function changesSince(db: Db, storeId: string, revision: number): AsyncIterable<RevisionChange> {
  async function* batches(): AsyncGenerator<readonly Row[]> {
    let at: [number, number] = [revision + 1, -1];
    for (;;) {
      const rows = await db.rows(
        `SELECT revision, seq, deleted, object, relation, "user", condition, expires_ms FROM latch_changes
          WHERE store_id = $1 AND ${LIVE} AND (revision, seq) > ($2, $3) ORDER BY revision, seq LIMIT ${BATCH}`,
        [storeId, at[0], at[1]],
      );
      if (rows.length > 0) yield rows;
      const last = rows[rows.length - 1];
      if (rows.length < BATCH || !last) return;
      at = [num(last[0]), num(last[1])];
    }
  }
  return {
    [Symbol.asyncIterator]: () => new FlatIterator(batches(), toRevisionChange),
  };
}
