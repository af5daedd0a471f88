// Tuple writes: the existence rules of docs/reference/http-api.md §4.11 checked against the stored tuples, and
// the one batch that applies a write (tuples, expiry entries, changelog, type and time indexes,
// revision). The caller holds the store's mutex from planWrite until the batch has committed.

import { nextTurn } from '../domain/turn.js';
import { AppError } from '../errors.js';
import type { RelationshipCondition, TupleKey } from '../domain/types.js';
import { hasType, typeOf } from '../domain/tuple.js';
import {
  decodeRevision,
  decodeTupleKey,
  decodeTupleValue,
  encodeJson,
  encodeRevision,
  encodeTupleValue,
  key,
  prefixEnd,
  readUint,
  u32,
  u48,
  type StoredChange,
  BULK_WRITE,
} from './codec.js';
import { sortBinaryKeys } from './key-sort.js';
import type { Kv, KvOp, KvWriter } from './kv.js';
import type { HeldHint, TupleWrite, WriteResult } from './types.js';

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
  for await (const k of kv.keys({ gte: times, lt: prefixEnd(times), reverse: true, limit: 1 }))
    lastMs = readUint(k, times.length, 6);
  return { revision: rev ? decodeRevision(rev) : 0, lastMs };
}

export interface PlannedWrite {
  /** Empty when every operation was an ignored duplicate or missing delete. */
  readonly ops: KvOp[];
  readonly result: WriteResult;
  readonly ms: number;
}

const EXISTS = 'tuple to be written already existed or the tuple to be deleted did not exist';
const who = (t: TupleKey): string => `user: '${t.user}', relation: '${t.relation}', object: '${t.object}'`;

/** The errors of the existence rules, shared by every backend so their messages are identical. */
export const writeErrors = {
  missing: (t: TupleKey): AppError =>
    new AppError(
      'write_failed_due_to_invalid_input',
      `cannot delete a tuple which does not exist: ${who(t)}: ${EXISTS}`,
    ),
  duplicate: (t: TupleKey): AppError =>
    new AppError(
      'write_failed_due_to_invalid_input',
      `cannot write a tuple which already exists: ${who(t)}: ${EXISTS}`,
    ),
  /** `what` differs: the condition (OpenFGA's message) or, for latch's expiring tuples, `expires_at`. */
  conflict: (t: TupleKey, what: 'condition' | 'expires_at' = 'condition'): AppError =>
    new AppError(
      'transaction_conflict',
      `transactional write failed due to conflict: attempted to write a tuple which already exists with a different ${what}: ${who(t)}`,
    ),
};

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
}

/** Same condition name and context (key order ignored; a missing context equals `{}`). */
function sameCondition(a: RelationshipCondition | undefined, b: RelationshipCondition | undefined): boolean {
  if (!a || !b) return !a && !b;
  return a.name === b.name && canonical(a.context ?? {}) === canonical(b.context ?? {});
}

/**
 * The key as stored: no extra fields, condition only when present (never on deletes), expiry when
 * present (a delete carries one only when the expiry sweeper made it: its changelog entry says so).
 */
export function clean(t: TupleKey, withCondition: boolean): TupleKey {
  const base = { user: t.user, relation: t.relation, object: t.object };
  if (t.expires_at === undefined && (!t.condition || !withCondition)) return base;
  const exp = t.expires_at === undefined ? {} : { expires_at: t.expires_at };
  if (!t.condition || !withCondition) return { ...base, ...exp };
  const { name, context } = t.condition;
  return { ...base, condition: context === undefined ? { name } : { name, context }, ...exp };
}

interface Stored {
  readonly condition: RelationshipCondition | undefined;
  readonly expires_at: string | undefined;
}

/** Stored state of the request's tuples, updated as the request's own deletes and writes apply. */
class Existing {
  private readonly state = new Map<string, Stored | null>();

  static async load(kv: Kv, keys: readonly string[]): Promise<Existing> {
    const found = await kv.getMany(keys);
    const e = new Existing();
    keys.forEach((k, i) => {
      const v = found[i];
      const d = v ? decodeTupleValue(v) : undefined;
      e.state.set(k, d ? { condition: d.condition, expires_at: d.expires_at } : null);
    });
    return e;
  }

  get(k: string): Stored | null {
    return this.state.get(k) ?? null;
  }

  set(k: string, v: Stored | null): void {
    this.state.set(k, v);
  }
}

