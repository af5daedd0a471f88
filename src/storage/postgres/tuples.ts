// Tuple writes and reads on PostgreSQL.
//
// A write is one transaction: lock the store's row (FOR NO KEY UPDATE: writers of one store queue
// here, on every node), read the stored state of the request's keys, apply the existence rules
// of http-api.md §4.11 (the same code and messages as the key-value backends), then delete, insert,
// append the changelog, record the revision and its time, bump the store's revision and NOTIFY,
// and commit. The revision is allocated under the row lock, so revisions of a store are committed
// one after the other, in order, with no gap (docs/architecture.md, "Revisions on PostgreSQL").

import { fail } from '../../errors.js';
import type { RelationshipCondition, Tuple, TupleKey } from '../../domain/types.js';
import { typeOf } from '../../domain/tuple.js';
import { decodeCursor, encodeCursor } from '../cursor.js';
import { part } from '../codec.js';
import { scanFor } from '../tuples.js';
import { clean, sameCondition, writeErrors } from '../write-plan.js';
import type { Page, PageRequest, TupleFilter, TupleWrite, WriteResult } from '../types.js';
import { dec, enc, literal, num, q, type Client, type Db, type Row } from './db.js';
import { CHANNEL } from './events.js';

type Stored = { condition: RelationshipCondition | undefined; expires_at: string | undefined } | null;
const expiresMs = (t: TupleKey): number | null => (t.expires_at === undefined ? null : Date.parse(t.expires_at));
const expiryText = (v: unknown): string | undefined =>
  v === null || v === undefined ? undefined : new Date(num(v)).toISOString();

const keyOf = (t: Pick<TupleKey, 'object' | 'relation' | 'user'>): string =>
  `${enc(t.object)}\u0000${enc(t.relation)}\u0000${enc(t.user)}`;
const conditionText = (c: RelationshipCondition | undefined): string | null => (c ? JSON.stringify(c) : null);
const parseCondition = (v: unknown): RelationshipCondition | undefined =>
  typeof v === 'string' ? (JSON.parse(v) as RelationshipCondition) : undefined;

async function existing(c: Client, storeId: string, keys: readonly TupleKey[]): Promise<Map<string, Stored>> {
  const out = new Map<string, Stored>();
  if (keys.length === 0) return out;
  const rows = await q(
    c,
    // One primary-key probe per key (LATERAL; LIMIT 1 keeps the planner from turning it into a
    // hash join over every tuple of the store).
    `SELECT t.object, t.relation, t."user", t.condition, t.expires_ms
       FROM unnest($2::text[], $3::text[], $4::text[]) AS k(o, r, u)
       CROSS JOIN LATERAL (SELECT object, relation, "user", condition, expires_ms FROM latch_tuples
                            WHERE store_id = $1 AND object = k.o AND relation = k.r AND "user" = k.u LIMIT 1) AS t`,
    [storeId, keys.map((t) => enc(t.object)), keys.map((t) => enc(t.relation)), keys.map((t) => enc(t.user))],
  );
  for (const [o, r, u, cond, exp] of rows)
    out.set(`${o as string}\u0000${r as string}\u0000${u as string}`, {
      condition: parseCondition(cond),
      expires_at: expiryText(exp),
    });
  return out;
}

interface Plan {
  readonly deleted: TupleKey[];
  readonly written: TupleKey[];
}

/** The existence rules, in request order (deletes first); throws the same errors as write-plan.ts. */
function plan(w: TupleWrite, found: Map<string, Stored>): Plan {
  const deleted: TupleKey[] = [];
  const written: TupleKey[] = [];
  const state = (k: string): Stored => found.get(k) ?? null;
  for (const t of w.deletes.map((x) => clean(x, false))) {
    const k = keyOf(t);
    const stored = state(k);
    // A delete carrying expires_at comes from the sweeper: it deletes the tuple only while it still
    // expires then (a tuple rewritten meanwhile is another grant).
    if (!stored || (t.expires_at !== undefined && stored.expires_at !== t.expires_at)) {
      if (w.onMissing === 'ignore') continue;
      throw writeErrors.missing(t);
    }
    found.set(k, null);
    deleted.push(t);
  }
  for (const t of w.writes.map((x) => clean(x, true))) {
    const k = keyOf(t);
    const stored = state(k);
    if (stored && w.onDuplicate === 'error') throw writeErrors.duplicate(t);
    if (stored && sameCondition(stored.condition, t.condition) && stored.expires_at === t.expires_at) continue;
    if (stored)
      throw writeErrors.conflict(t, sameCondition(stored.condition, t.condition) ? 'expires_at' : 'condition');
    found.set(k, { condition: t.condition, expires_at: t.expires_at });
    written.push(t);
  }
  return { deleted, written };
}

