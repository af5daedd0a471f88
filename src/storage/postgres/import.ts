// One import chunk on PostgreSQL (Storage.importTuples): one transaction holding the store's row
// lock, the tuples by `COPY … FROM STDIN` (copy-in.ts) straight into latch_tuples when none is
// stored yet, else through a staging table.
//
//   0. before any lock (prepareChunk, in slices with turns of the event loop between them): the
//      COPY rows (keyed by the store's number, latch_stores.key) and the changelog rows of the
//      chunk, timed when prepared. A client keeps two
//      chunks in flight, so latch encodes chunk N + 1 while the database writes chunk N, and the
//      transaction holds the store's lock only for the database's work;
//   1. `latch_lock_store` (the lock every Write function takes first: writers of the store queue
//      behind the chunk on every node) gives the revision, the last write's time and the store's
//      number;
//   2. fast path, under a savepoint: ONE `COPY latch_tuples … FROM STDIN` of every row. Under the
//      lock no other writer changes the store's tuples, so the COPY fails on the primary key
//      (23505) exactly when some tuple of the chunk is already stored: a chunk sent again by a
//      client resuming, or overlapping data. Per tuple the database then does only what any
//      write must: parse the row, insert it into the heap and the two indexes (primary key,
//      latch_tuples_by_user), log that in the WAL;
//   3. on 23505, back to the savepoint and the staged path (straight to it when the caller says
//      the store's last chunk had stored tuples, so overlapping data wastes no COPY per chunk):
//      the rows by COPY into `latch_import`, a temporary table of the connection emptied at each commit; one statement
//      probes the primary key for each staged row (a LATERAL probe per row, so the plan never
//      scans the tuples table whatever its statistics say): a stored tuple identical to the
//      staged one is skipped; one with a different condition or expiry is the conflict
//      `latch_write` raises with onDuplicate 'ignore' (the first in request order, rolled back);
//      one INSERT … SELECT writes the others;
//   4. the changelog (made in step 0; again, without the skipped, after the staged path) as the
//      compact rows delete by filter writes (`latch_changes.bulk`,
//      delete-matching-function.ts), here with `deleted` false: ONE row per object type, keyed at
//      its last change's seq, `bulk` = `[[o, r, u, p], …]` in seq order with `p` the written
//      tuple's `[condition, expires_ms]` (latch_prior) or 0 when it has neither. changes.ts expands
//      it into the write changes per-tuple rows would give. Seq order is the request order
//      grouped by object type (types in the order of their first tuple), as the key-value backends
//      log an import (write-plan.ts planImport). The rows are made here (`changelog`), so the
//      database only stores them;
//   5. in the same statement, the store's revision, then `latch_end_revision` (latch_revisions row
//      and NOTIFY, the changes inline for at most 32), as every Write function ends.
//
// Each statement is bounded by the chunk (MAX_IMPORT_CHUNK rows), well under the statement
// timeout; the row lock is held across the transaction's round trips (as a guarded write holds it).
// The commit waits for the WAL flush (synchronous_commit as the server sets it): once the chunk is
// acknowledged it is durable, so a resuming client never skips a chunk that was lost; that is one
// flush per chunk, nothing per tuple.

import { nextTurn } from '../../domain/turn.js';
import type { TupleKey } from '../../domain/types.js';
import { groupedByType, hasType, typeOf } from '../../domain/tuple.js';
import { clean, writeErrors } from '../write-plan.js';
import type { WriteResult } from '../types.js';
import { copyIn, copyText } from './copy-in.js';
import { enc, num, q, type Client, type Db } from './db.js';
import { ruleErrorOf } from './tuples.js';
import pg from 'pg';

/** The fast path's one statement: every row of the chunk into the tuples table. */
const COPY_TUPLES = `COPY latch_tuples (store_key, object, relation, "user", condition, written_ms, expires_ms) FROM STDIN`;

/** SQLSTATE unique_violation: a tuple of the chunk is stored already. */
const UNIQUE_VIOLATION = '23505';

const STAGE = `CREATE TEMPORARY TABLE IF NOT EXISTS latch_import
  (n integer NOT NULL, o text NOT NULL, r text NOT NULL, u text NOT NULL, c text, e bigint)
  ON COMMIT DELETE ROWS`;

