// Tuple writes (existence rules, revision, changelog, indexes → one batch), Read by filter shape
// with cursors, and scanTuples. Callers hold the store's mutex around planWrite + commit.

import { AppError } from '../errors.js';
import type { RelationshipCondition, Tuple, TupleKey } from '../domain/types.js';
import { typeOf } from '../domain/tuple.js';
import {
  decodeTupleKey, decodeTupleValue, decodeRevision, decodeUserIndexKey, encodeJson, encodeTupleValue,
  encodeRevision, ISO_LENGTH, key, part, prefixEnd, readUint, u32, u48, type StoredChange,
} from './codec.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { FlatIterator, type Kv, type KvOp, type KvTextEntry } from './kv.js';
import type { Page, PageRequest, TupleFilter, TupleWrite, WriteResult } from './types.js';

/** Per-store write state, owned by the holder of the store's mutex. */
export interface StoreState {
  revision: number;
  /** Millisecond of the last write; timestamps never go backwards, so log order = time order. */
  lastMs: number;
}

export async function loadState(kv: Kv, storeId: string): Promise<StoreState> {
  const rev = await kv.get(key.revision(storeId));
  const times = key.times(storeId);
  let lastMs = 0;
  for await (const k of kv.keys({ gte: times, lt: prefixEnd(times), reverse: true, limit: 1 })) lastMs = readUint(k, times.length, 6);
  return { revision: rev ? decodeRevision(rev) : 0, lastMs };
}

const EXISTS = 'tuple to be written already existed or the tuple to be deleted did not exist';
const who = (t: TupleKey): string => `user: '${t.user}', relation: '${t.relation}', object: '${t.object}'`;

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o).sort().filter((k) => o[k] !== undefined).map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** Same condition name and context (a missing context equals `{}`). */
function sameCondition(a: RelationshipCondition | undefined, b: RelationshipCondition | undefined): boolean {
  if (!a || !b) return !a && !b;
  return a.name === b.name && canonical(a.context ?? {}) === canonical(b.context ?? {});
}

/** The key as stored: no extra fields, condition only when present. */
function clean(t: TupleKey): TupleKey {
  const base = { user: t.user, relation: t.relation, object: t.object };
  if (!t.condition) return base;
  const c = t.condition.context === undefined ? { name: t.condition.name } : { name: t.condition.name, context: t.condition.context };
  return { ...base, condition: c };
}

export interface PlannedWrite {
  readonly ops: KvOp[];
  readonly result: WriteResult;
  readonly ms: number;
}

/** Checks existence rules against the stored tuples and builds the batch; throws on any failure. */
export async function planWrite(kv: Kv, storeId: string, state: StoreState, w: TupleWrite): Promise<PlannedWrite> {
  const keys = [...w.deletes, ...w.writes].map((t) => key.tuple(storeId, t));
  const found = await kv.getMany(keys);
  const overlay = new Map<string, RelationshipCondition | undefined | null>(); // null = absent
  const current = (i: number): { exists: boolean; condition?: RelationshipCondition | undefined } => {
    const k = keys[i] as string;
    if (overlay.has(k)) { const c = overlay.get(k); return c === null ? { exists: false } : { exists: true, condition: c }; }
    const v = found[i];
    return v ? { exists: true, condition: decodeTupleValue(v).condition } : { exists: false };
  };
  const ms = Math.max(Date.now(), state.lastMs);
  const timestamp = new Date(ms).toISOString();
  const rev = state.revision + 1;
  const ops: KvOp[] = [];
  const changes: StoredChange[] = [];
  const deleted: TupleKey[] = [];
  const written: TupleKey[] = [];
  w.deletes.forEach((d, i) => {
    const t = clean({ user: d.user, relation: d.relation, object: d.object });
    if (!current(i).exists) {
      if (w.onMissing === 'error') throw new AppError('write_failed_due_to_invalid_input', `cannot delete a tuple which does not exist: ${who(t)}: ${EXISTS}`);
      return;
    }
    overlay.set(keys[i] as string, null);
    ops.push({ type: 'del', key: keys[i] as string }, { type: 'del', key: key.userIndex(storeId, t) });
    changes.push({ op: 'delete', tuple: t, timestamp });
    deleted.push(t);
  });
  w.writes.forEach((raw, j) => {
    const i = w.deletes.length + j;
    const t = clean(raw);
    const cur = current(i);
    if (cur.exists) {
      if (w.onDuplicate === 'error') throw new AppError('write_failed_due_to_invalid_input', `cannot write a tuple which already exists: ${who(t)}: ${EXISTS}`);
      if (sameCondition(cur.condition, t.condition)) return;
      throw new AppError('transaction_conflict', `transactional write failed due to conflict: attempted to write a tuple which already exists with a different condition: ${who(t)}`);
    }
    overlay.set(keys[i] as string, t.condition);
    const value = encodeTupleValue(timestamp, t.condition);
    ops.push({ type: 'put', key: keys[i] as string, value }, { type: 'put', key: key.userIndex(storeId, t), value });
    changes.push({ op: 'write', tuple: t, timestamp });
    written.push(t);
  });
  if (changes.length === 0) return { ops: [], ms, result: { revision: state.revision, timestamp, deleted, written } };
  const empty = new Uint8Array(0);
  changes.forEach((c, seq) => {
    const position = u48(rev) + u32(seq);
    ops.push({ type: 'put', key: key.changes(storeId) + position, value: encodeJson(c) });
    ops.push({ type: 'put', key: key.changesOfType(storeId, typeOf(c.tuple.object)) + position, value: empty });
  });
  ops.push({ type: 'put', key: key.time(storeId, ms, rev), value: empty });
  ops.push({ type: 'put', key: key.revision(storeId), value: encodeRevision(rev) });
  return { ops, ms, result: { revision: rev, timestamp, deleted, written } };
}

