// The changelog read side: ReadChanges pages (type filter, start_time, cursors) and the
// changesSince replay stream used to bring an index checkpoint up to date.

import type { TupleChange } from '../domain/types.js';
import { AppError } from '../errors.js';
import { decodeJson, key, prefixEnd, readUint, u48, type StoredChange } from './codec.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { FlatIterator, type Kv, type KvRange, type KvTextEntry } from './kv.js';
import type { ChangePage, ChangeQuery, RevisionChange } from './types.js';

/** A change position: revision (6 bytes) + sequence within the write (4 bytes). */
const POSITION_LENGTH = 10;

/** The first revision written at or after `ms`, from the time index; undefined when none. */
async function firstRevisionAt(kv: Kv, storeId: string, ms: number): Promise<number | undefined> {
  const times = key.times(storeId);
  for await (const k of kv.keys({ gte: times + u48(ms), lt: prefixEnd(times), limit: 1 }))
    return readUint(k, times.length + 6, 6);
  return undefined;
}

function toChange(c: StoredChange): TupleChange {
  return {
    tuple_key: c.tuple,
    operation: c.op === 'write' ? 'TUPLE_OPERATION_WRITE' : 'TUPLE_OPERATION_DELETE',
    timestamp: c.timestamp,
  };
}

/**
 * Changes oldest first. `next` is the position after the last returned change, also when the page
 * is not full; when nothing is returned the given cursor comes back unchanged (poll with it
 * later), and only a call without a cursor that matched nothing returns no `next`
 * (docs/reference/http-api.md §4.13). A cursor takes precedence over `startTime`.
 *
 * Positions come from the changelog itself or, with a `type` filter, from the per-type index
 * (same positions, so one cursor format); the page's changes are then fetched in one getMany.
 */
export async function readChanges(kv: Kv, storeId: string, q: ChangeQuery): Promise<ChangePage> {
  const after = decodeCursor(q.after, 'c', (p) => p.length === POSITION_LENGTH);
  const base = key.changes(storeId);
  const index = q.type === undefined ? base : key.changesOfType(storeId, q.type);
  let range: KvRange = { gte: index, limit: q.pageSize };
  if (after !== undefined) range = { gt: index + after, limit: q.pageSize };
  else if (q.startTime !== undefined) {
    const ms = Date.parse(q.startTime);
    const rev = await firstRevisionAt(kv, storeId, Number.isFinite(ms) ? Math.max(0, ms) : 0);
    if (rev === undefined) return { items: [], cursors: [] };
    range = { gte: index + u48(rev), limit: q.pageSize };
  }
  const positions: string[] = [];
  for await (const k of kv.keys({ ...range, lt: prefixEnd(index) })) positions.push(k.slice(index.length));
  const values = await kv.getMany(positions.map((p) => base + p));
  const items = values.map((v) => {
    if (!v) throw new AppError('data_loss', 'a change indexed by type is missing from the changelog');
    return toChange(decodeJson<StoredChange>(v));
  });
  const cursors = positions.map((p) => encodeCursor('c', p));
  return { items, cursors, next: cursors[cursors.length - 1] ?? q.after };
}

/**
 * Changes with revision > `revision`, oldest first, read from one snapshot (taken by this call).
 * A restart replays the whole tail since the index checkpoint, so it streams native batches of
 * text values with no generator step per change (see FlatIterator), like the tuple scan.
 */
export function changesSince(kv: Kv, storeId: string, revision: number): AsyncIterable<RevisionChange> {
  const base = key.changes(storeId);
  const batches = kv.textBatches({ gte: base + u48(revision + 1), lt: prefixEnd(base) });
  const at = base.length;
  return {
    [Symbol.asyncIterator]: () =>
      new FlatIterator(batches[Symbol.asyncIterator](), ([k, v]: KvTextEntry): RevisionChange => {
        const c = JSON.parse(v) as StoredChange;
        const revision = readUint(k, at, 6);
        if (c.was === undefined) return { revision, operation: c.op, tuple: c.tuple };
        const { object, relation, user } = c.tuple;
        return { revision, operation: c.op, tuple: c.tuple, prior: { object, relation, user, ...c.was } };
      }),
  };
}

/** Commit time of `revision` (the timestamp of its first change); undefined when not committed. */
export async function revisionTime(kv: Kv, storeId: string, revision: number): Promise<number | undefined> {
  if (revision < 1) return undefined;
  const base = key.changes(storeId) + u48(revision);
  for await (const [, v] of kv.entries({ gte: base, lt: prefixEnd(base), limit: 1 }))
    return Date.parse(decodeJson<StoredChange>(v).timestamp);
  return undefined;
}

/** The last revision committed at or before `ms`, from the time index (keys `u48(ms) u48(rev)`). */
export async function revisionAt(
  kv: Kv,
  storeId: string,
  ms: number,
): Promise<{ revision: number; ms: number } | undefined> {
  const times = key.times(storeId);
  const upper = Math.min(Math.max(0, Math.floor(ms)) + 1, 2 ** 48 - 1);
  for await (const k of kv.keys({ gte: times, lt: times + u48(upper), reverse: true, limit: 1 }))
    return { revision: readUint(k, times.length + 6, 6), ms: readUint(k, times.length, 6) };
  return undefined;
}