/** The staged rows already stored, in request order, with whether condition and expiry equal. */
const PROBE = `SELECT i.n, latch_same_condition(t.condition, i.c), t.expires_ms IS NOT DISTINCT FROM i.e
  FROM latch_import i
  CROSS JOIN LATERAL (SELECT x.condition, x.expires_ms FROM latch_tuples x
                       WHERE x.store_key = $1 AND x.object = i.o AND x.relation = i.r AND x."user" = i.u LIMIT 1) AS t
 ORDER BY i.n`;

/** The staged rows not stored: every one but the skipped ($2, 0-based positions); $1 the store's number. */
const INSERT = `INSERT INTO latch_tuples (store_key, object, relation, "user", condition, written_ms, expires_ms)
  SELECT $1, i.o, i.r, i.u, i.c, $3, i.e FROM latch_import i WHERE NOT (i.n = ANY ($2::integer[]))`;

/**
 * The end of the chunk's revision in one statement: its compact changelog rows ($5 seqs, $6
 * object types, one per type, and $7 their bulk texts joined by BULK_SEPARATOR), the store's
 * revision, latch_end_revision.
 */
const END = `WITH logged AS (
    INSERT INTO latch_changes (store_id, revision, seq, deleted, object, object_type, relation, "user", condition, ms, expires_ms, bulk)
    SELECT $1, $2, x.seq, false, '', x.ot, '', '', NULL, $3, NULL, x.bulk
      FROM unnest($5::integer[], $6::text[], string_to_array($7, chr(1))) AS x(seq, ot, bulk)),
  bumped AS (UPDATE latch_stores SET revision = $2, last_ms = $3 WHERE id = $1)
  SELECT latch_end_revision($1, $4, $2, $3, $8::jsonb)`;

/**
 * Between two bulk texts in one parameter: U+0001, which JSON text never holds raw (JSON.stringify
 * escapes every control character). One text, not a text[] parameter: node-postgres would
 * escape every quote of the JSON into the array literal and the server parse it back.
 */
const BULK_SEPARATOR = '\u0001';

/** Changes inlined in the commit NOTIFY up to this many (latch_end_revision's contract). */
const INLINE_CHANGES = 32;

/** Rows encoded between two turns of the event loop while a chunk is prepared (Checks run in between). */
const PREPARE_SLICE = 4096;

/**
 * A chunk made ready for the database before the store's lock is taken (prepareChunk), so that
 * latch encodes one chunk while the database writes the one before it: its tuples in changelog
 * order, its COPY rows and its changelog for the case where none is stored, both with the
 * chunk's time `ms` (the time it was prepared).
 */
export interface PreparedChunk {
  readonly storeId: string;
  /** The store's number (latch_stores.key) the rows were encoded with. */
  readonly key: number;
  readonly adds: readonly TupleKey[];
  readonly ms: number;
  readonly rows: readonly Buffer[];
  readonly log: Changelog;
}

/**
 * Encodes a chunk (the caller validated it; no key twice) for importChunk: the tuples grouped by
 * type (the changelog's seq order), their latch_tuples COPY rows keyed by `key` (the store's
 * number, latch_stores.key; importChunk encodes them again should the store's row say otherwise)
 * and the changelog rows, each in slices of PREPARE_SLICE tuples with a turn of the event loop
 * between them; timed now.
 */
export async function prepareChunk(storeId: string, key: number, tuples: readonly TupleKey[]): Promise<PreparedChunk> {
  // Request order grouped by object type is the seq order of the changelog.
  const adds = groupedByType(tuples).map((t) => clean(t, true));
  const ms = Date.now();
  const rows = await tupleRows(key, adds, ms);
  return { storeId, key, adds, ms, rows, log: await changelog(adds, undefined) };
}

/**
 * One import chunk (the header above): the tuples not yet stored are written in one revision,
 * identical stored ones skipped, a stored one with a different condition or expiry the conflict
 * error (nothing written). `staged` takes the staged path at once (the same result, for a chunk
 * that likely holds stored tuples). The revision's time is the chunk's, unless the store's last
 * write is later (another node's clock, a chunk prepared earlier but committed later): then the
 * rows are encoded again with that time, so a store's times never go back.
 */