/** The index entry of an expiring tuple (`D <id> e <ms><obj><rel><user>`), read by the sweeper. */
function expiryKey(storeId: string, t: TupleKey, expiresAt: string): string {
  return key.expiry(storeId, Date.parse(expiresAt), t);
}

/** The ops removing one stored tuple (its key `k` and expiry entry) and its changelog entry. */
function deleteOps(
  storeId: string,
  k: string,
  t: TupleKey,
  stored: Stored,
  timestamp: string,
  ops: KvOp[],
  changes: StoredChange[],
): void {
  ops.push({ type: 'del', key: k });
  if (stored.expires_at !== undefined) ops.push({ type: 'del', key: expiryKey(storeId, t, stored.expires_at) });
  const was = {
    ...(stored.condition ? { condition: stored.condition } : {}),
    ...(stored.expires_at === undefined ? {} : { expires_at: stored.expires_at }),
  };
  changes.push({ op: 'delete', tuple: t, timestamp, was });
}

/** Checks the existence rules and builds the batch; throws (changing nothing) on any failure. */
export async function planWrite(kv: Kv, storeId: string, state: StoreState, w: TupleWrite): Promise<PlannedWrite> {
  const dels = w.deletes.map((t) => clean(t, false));
  const adds = w.writes.map((t) => clean(t, true));
  const existing = await Existing.load(
    kv,
    [...dels, ...adds].map((t) => key.tuple(storeId, t)),
  );
  const ms = Math.max(Date.now(), state.lastMs);
  const timestamp = new Date(ms).toISOString();
  const ops: KvOp[] = [];
  const changes: StoredChange[] = [];
  for (const t of dels) {
    const k = key.tuple(storeId, t);
    const stored = existing.get(k);
    // A delete carrying expires_at comes from the sweeper: it takes the tuple only while it still expires then.
    if (!stored || (t.expires_at !== undefined && stored.expires_at !== t.expires_at)) {
      if (w.onMissing === 'ignore') continue;
      throw writeErrors.missing(t);
    }
    existing.set(k, null);
    deleteOps(storeId, k, t, stored, timestamp, ops, changes);
  }
  for (const t of adds) {
    const k = key.tuple(storeId, t);
    const stored = existing.get(k);
    if (stored && w.onDuplicate === 'error') throw writeErrors.duplicate(t);
    if (stored && sameCondition(stored.condition, t.condition) && stored.expires_at === t.expires_at) continue;
    if (stored)
      throw writeErrors.conflict(t, sameCondition(stored.condition, t.condition) ? 'expires_at' : 'condition');
    existing.set(k, { condition: t.condition, expires_at: t.expires_at });
    const value = encodeTupleValue(timestamp, t.condition, t.expires_at);
    ops.push({ type: 'put', key: k, value });
    if (t.expires_at !== undefined)
      ops.push({ type: 'put', key: expiryKey(storeId, t, t.expires_at), value: new Uint8Array(0) });
    changes.push({ op: 'write', tuple: t, timestamp });
  }
  const deleted = changes.filter((c) => c.op === 'delete').map((c) => c.tuple);
  const written = changes.filter((c) => c.op === 'write').map((c) => c.tuple);
  if (changes.length === 0) return { ops, ms, result: { revision: state.revision, timestamp, deleted, written } };
  const rev = state.revision + 1;
  logOps(ops, storeId, rev, ms, changes);
  return { ops, ms, result: { revision: rev, timestamp, deleted, written } };
}

/**
 * Tuples planned between two turns of the event loop: a 50,000-tuple chunk is ≈ 100 ms of work
 * on the calling thread, and Checks waiting behind it would see that latency.
 */
const PLAN_SLICE = 4096;

