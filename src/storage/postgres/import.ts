// One import chunk on PostgreSQL (Storage.importTuples): COPY into a staging table, then set
// statements, all in one transaction holding the store's row lock.
//
//   1. `latch_lock_store` (the lock every Write function takes first: writers of the store queue
//      behind the chunk on every node) gives the revision and the last write's time;
//   2. the chunk's rows go by `COPY … FROM STDIN` (copy-in.ts) into `latch_import`, a temporary
//      table of the connection emptied at each commit (no WAL, no parameter arrays to parse);
//   3. one statement probes the primary key for each staged row (a LATERAL probe per row, so the
//      plan never scans the tuples table whatever its statistics say): a stored tuple identical to
//      the staged one is skipped; one with a different condition or expiry is the conflict
//      `latch_write` raises with onDuplicate 'ignore' (the first in request order, rolled back);
//   4. one INSERT … SELECT of the new rows into latch_tuples;
//   5. the changelog as the compact rows delete by filter writes (`latch_changes.bulk`,
//      delete-matching-function.ts), here with `deleted` false: ONE row per object type, keyed at
//      its last change's seq, `bulk` = `[[o, r, u, p], …]` in seq order with `p` the written
//      tuple's `[condition, expires_ms]` (latch_prior) or 0 when it has neither. changes.ts expands
//      it into the write changes per-tuple rows would give. Seq order is the request order
//      grouped by object type (types in the order of their first tuple), as the key-value backends
//      log an import (write-plan.ts planImport);
//   6. the store's revision, then `latch_end_revision` (latch_revisions row and NOTIFY, the
//      changes inline for at most 32), as every Write function ends.
//
// Each statement is bounded by the chunk (MAX_IMPORT_CHUNK rows), well under the statement
// timeout; the row lock is held across the transaction's round trips (as a guarded write holds it).

import type { TupleKey } from '../../domain/types.js';
import { groupedByType, typeOf } from '../../domain/tuple.js';
import { clean, writeErrors } from '../write-plan.js';
import type { WriteResult } from '../types.js';
import { copyIn, copyText } from './copy-in.js';
import { enc, num, q, type Client, type Db } from './db.js';
import { ruleErrorOf } from './tuples.js';
import pg from 'pg';

const STAGE = `CREATE TEMPORARY TABLE IF NOT EXISTS latch_import
  (n integer NOT NULL, o text NOT NULL, ot text NOT NULL, r text NOT NULL, u text NOT NULL, c text, e bigint)
  ON COMMIT DELETE ROWS`;

/** The staged rows already stored, in request order, with whether condition and expiry equal. */
const PROBE = `SELECT i.n, latch_same_condition(t.condition, i.c), t.expires_ms IS NOT DISTINCT FROM i.e
  FROM latch_import i
  CROSS JOIN LATERAL (SELECT x.condition, x.expires_ms FROM latch_tuples x
                       WHERE x.store_id = $1 AND x.object = i.o AND x.relation = i.r AND x."user" = i.u LIMIT 1) AS t
 ORDER BY i.n`;

/** The rows to write: every staged row but the skipped ($2, 0-based positions). */
const NEW_ROWS = 'FROM latch_import i WHERE NOT (i.n = ANY ($2::integer[]))';

const INSERT = `INSERT INTO latch_tuples (store_id, object, object_type, relation, "user", condition, written_ms, expires_ms)
  SELECT $1, i.o, i.ot, i.r, i.u, i.c, $3, i.e ${NEW_ROWS}`;

const LOG = `WITH w AS (SELECT i.o, i.ot, i.r, i.u, i.c, i.e, row_number() OVER (ORDER BY i.n) - 1 AS s ${NEW_ROWS}),
  logged AS (
    INSERT INTO latch_changes (store_id, revision, seq, deleted, object, object_type, relation, "user", condition, ms, expires_ms, bulk)
    SELECT $1, $4, max(w.s), false, '', w.ot, '', '', NULL, $3, NULL,
           json_agg(json_build_array(w.o, w.r, w.u,
             CASE WHEN w.c IS NULL AND w.e IS NULL THEN '0'::json ELSE latch_prior(w.c, w.e)::json END) ORDER BY w.s)::text
      FROM w GROUP BY w.ot)
  SELECT jsonb_agg(jsonb_build_array(false, w.o, w.r, w.u, w.c, w.e) ORDER BY w.s) FILTER (WHERE $5) FROM w`;