export async function importChunk(db: Db, chunk: PreparedChunk, node: string, staged = false): Promise<WriteResult> {
  const { storeId, adds } = chunk;
  return db.tx(async (c) => {
    let before: number;
    let lastMs: number;
    let key: number;
    try {
      const row = (await q(c, 'SELECT o_revision, o_last_ms, o_key FROM latch_lock_store($1)', [storeId]))[0];
      before = num(row?.[0]);
      lastMs = num(row?.[1]);
      key = num(row?.[2]);
    } catch (err) {
      throw ruleOf(err, adds) ?? err;
    }
    const ms = Math.max(chunk.ms, lastMs);
    const timestamp = new Date(ms).toISOString();
    const rows = ms === chunk.ms && key === chunk.key ? chunk.rows : await tupleRows(key, adds, ms);
    const stored = await writeTuples(c, key, adds, rows, ms, staged);
    const n = stored === undefined ? adds.length : adds.length - stored.count;
    if (n === 0) return { revision: before, timestamp, deleted: [], written: [] };
    const rev = before + 1;
    const log = stored === undefined ? chunk.log : await changelog(adds, stored.at);
    await c.query({
      text: END,
      values: [
        storeId,
        rev,
        ms,
        node,
        log.seqs,
        log.types,
        log.bulks,
        n <= INLINE_CHANGES ? inline(adds, stored?.at) : null,
      ],
    });
    const written = stored === undefined ? adds : adds.filter((_, i) => stored.at[i] === 0);
    return { revision: rev, timestamp, deleted: [], written };
  });
}

/** The positions of `adds` stored already (`at[i]` 1), and how many: none when undefined. */
interface Stored {
  readonly at: Uint8Array;
  readonly count: number;
}

/**
 * Writes the tuples of `adds` not stored yet (steps 2 and 3 of the header, step 2 left out when
 * `staged`); which were stored (identically: a conflict throws), undefined when none was.
 */
async function writeTuples(
  c: Client,
  key: number,
  adds: readonly TupleKey[],
  rows: readonly Buffer[],
  ms: number,
  staged: boolean,
): Promise<Stored | undefined> {
  if (!staged) {
    await c.query('SAVEPOINT latch_import_copy');
    try {
      await copyIn(c, COPY_TUPLES, rows);
      await c.query('RELEASE SAVEPOINT latch_import_copy');
      return undefined;
    } catch (err) {
      if (!(err instanceof pg.DatabaseError) || err.code !== UNIQUE_VIOLATION) throw err;
    }
    await c.query('ROLLBACK TO SAVEPOINT latch_import_copy');
  }
  await c.query(STAGE);
  await copyIn(c, 'COPY latch_import (n, o, r, u, c, e) FROM STDIN', [stagedRows(adds)]);
  const at = new Uint8Array(adds.length);
  const skipped: number[] = [];
  for (const row of await q(c, PROBE, [key])) {
    const i = num(row[0]);
    const t = adds[i] as TupleKey;
    if (row[1] !== true) throw writeErrors.conflict(t, 'condition');
    if (row[2] !== true) throw writeErrors.conflict(t, 'expires_at');
    at[i] = 1;
    skipped.push(i);
  }
  if (skipped.length < adds.length) await c.query({ text: INSERT, values: [key, skipped, ms] });
  return { at, count: skipped.length };
}

/** A tuple's object, relation and user as COPY text columns. */
const keyColumns = (t: TupleKey): string =>
  `${copyText(enc(t.object))}\t${copyText(enc(t.relation))}\t${copyText(enc(t.user))}`;

/** A tuple's condition column (its JSON, or NULL) as COPY text. */
const conditionColumn = (t: TupleKey): string => (t.condition ? copyText(JSON.stringify(t.condition)) : '\\N');

/** A tuple's expiry column (epoch ms, or NULL) as COPY text. */
const expiryColumn = (t: TupleKey): string => (t.expires_at === undefined ? '\\N' : String(Date.parse(t.expires_at)));

/**
 * The COPY text of latch_tuples rows: store's number, object, relation, user, condition,
 * written_ms, expiry; one buffer per PREPARE_SLICE rows, a turn of the event loop between two.
 */