/**
 * One import chunk (Storage.importTuples): the tuple keys and values `planWrite` builds for these
 * writes with onDuplicate 'ignore' (an identical stored tuple skipped, a different one a
 * conflict), built for 50,000 tuples at a time. Each key is built once (looked up, then written),
 * tuples without condition or expiry share one value, and the changelog is one bulk record per
 * object type (codec.ts BULK_WRITE) with one per-type index entry: one key per tuple (the key-value
 * backends keep no by-user keys, Storage.readsByUser). The revision's changes are grouped by
 * object type (types in the order of their first tuple, request order within a type);
 * ReadChanges, Watch and past views list each one. The caller passes no key twice.
 *
 * The plain tuples' keys go into the batch sorted: LevelDB inserts a batch into its memtable (a
 * skip list) one key at a time, and a key next to the previous one finds its path there in cache,
 * where a key anywhere in a 128 MB memtable misses it at most levels. Measured on LevelDB alone,
 * 1M tuples in 50,000-tuple batches: its threads' CPU 5.5 → 3.9 µs per tuple. A batch is applied
 * whole, so the order of its distinct keys changes nothing else (a wrong order would cost only
 * that speed). The sort is key-sort.ts's radix sort, one step (≈ 5-10 ms at 50,000 keys, about a
 * slice's work): in the 3M import, when by-user keys were sorted too, the two sorts cost
 * 0.31-0.36 µs per tuple of the calling thread's CPU where slices of PLAN_SLICE keys sorted on
 * their own, then `flat().sort()` of the runs, cost 0.53-0.57. The work is done in slices of
 * PLAN_SLICE tuples with a turn of the event loop between them; the caller holds the store's
 * mutex throughout.
 *
 * With `writer` (the backend's native batch, Kv.writer) those sorted plain keys are put straight
 * into it, in the same order, and `ops` holds the rest of the batch (to add after them): no op
 * object per key lives through the chunk. Measured on LevelDB alone, 1M tuples in 50,000-tuple
 * chunks, two interleaved pairs: the calling thread 2.07 / 2.13 → 1.95 / 1.97 µs per tuple (load
 * 5-6). The caller discards the writer when planning throws or nothing is written.
 */
export async function planImport(
  kv: Kv,
  storeId: string,
  state: StoreState,
  tuples: readonly TupleKey[],
  held?: HeldHint,
  writer?: KvWriter,
): Promise<PlannedWrite> {
  const n = tuples.length;
  const keys = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    if (i > 0 && i % PLAN_SLICE === 0) await nextTurn();
    keys[i] = key.tuple(storeId, tuples[i] as TupleKey);
  }
  const found = await storedValues(kv, keys, tuples, held);
  const ms = Math.max(Date.now(), state.lastMs);
  const timestamp = new Date(ms).toISOString();
  const plain = encodeTupleValue(timestamp, undefined);
  const rev = state.revision + 1;
  const ops: KvOp[] = [];
  const written: TupleKey[] = [];
  // The new tuples' positions in `tuples`, grouped by object type (one run per type).
  const groups = new Map<string, number[]>();
  let lastType = '';
  let last: number[] | undefined;
  for (let i = 0; i < n; i++) {
    const t = tuples[i] as TupleKey;
    const stored = found[i];
    if (stored) {
      const d = decodeTupleValue(stored);
      const same = sameCondition(d.condition, t.condition);
      if (same && d.expires_at === t.expires_at) continue;
      throw writeErrors.conflict(t, same ? 'expires_at' : 'condition');
    }
    const o = t.object;
    if (last === undefined || !hasType(o, lastType)) {
      lastType = typeOf(o);
      last = groups.get(lastType);
      if (last === undefined) groups.set(lastType, (last = []));
    }
    last.push(i);
  }
  const revision = u48(rev);
  const empty = new Uint8Array(0);
  // The keys of the new plain tuples (one shared value), sorted into the batch at the end.
  const plainKeys: string[] = [];
  let seq = 0;
  let done = 0;
  for (const [type, members] of groups) {
    const flat: unknown[] = [BULK_WRITE, timestamp, seq];
    for (const i of members) {
      if (++done % PLAN_SLICE === 0) await nextTurn();
      const t = tuples[i] as TupleKey;
      let extra: unknown = 0;
      let logged = t;
      if (t.condition !== undefined || t.expires_at !== undefined) {
        logged = clean(t, true);
        const value = encodeTupleValue(timestamp, logged.condition, logged.expires_at);
        extra = {
          ...(logged.condition ? { condition: logged.condition } : {}),
          ...(logged.expires_at === undefined ? {} : { expires_at: logged.expires_at }),
        };
        if (logged.expires_at !== undefined)
          ops.push({ type: 'put', key: expiryKey(storeId, logged, logged.expires_at), value: empty });
        ops.push({ type: 'put', key: keys[i] as string, value });
      } else plainKeys.push(keys[i] as string);
      flat.push(t.object, t.relation, t.user, extra);
      written.push(logged);
    }
    seq += members.length;
    bulkOps(ops, storeId, revision + u32(seq - 1), type, flat);
  }
  if (written.length === 0) return { ops, ms, result: { revision: state.revision, timestamp, deleted: [], written } };
  // Binary strings: code unit order is byte order, LevelDB's order. The sort is one step.
  await nextTurn();
  sortBinaryKeys(plainKeys, key.tuples(storeId).length);
  if (writer) await putAll(writer, plainKeys, plain);
  else for (const k of plainKeys) ops.push({ type: 'put', key: k, value: plain });
  endRevisionOps(ops, storeId, rev, ms);
  return { ops, ms, result: { revision: rev, timestamp, deleted: [], written } };
}