type TupleId = Pick<TupleKey, 'object' | 'relation' | 'user'>;

/** One way to serve a filter: a key range (tag + prefix under the store) and a residual test. */
interface Scan {
  readonly tag: 't' | 'u';
  readonly prefix: string;
  readonly decode: (suffix: string) => TupleId | undefined;
  readonly match: (t: TupleId) => boolean;
}

const escaped = (s: string): string => part(s).slice(0, -2);

/** Picks the scan for a Read filter shape (http-api.md §4.12). */
export function scanFor(f: TupleFilter): Scan {
  const rel = f.relation || undefined;
  const user = f.user || undefined;
  const byObject = (prefix: string, match: (t: TupleId) => boolean): Scan => ({ tag: 't', prefix, decode: decodeTupleKey, match });
  if (!f.object) return byObject('', (t) => (!rel || t.relation === rel) && (!user || t.user === user));
  const colon = f.object.indexOf(':');
  if (colon === f.object.length - 1) {
    const type = f.object.slice(0, -1);
    // `{object:"T:", user[, relation]}` → the by-user index; ordered by (relation, object id).
    if (user) return { tag: 'u', prefix: part(type) + part(user) + (rel ? part(rel) : ''), decode: decodeUserIndexKey, match: () => true };
    return byObject(escaped(f.object), (t) => !rel || t.relation === rel);
  }
  if (rel) return byObject(part(f.object) + part(rel) + (user ? part(user) : ''), () => true);
  return byObject(part(f.object), (t) => !user || t.user === user);
}

/** A page of tuples matching `filter`, resuming after `page.after`. */
export async function readTuples(kv: Kv, storeId: string, filter: TupleFilter, page: PageRequest): Promise<Page<Tuple>> {
  const scan = scanFor(filter);
  const after = decodeCursor(page.after, scan.tag, (p) => p.startsWith(scan.prefix) && p.length > scan.prefix.length && scan.decode(p) !== undefined);
  const base = scan.tag === 't' ? key.tuples(storeId) : key.byUser(storeId);
  const from = base + scan.prefix;
  // The revision key (`D <id> t` itself) falls in the unfiltered range; it does not decode.
  const range = after === undefined ? { gte: from } : { gt: base + after };
  const items: Tuple[] = [];
  let last = '';
  for await (const [k, v] of kv.entries({ ...range, lt: prefixEnd(from) })) {
    const t = scan.decode(k.slice(base.length));
    if (!t || !scan.match(t)) continue;
    if (items.length === page.pageSize) return { items, next: encodeCursor(scan.tag, last) };
    const { timestamp, condition } = decodeTupleValue(v);
    items.push({ key: condition ? { ...t, condition } : t, timestamp });
    last = k.slice(base.length);
  }
  return { items };
}

/**
 * The revision and every tuple, from one snapshot: the revision key sorts right before the
 * tuple keys, so one iterator reads both. Streams in native batches (see FlatIterator).
 */
export async function scanTuples(kv: Kv, storeId: string): Promise<{ revision: number; tuples: AsyncIterable<TupleKey> }> {
  const base = key.tuples(storeId);
  const batches = kv.textBatches({ gte: base, lt: prefixEnd(base) })[Symbol.asyncIterator]();
  const first = await batches.next();
  let revision = 0;
  let head: readonly KvTextEntry[] = first.done ? [] : first.value;
  if (head[0]?.[0] === base) {
    revision = decodeRevision(head[0][1]);
    head = head.slice(1);
  }
  const source: AsyncIterator<readonly KvTextEntry[]> = {
    next: async () => {
      if (head.length === 0) return first.done ? { done: true, value: undefined } : batches.next();
      const value = head;
      head = [];
      return { done: false, value };
    },
    return: async () => (await batches.return?.()) ?? { done: true, value: undefined },
  };
  const tuples = new FlatIterator(source, (e: KvTextEntry) => toKey(e, base.length));
  return { revision, tuples: { [Symbol.asyncIterator]: () => tuples } };
}

function toKey([k, v]: KvTextEntry, at: number): TupleKey {
  const t = decodeTupleKey(k.slice(at));
  if (!t) throw new AppError('data_loss', 'undecodable tuple key in store data');
  return v.length === ISO_LENGTH ? t : { ...t, condition: JSON.parse(v.slice(ISO_LENGTH)) as RelationshipCondition };
}