const columns = (
  ts: readonly TupleKey[],
): [string[], string[], string[], string[], (string | null)[], (number | null)[]] => [
  ts.map((t) => enc(t.object)),
  ts.map((t) => enc(typeOf(t.object))),
  ts.map((t) => enc(t.relation)),
  ts.map((t) => enc(t.user)),
  ts.map((t) => conditionText(t.condition)),
  ts.map(expiresMs),
];

/** One Write; `payload(revision)` is the NOTIFY payload sent in the same transaction. */
export function writeTuples(
  db: Db,
  storeId: string,
  w: TupleWrite,
  payload: (revision: number) => string,
): Promise<WriteResult> {
  // BEGIN and the lock in one round trip: a store's writes queue on this lock, so each round trip
  // spent holding it bounds the store's write rate.
  const locking = `SELECT revision, last_ms FROM latch_stores WHERE id = ${literal(storeId)} AND deleted_ms IS NULL FOR NO KEY UPDATE`;
  return db.txFrom(locking, async (c, locked) => {
    const lock = locked[0];
    if (!lock) throw fail.storeNotFound();
    const before = num(lock.revision);
    const ms = Math.max(Date.now(), num(lock.last_ms));
    const timestamp = new Date(ms).toISOString();
    const { deleted, written } = plan(w, await existing(c, storeId, [...w.deletes, ...w.writes]));
    if (deleted.length + written.length === 0) return { revision: before, timestamp, deleted, written };
    const revision = before + 1;
    if (deleted.length > 0) {
      const [o, , r, u] = columns(deleted);
      // By row id, found with the same primary-key probes as `existing` (the store's row lock
      // keeps them valid): a join would let the planner scan the store.
      await q(
        c,
        `DELETE FROM latch_tuples WHERE ctid = ANY (ARRAY (
           SELECT t.ctid FROM unnest($2::text[], $3::text[], $4::text[]) AS k(o, r, u)
            CROSS JOIN LATERAL (SELECT ctid FROM latch_tuples WHERE store_id = $1 AND object = k.o AND relation = k.r AND "user" = k.u LIMIT 1) AS t))`,
        [storeId, o, r, u],
      );
    }
    const all = [...deleted, ...written];
    const [co, ct, cr, cu, cc, ce] = columns(all);
    const [wo, wt, wr, wu, wc, we] = columns(written);
    await q(
      c,
      `WITH tuples AS (
         INSERT INTO latch_tuples (store_id, object, object_type, relation, "user", condition, written_ms, expires_ms)
         SELECT $1, o, ot, r, u, cnd, $3, e FROM unnest($10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $17::bigint[]) AS k(o, ot, r, u, cnd, e)),
       changes AS (
         INSERT INTO latch_changes (store_id, revision, seq, deleted, object, object_type, relation, "user", condition, ms, expires_ms)
         SELECT $1, $2, k.n - 1, k.n <= $15, k.o, k.ot, k.r, k.u, CASE WHEN k.n <= $15 THEN NULL ELSE k.cnd END, $3, k.e
           FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $16::bigint[]) WITH ORDINALITY AS k(o, ot, r, u, cnd, e, n)),
       times AS (INSERT INTO latch_revisions (store_id, revision, ms) VALUES ($1, $2, $3)),
       store AS (UPDATE latch_stores SET revision = $2, last_ms = $3 WHERE id = $1)
       SELECT pg_notify('${CHANNEL}', $9)`,
      [storeId, revision, ms, co, ct, cr, cu, cc, payload(revision), wo, wt, wr, wu, wc, deleted.length, ce, we],
    );
    return { revision, timestamp, deleted, written };
  });
}

// ---- reads ----

const LIVE = 'EXISTS (SELECT 1 FROM latch_stores s WHERE s.id = $1 AND s.deleted_ms IS NULL)';
const TUPLE_COLUMNS = `object, relation, "user", condition, written_ms, expires_ms`;

interface ReadPlan {
  readonly where: string[];
  readonly values: unknown[];
  readonly order: string;
  /** The keyset columns after the cursor, in order. */
  readonly keyset: string;
  /** The cursor position of a tuple, exactly as the key-value backends make it. */
  readonly position: (t: TupleKey) => string;
  /** The keyset values of a decoded position's tuple. */
  readonly after: (t: Pick<TupleKey, 'object' | 'relation' | 'user'>) => unknown[];
}

