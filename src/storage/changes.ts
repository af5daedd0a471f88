// The changelog read side: ReadChanges pages (type filter, start_time, cursors) and the
// changesSince replay stream used to bring an index checkpoint up to date.

import type { TupleChange } from '../domain/types.js';
import { AppError } from '../errors.js';
import {
  bulkChanges,
  bulkFirst,
  decodeJson,
  isBulkRecord,
  key,
  prefixEnd,
  readUint,
  u32,
  u48,
  type StoredChange,
} from './codec.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { FlatIterator, type Kv, type KvRange } from './kv.js';
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

/** The sequence number (within its revision) of a change position. */
const seqOf = (position: string): number => readUint(position, 6, 4);

/**
 * Changes oldest first. `next` is the position after the last returned change, also when the page
 * is not full; when nothing is returned the given cursor comes back unchanged (poll with it
 * later), and only a call without a cursor that matched nothing returns no `next`
 * (docs/reference/http-api.md §4.13). A cursor takes precedence over `startTime`.
 *
 * Positions come from the changelog's keys or, with a `type` filter, from the per-type index
 * (same positions, so one cursor format). A key is the position of one change, or of the last
 * change of a bulk record (codec.ts BULK_DELETE, BULK_WRITE) holding a seq range ending there: it is
 * expanded, skipping the changes at or before the cursor, so a page may end inside it and the
 * next one resumes there. Values are fetched by getMany in chunks sized to what the page still
 * needs, so a page of singles is one getMany and a bulk record is read only when reached.
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
  // Every key yields at least one change (a bulk record after the cursor holds one past it), so
  // pageSize keys are enough.
  const positions: string[] = [];
  for await (const k of kv.keys({ ...range, lt: prefixEnd(index) })) positions.push(k.slice(index.length));
  const items: TupleChange[] = [];
  const cursors: string[] = [];
  let at = 0;
  while (at < positions.length && items.length < q.pageSize) {
    // A chunk ends once it could fill the page: at `need` keys, or after a key whose seq says it
    // may be a bulk record of that many changes.
    const need = q.pageSize - items.length;
    let end = at;
    while (end < positions.length && end - at < need) if (seqOf(positions[end++] as string) >= need) break;
    const chunk = positions.slice(at, end);
    const values = await kv.getMany(chunk.map((p) => base + p));
    for (let i = 0; i < chunk.length && items.length < q.pageSize; i++) {
      const v = values[i];
      const p = chunk[i] as string;
      if (!v) throw new AppError('data_loss', 'a change indexed by type is missing from the changelog');
      const text = Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('utf8');
      if (!isBulkRecord(text)) {
        items.push(toChange(JSON.parse(text) as StoredChange));
        cursors.push(encodeCursor('c', p));
        continue;
      }
      const rev = p.slice(0, 6);
      const from = after !== undefined && after.slice(0, 6) === rev ? seqOf(after) + 1 : 0;
      const flat = JSON.parse(text) as unknown[];
      const start = Math.max(from, bulkFirst(flat));
      const changes = bulkChanges(flat, start, q.pageSize - items.length);
      changes.forEach((c, j) => {
        items.push(toChange(c));
        cursors.push(encodeCursor('c', rev + u32(start + j)));
      });
    }
    at = end;
  }
  return { items, cursors, next: cursors[cursors.length - 1] ?? q.after };
}

/** The changes one changelog entry holds (one, or a bulk record's), each with its revision. */
function revisionChanges(out: RevisionChange[], revision: number, text: string): void {
  if (isBulkRecord(text)) {
    for (const c of bulkChanges(JSON.parse(text) as unknown[], 0, Infinity)) {
      if (c.was === undefined) {
        out.push({ revision, operation: c.op, tuple: c.tuple });
        continue;
      }
      const { object, relation, user } = c.tuple;
      out.push({ revision, operation: 'delete', tuple: c.tuple, prior: { object, relation, user, ...c.was } });
    }
    return;
  }
  const c = JSON.parse(text) as StoredChange;
  if (c.was === undefined) out.push({ revision, operation: c.op, tuple: c.tuple });
  else {
    const { object, relation, user } = c.tuple;
    out.push({ revision, operation: c.op, tuple: c.tuple, prior: { object, relation, user, ...c.was } });
  }
}

/**
 * Changes with revision > `revision`, oldest first, read from one snapshot (taken by this call).
 * A restart replays the whole tail since the index checkpoint, so it streams native batches of
 * text values with no generator step per change (see FlatIterator), like the tuple scan; a bulk
 * record expands into its changes within its batch.
 */
export function changesSince(kv: Kv, storeId: string, revision: number): AsyncIterable<RevisionChange> {
  const base = key.changes(storeId);
  const batches = kv.textBatches({ gte: base + u48(revision + 1), lt: prefixEnd(base) });
  const at = base.length;
  async function* expanded(): AsyncGenerator<readonly RevisionChange[]> {
    for await (const batch of batches) {
      const out: RevisionChange[] = [];
      for (const [k, v] of batch) revisionChanges(out, readUint(k, at, 6), v);
      yield out;
    }
  }
  return {
    [Symbol.asyncIterator]: () => new FlatIterator(expanded(), (c: RevisionChange) => c),
  };
}

/** Commit time of `revision` (the timestamp of its first change); undefined when not committed. */
export async function revisionTime(kv: Kv, storeId: string, revision: number): Promise<number | undefined> {
  if (revision < 1) return undefined;
  const base = key.changes(storeId) + u48(revision);
  for await (const [, v] of kv.entries({ gte: base, lt: prefixEnd(base), limit: 1 })) {
    const text = Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('utf8');
    // A bulk record's second element is its timestamp.
    return Date.parse(
      isBulkRecord(text) ? ((JSON.parse(text) as unknown[])[1] as string) : decodeJson<StoredChange>(v).timestamp,
    );
  }
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