async function tupleRows(key: number, adds: readonly TupleKey[], ms: number): Promise<Buffer[]> {
  const store = String(key);
  const written = String(ms);
  const out: Buffer[] = [];
  for (let from = 0; from < adds.length; from += PREPARE_SLICE) {
    if (from > 0) await nextTurn();
    let text = '';
    const to = Math.min(adds.length, from + PREPARE_SLICE);
    for (let i = from; i < to; i++) {
      const t = adds[i] as TupleKey;
      text += `${store}\t${keyColumns(t)}\t${conditionColumn(t)}\t${written}\t${expiryColumn(t)}\n`;
    }
    out.push(Buffer.from(text, 'utf8'));
  }
  return out;
}

/** The COPY text of the staged rows: n, object, relation, user, condition, expiry. */
function stagedRows(adds: readonly TupleKey[]): Buffer {
  let text = '';
  for (let i = 0; i < adds.length; i++) {
    const t = adds[i] as TupleKey;
    text += `${i}\t${keyColumns(t)}\t${conditionColumn(t)}\t${expiryColumn(t)}\n`;
  }
  return Buffer.from(text, 'utf8');
}

/** A chunk's compact changelog rows: per object type its last seq, its stored type, its bulk text. */
interface Changelog {
  readonly seqs: number[];
  readonly types: string[];
  /** The types' bulk texts joined by BULK_SEPARATOR. */
  readonly bulks: string;
}

/**
 * The compact changelog rows (step 4 of the header) of the written tuples of `adds` (all but
 * those `stored` marks), grouped by type as `adds` is: per type its last seq and its stored
 * type; the types' `bulk` texts, `[[o, r, u, p], …]` each (changes.ts reads it with JSON.parse),
 * joined by BULK_SEPARATOR.
 */
async function changelog(adds: readonly TupleKey[], stored: Uint8Array | undefined): Promise<Changelog> {
  const seqs: number[] = [];
  const types: string[] = [];
  let bulks = '';
  let type = '';
  let bulk = '';
  let seq = -1;
  for (let i = 0; i < adds.length; i++) {
    if (i > 0 && i % PREPARE_SLICE === 0) await nextTurn();
    if (stored !== undefined && stored[i] === 1) continue;
    const t = adds[i] as TupleKey;
    seq++;
    if (bulk === '' || !hasType(t.object, type)) {
      if (bulk !== '') {
        seqs.push(seq - 1);
        types.push(enc(type));
        bulks += bulk + ']' + BULK_SEPARATOR;
      }
      type = typeOf(t.object);
      bulk = '[';
    } else bulk += ',';
    const p =
      t.condition === undefined && t.expires_at === undefined
        ? '0'
        : `[${t.condition ? JSON.stringify(t.condition) : 'null'},${t.expires_at === undefined ? 'null' : Date.parse(t.expires_at)}]`;
    bulk += `[${JSON.stringify(enc(t.object))},${JSON.stringify(enc(t.relation))},${JSON.stringify(enc(t.user))},${p}]`;
  }
  if (bulk !== '') {
    seqs.push(seq);
    types.push(enc(type));
    bulks += bulk + ']';
  }
  return { seqs, types, bulks };
}

/**
 * The written tuples as latch_end_revision inlines them in the NOTIFY: `[false, o, r, u,
 * condition text, expires_ms]` each, as JSON text.
 */
function inline(adds: readonly TupleKey[], stored: Uint8Array | undefined): string {
  const changes: unknown[] = [];
  for (let i = 0; i < adds.length; i++) {
    if (stored !== undefined && stored[i] === 1) continue;
    const t = adds[i] as TupleKey;
    changes.push([
      false,
      enc(t.object),
      enc(t.relation),
      enc(t.user),
      t.condition ? JSON.stringify(t.condition) : null,
      t.expires_at === undefined ? null : Date.parse(t.expires_at),
    ]);
  }
  return JSON.stringify(changes);
}

/** The store's lock raised 'latch:store_not_found' (or another rule): its error. */
function ruleOf(err: unknown, adds: readonly TupleKey[]): Error | undefined {
  if (!(err instanceof pg.DatabaseError) || err.code !== 'P0001') return undefined;
  return ruleErrorOf(err.message, err.detail, [], adds);
}
