// Tuple writes and reads on PostgreSQL.
//
// A write is one statement, the server-side function `latch_write` (write-function.ts): in its own
// transaction it locks the store's row (FOR NO KEY UPDATE: writers of one store queue here, on
// every node), applies the existence rules of docs/reference/http-api.md §4.11 (errors raised by name and index,
// worded here exactly as by the key-value backends), deletes, inserts, appends the changelog,
// records the revision and its time, bumps the store's revision, NOTIFYs and commits. The revision
// is allocated under the row lock, so revisions of a store are committed one after the other, in
// order, with no gap (docs/architecture.md, "Revisions on PostgreSQL"). A Write that applies every
// change or fails (distinct keys, existence rules 'error': the API's default) goes to
// `latch_write_all` (write-all-function.ts) instead: the same rows and rules, a third of the server's CPU.

import pg from 'pg';
import { AppError, fail } from '../../errors.js';
import type { RelationshipCondition, Tuple, TupleKey } from '../../domain/types.js';
import { typeOf } from '../../domain/tuple.js';
import { encodeCursor } from '../cursor.js';
import { part } from '../codec.js';
import { resumeAfter, scanFor } from '../tuples.js';
import { clean, writeErrors } from '../write-plan.js';
import type { DeletedMatching, Page, PageRequest, TupleFilter, TupleWrite, WriteResult } from '../types.js';
import { classify, dec, enc, num, type Client, type Db, type Row } from './db.js';

const expiresMs = (t: TupleKey): number | null => (t.expires_at === undefined ? null : Date.parse(t.expires_at));
const expiryText = (v: unknown): string | undefined =>
  v === null || v === undefined ? undefined : new Date(num(v)).toISOString();

const conditionText = (c: RelationshipCondition | undefined): string | null => (c ? JSON.stringify(c) : null);
const parseCondition = (v: unknown): RelationshipCondition | undefined =>
  typeof v === 'string' ? (JSON.parse(v) as RelationshipCondition) : undefined;

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

/** No key twice in `ts` (latch_write then applies the list by set statements). */
function distinctKeys(ts: readonly TupleKey[]): boolean {
  if (ts.length < 2) return true;
  const seen = new Set<string>();
  for (const t of ts) seen.add(`${t.object}\u0000${t.relation}\u0000${t.user}`);
  return seen.size === ts.length;
}

/** `latch_write` (write-function.ts) as a prepared statement: one round trip per Write. */
export const WRITE = {
  name: 'latch_write',
  text: `SELECT out_revision, out_ms, out_deleted, out_written FROM latch_write($1, $2, $3, $4, $5, $6,
           $7::text[], $8::text[], $9::text[], $10::text[], $11::bigint[],
           $12::text[], $13::text[], $14::text[], $15::text[], $16::text[], $17::bigint[])`,
  rowMode: 'array' as const,
};

/** `latch_write_all` (write-all-function.ts): every change applied, or an error raised. */
export const WRITE_ALL = {
  name: 'latch_write_all',
  text: `SELECT out_revision, out_ms FROM latch_write_all($1, $2, $3,
           $4::text[], $5::text[], $6::text[], $7::text[], $8::bigint[],
           $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::bigint[])`,
  rowMode: 'array' as const,
};

/** The error `latch_write` raised for a broken rule, as the key-value backends word it; undefined for any other. */
function ruleError(err: unknown, dels: readonly TupleKey[], adds: readonly TupleKey[]): AppError | undefined {
  if (!(err instanceof pg.DatabaseError) || err.code !== 'P0001') return undefined;
  return ruleErrorOf(err.message, err.detail, dels, adds);
}

/** ruleError from the MESSAGE and DETAIL of a raised 'latch:…' exception (SQLSTATE P0001). */
export function ruleErrorOf(
  message: string,
  detail: string | undefined,
  dels: readonly TupleKey[],
  adds: readonly TupleKey[],
): AppError | undefined {
  const [at, what] = (detail ?? '').split(':');
  const i = Number(at) - 1;
  switch (message) {
    case 'latch:store_not_found':
      return fail.storeNotFound();
    case 'latch:missing':
      return dels[i] && writeErrors.missing(dels[i]);
    case 'latch:duplicate':
      return adds[i] && writeErrors.duplicate(adds[i]);
    case 'latch:conflict':
      return adds[i] && writeErrors.conflict(adds[i], what === 'expires_at' ? 'expires_at' : 'condition');
    default:
      return undefined;
  }
}