/**
 * One import chunk (the header above): the tuples not yet stored are written in one revision,
 * identical stored ones skipped, a stored one with a different condition or expiry the conflict
 * error (nothing written). The caller validated the tuples and passes no key twice.
 */
export async function importChunk(
  db: Db,
  storeId: string,
  tuples: readonly TupleKey[],
  node: string,
): Promise<WriteResult> {
  // Request order grouped by object type is the seq order of the changelog (and of `n`).
  const adds = groupedByType(tuples).map((t) => clean(t, true));
  const rows = copyRows(adds);
  return db.tx(async (c) => {
    let before: number;
    let lastMs: number;
    try {
      const row = (await q(c, 'SELECT o_revision, o_last_ms FROM latch_lock_store($1)', [storeId]))[0];
      before = num(row?.[0]);
      lastMs = num(row?.[1]);
    } catch (err) {
      throw ruleOf(err, adds) ?? err;
    }
    const ms = Math.max(Date.now(), lastMs);
    await c.query(STAGE);
    await copyIn(c, 'COPY latch_import (n, o, ot, r, u, c, e) FROM STDIN', rows);
    const skipped = await probe(c, storeId, adds);
    const n = adds.length - skipped.length;
    const timestamp = new Date(ms).toISOString();
    if (n === 0) return { revision: before, timestamp, deleted: [], written: [] };
    const rev = before + 1;
    await c.query({ text: INSERT, values: [storeId, skipped, ms] });
    const changes = (await q(c, LOG, [storeId, skipped, ms, rev, n <= 32]))[0]?.[0] ?? null;
    await c.query({
      text: 'UPDATE latch_stores SET revision = $2, last_ms = $3 WHERE id = $1',
      values: [storeId, rev, ms],
    });
    await c.query({
      text: 'SELECT latch_end_revision($1, $2, $3, $4, $5::jsonb)',
      values: [storeId, node, rev, ms, changes === null ? null : JSON.stringify(changes)],
    });
    const stored = new Uint8Array(adds.length);
    for (const i of skipped) stored[i] = 1;
    const written = skipped.length === 0 ? adds : adds.filter((_, i) => stored[i] === 0);
    return { revision: rev, timestamp, deleted: [], written };
  });
}

/** The COPY text of the staged rows: n, object, object type, relation, user, condition, expiry. */
function copyRows(adds: readonly TupleKey[]): Buffer {
  let text = '';
  let type = '';
  let typeText = '';
  for (let i = 0; i < adds.length; i++) {
    const t = adds[i] as TupleKey;
    const o = t.object;
    if (i === 0 || !o.startsWith(type) || o.charCodeAt(type.length) !== 0x3a) {
      type = typeOf(o);
      typeText = copyText(enc(type));
    }
    const c = t.condition ? copyText(JSON.stringify(t.condition)) : '\\N';
    const e = t.expires_at === undefined ? '\\N' : String(Date.parse(t.expires_at));
    text += `${i}\t${copyText(enc(o))}\t${typeText}\t${copyText(enc(t.relation))}\t${copyText(enc(t.user))}\t${c}\t${e}\n`;
  }
  return Buffer.from(text, 'utf8');
}

/** The positions of the staged rows stored identically; throws the first conflict in request order. */
async function probe(c: Client, storeId: string, adds: readonly TupleKey[]): Promise<number[]> {
  const skipped: number[] = [];
  for (const row of await q(c, PROBE, [storeId])) {
    const i = num(row[0]);
    const t = adds[i] as TupleKey;
    if (row[1] !== true) throw writeErrors.conflict(t, 'condition');
    if (row[2] !== true) throw writeErrors.conflict(t, 'expires_at');
    skipped.push(i);
  }
  return skipped;
}

/** The store's lock raised 'latch:store_not_found' (or another rule): its error. */
function ruleOf(err: unknown, adds: readonly TupleKey[]): Error | undefined {
  if (!(err instanceof pg.DatabaseError) || err.code !== 'P0001') return undefined;
  return ruleErrorOf(err.message, err.detail, [], adds);
}