/** Puts `keys` with one value into `writer`, in order, a turn of the event loop every PLAN_SLICE keys. */
async function putAll(writer: KvWriter, keys: readonly string[], value: Uint8Array): Promise<void> {
  for (let i = 0; i < keys.length; i++) {
    if (i > 0 && i % PLAN_SLICE === 0) await nextTurn();
    writer.put(keys[i] as string, value);
  }
}

/**
 * The stored values at `keys` (those of `tuples`), undefined where none. With a hint (the store
 * at its revision, see HeldHint) only the tuples it may hold are read: on an empty store, or
 * tuples among nodes the store has never seen, none. Each read is a point lookup through the
 * levels of the LSM, whose cost grows with the data: in the import bench at 1M tuples (same run,
 * load 10-11) the process's threads other than the main one went 5.46 → 4.40 µs per tuple
 * without them, and a profile put the reads' key conversion on the calling thread at ≈ 0.85 µs.
 */
async function storedValues(
  kv: Kv,
  keys: readonly string[],
  tuples: readonly TupleKey[],
  held: HeldHint | undefined,
): Promise<readonly (Uint8Array | undefined)[]> {
  if (held === undefined) return kv.getMany(keys);
  const at: number[] = [];
  for (let i = 0; i < tuples.length; i++) if (held.mayHold(tuples[i] as TupleKey)) at.push(i);
  const found = new Array<Uint8Array | undefined>(keys.length);
  if (at.length === 0) return found;
  const values = await kv.getMany(at.map((i) => keys[i] as string));
  for (let j = 0; j < at.length; j++) found[at[j] as number] = values[j];
  return found;
}

/** A bulk changelog record (codec.ts `flat`) at `position`, and its entry in the index by object type. */
export function bulkOps(ops: KvOp[], storeId: string, position: string, type: string, flat: readonly unknown[]): void {
  ops.push(
    { type: 'put', key: key.changes(storeId) + position, value: encodeJson(flat) },
    { type: 'put', key: key.changesOfType(storeId, type) + position, value: new Uint8Array(0) },
  );
}

/** The end of every revision's batch: its entry in the time index, and the store's revision. */
export function endRevisionOps(ops: KvOp[], storeId: string, rev: number, ms: number): void {
  ops.push(
    { type: 'put', key: key.time(storeId, ms, rev), value: new Uint8Array(0) },
    { type: 'put', key: key.revision(storeId), value: encodeRevision(rev) },
  );
}

/** Changelog entries (deletes first, request order), their type index, time index and revision. */
export function logOps(ops: KvOp[], storeId: string, rev: number, ms: number, changes: readonly StoredChange[]): void {
  const empty = new Uint8Array(0);
  const revision = u48(rev);
  const log = key.changes(storeId);
  changes.forEach((c, seq) => {
    const position = revision + u32(seq);
    ops.push({ type: 'put', key: log + position, value: encodeJson(c) });
    ops.push({ type: 'put', key: key.changesOfType(storeId, typeOf(c.tuple.object)) + position, value: empty });
  });
  endRevisionOps(ops, storeId, rev, ms);
}

/**
 * The tuples whose expiry is at or before `now` (ms), earliest first, at most `limit`, each with
 * its stored `expires_at`: the deletes of one sweep (`planWrite` with onMissing 'ignore').
 */
export async function expiredTuples(kv: Kv, storeId: string, now: number, limit: number): Promise<TupleKey[]> {
  const from = key.expiries(storeId);
  const out: TupleKey[] = [];
  for await (const k of kv.keys({ gte: from, lt: from + u48(Math.floor(now) + 1), limit })) {
    const t = decodeTupleKey(k.slice(from.length + 6));
    if (t) out.push({ ...t, expires_at: new Date(readUint(k, from.length, 6)).toISOString() });
  }
  return out;
}

/** The earliest expiry (ms) among the store's tuples, undefined when none expires. */
export async function firstExpiry(kv: Kv, storeId: string): Promise<number | undefined> {
  const from = key.expiries(storeId);
  for await (const k of kv.keys({ gte: from, lt: prefixEnd(from), limit: 1 })) return readUint(k, from.length, 6);
  return undefined;
}