/** The arguments of a Write's function call: the key columns of its deletes and writes, and which function applies. */
export function writeArguments(w: TupleWrite): {
  readonly dels: TupleKey[];
  readonly adds: TupleKey[];
  /** object, object type, relation, user, expires_ms of the deletes. */
  readonly deletes: unknown[];
  /** object, object type, relation, user, condition, expires_ms of the writes. */
  readonly writes: unknown[];
  /** No key twice within the deletes or within the writes: latch_write may apply them by set statements. */
  readonly distinct: boolean;
  /** Every change applies or the Write fails (distinct, existence rules 'error'): latch_write_all. */
  readonly whole: boolean;
} {
  const dels = w.deletes.map((x) => clean(x, false));
  const adds = w.writes.map((x) => clean(x, true));
  const [d_o, d_ot, d_r, d_u, , d_e] = columns(dels);
  const distinct = distinctKeys(dels) && distinctKeys(adds);
  const whole =
    distinct &&
    dels.length + adds.length > 0 &&
    (dels.length === 0 || w.onMissing === 'error') &&
    (adds.length === 0 || w.onDuplicate === 'error');
  return { dels, adds, deletes: [d_o, d_ot, d_r, d_u, d_e], writes: columns(adds), distinct, whole };
}

/**
 * One Write as one statement, `latch_write_all` or `latch_write` (its own transaction, one round
 * trip; or, given a Client, inside that client's open transaction: a guarded write): under the
 * store's row lock it applies the existence rules in request order, writes the tuples and the
 * changelog, allocates the revision and NOTIFYs with `node` as the payload's sender. The store's
 * row lock is held only while the function runs in the server, never across a round trip.
 */
export async function writeTuples(db: Db | Client, storeId: string, w: TupleWrite, node: string): Promise<WriteResult> {
  const { dels, adds, deletes, writes, distinct, whole } = writeArguments(w);
  let row: Row | undefined;
  try {
    const head = whole
      ? [storeId, Date.now(), node]
      : [storeId, Date.now(), w.onDuplicate === 'error', w.onMissing === 'error', node, distinct];
    const values = [...head, ...deletes, ...writes];
    const query = { ...(whole ? WRITE_ALL : WRITE), values };
    row = (await ('pool' in db ? db.pool : db).query<Row>(query)).rows[0];
  } catch (err) {
    const rule = ruleError(err, dels, adds);
    if (rule) throw rule;
    return classify(err);
  }
  if (!row) throw new Error('latch_write returned no row');
  const ms = num(row[1]);
  return {
    revision: num(row[0]),
    timestamp: new Date(ms).toISOString(),
    deleted: whole ? dels : (row[2] as number[]).map((i) => dels[i - 1] as TupleKey),
    written: whole ? adds : (row[3] as number[]).map((i) => adds[i - 1] as TupleKey),
  };
}

/**
 * A guarded write as one transaction: the store's row lock (FOR NO KEY UPDATE, the lock latch_write
 * takes, so every node's writes of the store wait behind it), the revision read under it, `guard`,
 * then latch_write on the same connection (the lock is the transaction's: taking it again is free).
 * The lock is held across the guard's round trips, so the store's writes wait that long (a guard
 * is a few Checks on a node's index); a guard that throws rolls back and nothing is written.
 */
function writeGuarded(
  db: Db,
  storeId: string,
  w: TupleWrite,
  node: string,
  guard: (revision: number) => Promise<void>,
): Promise<WriteResult> {
  return db.tx(async (c) => {
    const rows = await c.query<Row>({
      text: 'SELECT revision FROM latch_stores WHERE id = $1 AND deleted_ms IS NULL FOR NO KEY UPDATE',
      values: [storeId],
      rowMode: 'array',
    });
    const row = rows.rows[0];
    if (!row) throw fail.storeNotFound();
    await guard(num(row[0]));
    return writeTuples(c, storeId, w, node);
  });
}

/**
 * The guarded writes of one storage object: at most `slots` (one less than the pool's connections)
 * hold a connection and a store's row lock at once, so the change-log reads their guards wait on
 * (the index catching up) always find a free connection.
 */
export class GuardedWriter {
  private free: number;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly db: Db,
    private readonly node: string,
    slots: number,
  ) {
    this.free = Math.max(1, slots);
  }

  async write(storeId: string, w: TupleWrite, guard: (revision: number) => Promise<void>): Promise<WriteResult> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await writeGuarded(this.db, storeId, w, this.node, guard);
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }
}

