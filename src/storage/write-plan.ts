// Tuple writes: the existence rules of http-api.md §4.11 checked against the stored tuples, and
// the one batch that applies a write (tuples, by-user index, changelog, type and time indexes,
// revision). The caller holds the store's mutex from planWrite until the batch has committed.

import { AppError } from '../errors.js';
import type { RelationshipCondition, TupleKey } from '../domain/types.js';
import { typeOf } from '../domain/tuple.js';
import { decodeRevision, decodeTupleValue, encodeJson, encodeRevision, encodeTupleValue, key, prefixEnd, readUint, u32, u48, type StoredChange } from './codec.js';
import type { Kv, KvOp } from './kv.js';
import type { TupleWrite, WriteResult } from './types.js';

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
  missing: (t: TupleKey): AppError => new AppError('write_failed_due_to_invalid_input', `cannot delete a tuple which does not exist: ${who(t)}: ${EXISTS}`),
  duplicate: (t: TupleKey): AppError => new AppError('write_failed_due_to_invalid_input', `cannot write a tuple which already exists: ${who(t)}: ${EXISTS}`),
  conflict: (t: TupleKey): AppError =>
    new AppError('transaction_conflict', `transactional write failed due to conflict: attempted to write a tuple which already exists with a different condition: ${who(t)}`),
};

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).filter((k) => o[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`).join(',')}}`;
}

/** Same condition name and context (key order ignored; a missing context equals `{}`). */
export function sameCondition(a: RelationshipCondition | undefined, b: RelationshipCondition | undefined): boolean {
  if (!a || !b) return !a && !b;
  return a.name === b.name && canonical(a.context ?? {}) === canonical(b.context ?? {});
}

/** The key as stored: no extra fields, condition only when present. */
export function clean(t: TupleKey, withCondition: boolean): TupleKey {
  const base = { user: t.user, relation: t.relation, object: t.object };
  if (!t.condition || !withCondition) return base;
  const { name, context } = t.condition;
  return { ...base, condition: context === undefined ? { name } : { name, context } };
}

/** Stored state of the request's tuples, updated as the request's own deletes and writes apply. */
class Existing {
  private readonly state = new Map<string, { condition: RelationshipCondition | undefined } | null>();

  static async load(kv: Kv, keys: readonly string[]): Promise<Existing> {
    const found = await kv.getMany(keys);
    const e = new Existing();
    keys.forEach((k, i) => {
      const v = found[i];
      e.state.set(k, v ? { condition: decodeTupleValue(v).condition } : null);
    });
    return e;
  }

  get(k: string): { condition: RelationshipCondition | undefined } | null {
    return this.state.get(k) ?? null;
  }

  set(k: string, v: { condition: RelationshipCondition | undefined } | null): void {
    this.state.set(k, v);
  }
}

/** Checks the existence rules and builds the batch; throws (changing nothing) on any failure. */
export async function planWrite(kv: Kv, storeId: string, state: StoreState, w: TupleWrite): Promise<PlannedWrite> {
  const dels = w.deletes.map((t) => clean(t, false));
  const adds = w.writes.map((t) => clean(t, true));
  const existing = await Existing.load(kv, [...dels, ...adds].map((t) => key.tuple(storeId, t)));
  const ms = Math.max(Date.now(), state.lastMs);
  const timestamp = new Date(ms).toISOString();
  const ops: KvOp[] = [];
  const changes: StoredChange[] = [];
  for (const t of dels) {
    const k = key.tuple(storeId, t);
    if (!existing.get(k)) {
      if (w.onMissing === 'ignore') continue;
      throw writeErrors.missing(t);
    }
    existing.set(k, null);
    ops.push({ type: 'del', key: k }, { type: 'del', key: key.userIndex(storeId, t) });
    changes.push({ op: 'delete', tuple: t, timestamp });
  }
  for (const t of adds) {
    const k = key.tuple(storeId, t);
    const stored = existing.get(k);
    if (stored && w.onDuplicate === 'error') throw writeErrors.duplicate(t);
    if (stored && sameCondition(stored.condition, t.condition)) continue;
    if (stored) throw writeErrors.conflict(t);
    existing.set(k, { condition: t.condition });
    const value = encodeTupleValue(timestamp, t.condition);
    ops.push({ type: 'put', key: k, value }, { type: 'put', key: key.userIndex(storeId, t), value });
    changes.push({ op: 'write', tuple: t, timestamp });
  }
  const deleted = changes.filter((c) => c.op === 'delete').map((c) => c.tuple);
  const written = changes.filter((c) => c.op === 'write').map((c) => c.tuple);
  if (changes.length === 0) return { ops, ms, result: { revision: state.revision, timestamp, deleted, written } };
  const rev = state.revision + 1;
  ops.push(...logOps(storeId, rev, ms, changes));
  return { ops, ms, result: { revision: rev, timestamp, deleted, written } };
}

/** Changelog entries (deletes first, request order), their type index, time index and revision. */
function logOps(storeId: string, rev: number, ms: number, changes: readonly StoredChange[]): KvOp[] {
  const empty = new Uint8Array(0);
  const ops: KvOp[] = [];
  changes.forEach((c, seq) => {
    const position = u48(rev) + u32(seq);
    ops.push({ type: 'put', key: key.changes(storeId) + position, value: encodeJson(c) });
    ops.push({ type: 'put', key: key.changesOfType(storeId, typeOf(c.tuple.object)) + position, value: empty });
  });
  ops.push({ type: 'put', key: key.time(storeId, ms, rev), value: empty });
  ops.push({ type: 'put', key: key.revision(storeId), value: encodeRevision(rev) });
  return ops;
}