/** The SQL of one Read filter shape; the orders and cursors are those of ../tuples.ts scanFor. */
function readPlan(storeId: string, f: TupleFilter): ReadPlan {
  const rel = f.relation || undefined;
  const user = f.user || undefined;
  const values: unknown[] = [storeId];
  const where: string[] = ['store_id = $1', LIVE];
  const eq = (column: string, v: string): void => {
    values.push(enc(v));
    where.push(`${column} = $${values.length}`);
  };
  const byObject = {
    order: 'object, relation, "user"',
    keyset: '(object, relation, "user")',
    position: (t: TupleKey) => part(t.object) + part(t.relation) + part(t.user),
    after: (t: Pick<TupleKey, 'object' | 'relation' | 'user'>) => [enc(t.object), enc(t.relation), enc(t.user)],
  };
  if (f.object?.endsWith(':') && f.object.indexOf(':') === f.object.length - 1) {
    const type = f.object.slice(0, -1);
    eq('object_type', type);
    if (user) {
      eq('"user"', user);
      if (rel) eq('relation', rel);
      return {
        where,
        values,
        order: 'relation, object',
        keyset: '(relation, object)',
        position: (t) => part(type) + part(t.user) + part(t.relation) + part(t.object.slice(type.length + 1)),
        after: (t) => [enc(t.relation), enc(t.object)],
      };
    }
    if (rel) eq('relation', rel);
    return { where, values, ...byObject };
  }
  if (f.object) eq('object', f.object);
  if (rel) eq('relation', rel);
  if (user) eq('"user"', user);
  return { where, values, ...byObject };
}

function toTuple(row: Row): Tuple {
  const [o, r, u, cond, ms, exp] = row;
  return { key: toKey([o, r, u, cond, exp]), timestamp: new Date(num(ms)).toISOString() };
}

/** A page of tuples matching `filter`; cursors are those of the key-value backends. */
export async function readTuples(
  db: Db,
  storeId: string,
  filter: TupleFilter,
  page: PageRequest,
): Promise<Page<Tuple>> {
  const scan = scanFor(filter);
  const after = decodeCursor(
    page.after,
    scan.tag,
    (p) => p.startsWith(scan.prefix) && p.length > scan.prefix.length && scan.decode(p) !== undefined,
  );
  const p = readPlan(storeId, filter);
  const values = [...p.values];
  const where = [...p.where];
  if (after !== undefined) {
    const at = scan.decode(after);
    if (!at) throw fail.validation('unreachable: cursor validated');
    const keys = p.after(at);
    where.push(`${p.keyset} > (${keys.map((_, i) => `$${values.length + i + 1}`).join(', ')})`);
    values.push(...keys);
  }
  values.push(page.pageSize + 1);
  const rows = await db.rows(
    `SELECT ${TUPLE_COLUMNS} FROM latch_tuples WHERE ${where.join(' AND ')} ORDER BY ${p.order} LIMIT $${values.length}`,
    values,
  );
  const items = rows.slice(0, page.pageSize).map(toTuple);
  const last = items[items.length - 1];
  if (rows.length <= page.pageSize || !last) return { items };
  return { items, next: encodeCursor(scan.tag, p.position(last.key)) };
}

/** A stored tuple row (object, relation, user, condition[, expires_ms]) as a TupleKey. */
export function toKey(row: Row): TupleKey {
  const t: TupleKey = { object: dec(row[0] as string), relation: dec(row[1] as string), user: dec(row[2] as string) };
  const condition = parseCondition(row[3]);
  const expires_at = expiryText(row[4]);
  const key = condition ? { ...t, condition } : t;
  return expires_at === undefined ? key : { ...key, expires_at };
}

/** The tuples expired at `now` (ms), earliest first, at most `limit`, each with its expires_at. */
export async function expiredTuples(db: Db, storeId: string, now: number, limit: number): Promise<TupleKey[]> {
  const rows = await db.rows(
    `SELECT object, relation, "user", NULL, expires_ms FROM latch_tuples WHERE store_id = $1 AND ${LIVE} AND expires_ms IS NOT NULL AND expires_ms <= $2
      ORDER BY expires_ms, object, relation, "user" LIMIT $3`,
    [storeId, Math.floor(now), limit],
  );
  return rows.map(toKey);
}

/** The earliest expiry (ms) of the store's tuples, undefined when none expires. */
export async function firstExpiry(db: Db, storeId: string): Promise<number | undefined> {
  const v = await db.value(
    `SELECT min(expires_ms) FROM latch_tuples WHERE store_id = $1 AND ${LIVE} AND expires_ms IS NOT NULL`,
    [storeId],
  );
  return v === null || v === undefined ? undefined : num(v);
}