/** `latch_delete_matching` (delete-matching-function.ts) as a prepared statement. */
const DELETE_MATCHING = {
  name: 'latch_delete_matching',
  text: `SELECT out_revision, out_ms, out_more, out_keys
           FROM latch_delete_matching($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
  rowMode: 'array' as const,
};

/**
 * Reads `out_keys` (delete-matching-function.ts): a tuple's fields (column encoding, db.ts enc)
 * separated by \x01\x03 and tuples by \x01\x04, where a field holds \x01 only as \x01\x01 or
 * \x01\x02. Appends the decoded keys to `out`; returns the last tuple's fields as stored.
 */
function readKeys(text: string, out: TupleKey[]): readonly [string, string, string] | undefined {
  if (text === '') return undefined;
  const fields = ['', '', ''];
  let field = 0;
  let start = 0;
  let at = 0;
  for (;;) {
    const x = text.indexOf('\u0001', at);
    const c = x === -1 ? 4 : text.charCodeAt(x + 1);
    if (c === 1 || c === 2) {
      at = x + 2; // an encoded U+0000 or U+0001 inside a field
      continue;
    }
    if ((c !== 3 && c !== 4) || (c === 3) === (field === 2))
      throw new Error('latch_delete_matching: malformed out_keys');
    fields[field] = text.slice(start, x === -1 ? text.length : x);
    if (c === 3) field++;
    else {
      out.push({
        user: dec(fields[2] as string),
        relation: dec(fields[1] as string),
        object: dec(fields[0] as string),
      });
      field = 0;
    }
    if (x === -1) return [fields[0] as string, fields[1] as string, fields[2] as string];
    start = at = x + 2;
  }
}

/**
 * Delete by filter as one statement: the first `limit` tuples `filter` selects (an object or an
 * object type, optionally a relation and a user), in Read order, deleted and logged as one
 * revision under the store's row lock; `more` when at least one more matched.
 */
/**
 * Where a delete by filter that left more matches stopped: its filter, the revision it committed
 * and its last deleted tuple (column encoding); the same filter's next request on an unchanged
 * store resumes after it (delete-matching-function.ts `p_after_*`).
 */
export interface DeleteResume {
  readonly filter: string;
  readonly revision: number;
  readonly after: readonly [string, string, string];
}

export async function deleteMatching(
  db: Db,
  storeId: string,
  filter: TupleFilter,
  limit: number,
  node: string,
  resume?: DeleteResume,
): Promise<DeletedMatching & { readonly resume?: DeleteResume | undefined }> {
  const o = filter.object;
  const type = o !== undefined && o.endsWith(':') && o.indexOf(':') === o.length - 1 ? o.slice(0, -1) : undefined;
  const object = type === undefined ? o : undefined;
  const opt = (v: string | undefined): string | null => (v ? enc(v) : null);
  const f = `${o ?? ''}\u0000${filter.relation ?? ''}\u0000${filter.user ?? ''}`;
  let row: Row | undefined;
  try {
    const r = resume?.filter === f ? resume : undefined;
    const values = [storeId, Date.now(), node, opt(type), opt(object), opt(filter.relation), opt(filter.user), limit];
    values.push(r?.revision ?? null, ...(r?.after ?? [null, null, null]));
    row = (await db.pool.query<Row>({ ...DELETE_MATCHING, values })).rows[0];
  } catch (err) {
    const rule = ruleError(err, [], []);
    if (rule) throw rule;
    return classify(err);
  }
  if (!row) throw new Error('latch_delete_matching returned no row');
  const deleted: TupleKey[] = [];
  const last = readKeys(row[3] as string, deleted);
  const result = { revision: num(row[0]), timestamp: new Date(num(row[1])).toISOString(), deleted, written: [] };
  const more = row[2] === true;
  const next: DeleteResume | undefined =
    more && last !== undefined ? { filter: f, revision: result.revision, after: last } : undefined;
  return { result, more, resume: next };
}

// ---- reads ----

/**
 * The tuples of live store $1: its number (latch_stores.key, the tuple table's store column) by a
 * sub-select the server runs once per statement (an InitPlan), NULL for a deleted or unknown store,
 * which matches no row.
 */
export const STORE_TUPLES = 'store_key = (SELECT s.key FROM latch_stores s WHERE s.id = $1 AND s.deleted_ms IS NULL)';

/** The tuples of store $1, live or tombstoned (reclamation, countStoreKeys). */
export const STORE_TUPLES_ANY = 'store_key = (SELECT s.key FROM latch_stores s WHERE s.id = $1)';
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
  const where: string[] = [STORE_TUPLES];
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
    // The type's objects are the range `T:` ≤ object < `T;` (a type holds no ':', ';' follows ':'
    // in byte order): in the primary key one range, in the by-user index one range per relation.
    values.push(enc(type) + ':', enc(type) + ';');
    where.push(`object >= $${values.length - 1} AND object < $${values.length}`);
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
  const after = resumeAfter(scan, page.after);
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
    `SELECT object, relation, "user", NULL, expires_ms FROM latch_tuples WHERE ${STORE_TUPLES} AND expires_ms IS NOT NULL AND expires_ms <= $2
      ORDER BY expires_ms, object, relation, "user" LIMIT $3`,
    [storeId, Math.floor(now), limit],
  );
  return rows.map(toKey);
}

/** The earliest expiry (ms) of the store's tuples, undefined when none expires. */
export async function firstExpiry(db: Db, storeId: string): Promise<number | undefined> {
  const v = await db.value(
    `SELECT min(expires_ms) FROM latch_tuples WHERE ${STORE_TUPLES} AND expires_ms IS NOT NULL`,
    [storeId],
  );
  return v === null || v === undefined ? undefined : num(v);
}
