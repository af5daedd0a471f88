// The key space and value codecs shared by both backends: pure functions, byte-stable. The
// by-user position (`<type><user><rel><id>`, decodeUserIndexKey) is no key of this layout: it
// orders and resumes the by-user Read shape, which PostgreSQL serves from its own index and the
// engine from the store's in-memory index (tuples.ts scanFor).
//
// Keys are "binary strings": one char per byte (latin1), so JS string order equals LevelDB's
// bytewise order and the memory backend can compare keys with `<`. Layout:
//
//   M <name>                         a datastore secret (text)        Storage.secret
//   M ~no-by-user-keys               marker: no by-user key is left   KvStorage.init
//   S <storeId>                      store record (JSON)              listing order = id order
//   T <storeId>                      tombstone of a deleted store     (reclaimed in background)
//   D <storeId> t                    the store's revision (decimal)   sorts right before its tuples
//   D <storeId> t <obj><rel><user>   tuple → timestamp [+ expiry] [+ condition]  Read, scanTuples
//   D <storeId> e <ms u48><obj><rel><user>  empty: a tuple expiring at ms  the expiry sweeper
//   D <storeId> u …                  by-user keys of older versions   dropped at open (see key.byUser)
//   D <storeId> c <rev u48><seq u32> one change (JSON)                ReadChanges, changesSince
//   D <storeId> y <type><rev><seq>   empty: the changes of one object type (ReadChanges `type`)
//   D <storeId> i <ms u48><rev u48>  time index → first rev at a ms    ReadChanges start_time
//   D <storeId> m <modelId>          model (JSON), newest = greatest id
//   D <storeId> a <modelId>          assertions of a model (JSON)
//   D <storeId> p <indexId>          permission index definition (JSON)
//   D <storeId> h                    the shadow model setting (JSON)
//   D <storeId> k                    checkpoint head (JSON)           see checkpoint.ts
//   D <storeId> k <gen u32><i u32>   chunk i of checkpoint generation gen
//   D <storeId> k <i u32>            chunk i of a format-1 checkpoint (head without generation)
//
// Store ids are fixed-width ULIDs, so `D <storeId>` is an exact prefix of one store's data.
// Variable strings (<obj> …) are UTF-8, with 0x00 escaped as 00 FF and terminated by 00 01:
// binary-safe and order-preserving ("a" < "a\0" < "ab").

import type { RelationshipCondition, TupleKey } from '../domain/types.js';

const META = 'M';

/**
 * The meta name marking a datastore with no by-user key left (key.byUser): stored once an open
 * finds none, so later opens skip the look. `~` keeps it apart from secret names.
 */
export const NO_BY_USER_KEYS = '~no-by-user-keys';
export const STORE = 'S';
export const TOMBSTONE = 'T';
const DATA = 'D';
const TERM = '\u0000\u0001';
// ASCII without NUL is its own UTF-8 encoding and needs no escaping: the fast path.
// eslint-disable-next-line no-control-regex
const ASCII_NO_NUL = /^[\u0001-\u007f]*$/;

/** UTF-8 bytes of `s` as a binary string (ASCII strings are their own encoding). */
function toBin(s: string): string {
  return plainAscii(s) ? s : Buffer.from(s, 'utf8').toString('latin1');
}

function fromBin(b: string): string {
  return plainAscii(b) ? b : Buffer.from(b, 'latin1').toString('utf8');
}

/** True when `s` is ASCII without NUL: its own UTF-8 encoding, with nothing to escape. */
function plainAscii(s: string): boolean {
  return ASCII_NO_NUL.test(s);
}

/**
 * One escaped, terminated component. The plain case (ASCII without NUL, every generated id) is
 * one test: a bulk import builds six components per tuple, and the general case's conversion,
 * `includes` and concatenation cost ≈ 3× that there.
 */
export function part(s: string): string {
  if (plainAscii(s)) return s + TERM;
  const b = toBin(s);
  return (b.includes('\u0000') ? b.replaceAll('\u0000', '\u0000\u00ff') : b) + TERM;
}

/** Splits escaped components back into strings; undefined when malformed. */
export function parts(b: string, from = 0): string[] | undefined {
  const out: string[] = [];
  let cur = '';
  let i = from;
  while (i < b.length) {
    const z = b.indexOf('\u0000', i);
    if (z === -1 || z + 1 >= b.length) return undefined;
    cur += b.slice(i, z);
    const next = b.charCodeAt(z + 1);
    if (next === 0xff) cur += '\u0000';
    else if (next === 0x01) {
      out.push(fromBin(cur));
      cur = '';
    } else return undefined;
    i = z + 2;
  }
  return cur === '' ? out : undefined;
}

export function u48(n: number): string {
  let s = '';
  for (let i = 5; i >= 0; i--) s += String.fromCharCode(Math.floor(n / 2 ** (8 * i)) % 256);
  return s;
}

export function u32(n: number): string {
  return u48(n).slice(2);
}

/** Big-endian unsigned integer of `len` bytes at `at`. */
export function readUint(b: string, at: number, len: number): number {
  let n = 0;
  for (let i = 0; i < len; i++) n = n * 256 + b.charCodeAt(at + i);
  return n;
}

/** The smallest key greater than every key starting with `prefix`. */
export function prefixEnd(prefix: string): string {
  let p = prefix;
  while (p.length > 0 && p.charCodeAt(p.length - 1) === 0xff) p = p.slice(0, -1);
  if (p.length === 0) return '\u00ff'.repeat(prefix.length + 1);
  return p.slice(0, -1) + String.fromCharCode(p.charCodeAt(p.length - 1) + 1);
}

/**
 * key.tuple's parts for `join`, reused: a 9-element array literal per key was ≈ 120 bytes
 * allocated per tuple of an import (50,000 keys a chunk); with it reused, same-run 3M import pairs
 * took 3.49 / 3.40 µs of the server's main thread per tuple against 3.71 / 3.51.
 */
const TUPLE_PARTS = [DATA, '', 't', '', TERM, '', TERM, '', TERM];

/**
 * Key builders for one store. The tuple keys' plain case (every component ASCII without NUL) is
 * one `join`: a flat string at once, where `+` builds a rope of cons strings that the sort of a
 * bulk import's keys and LevelDB's UTF-8 conversion each flatten later (measured, 500k tuples,
 * both keys built and sorted per 50,000: ≈ 2.0 → 1.2 µs per tuple of CPU).
 */
export const key = {
  meta: (name: string): string => META + name,
  store: (id: string): string => STORE + id,
  tombstone: (id: string): string => TOMBSTONE + id,
  data: (id: string): string => DATA + id,
  revision: (id: string): string => DATA + id + 't',
  tuples: (id: string): string => DATA + id + 't',
  tuple: (id: string, t: Pick<TupleKey, 'object' | 'relation' | 'user'>): string => {
    const { object, relation, user } = t;
    if (!(plainAscii(object) && plainAscii(relation) && plainAscii(user)))
      return DATA + id + 't' + part(object) + part(relation) + part(user);
    // One reused array, its slots emptied after the join so it holds no key's strings.
    const p = TUPLE_PARTS;
    p[1] = id;
    p[3] = object;
    p[5] = relation;
    p[7] = user;
    const k = p.join('');
    p[1] = p[3] = p[5] = p[7] = '';
    return k;
  },
  /**
   * Where older versions kept a by-user index (`D <id> u <type><user><relation><id>`); none is
   * written now (Storage.readsByUser), and KvStorage drops what an older version left.
   */
  byUser: (id: string): string => DATA + id + 'u',
  expiries: (id: string): string => DATA + id + 'e',
  expiry: (id: string, ms: number, t: Pick<TupleKey, 'object' | 'relation' | 'user'>): string =>
    DATA + id + 'e' + u48(ms) + part(t.object) + part(t.relation) + part(t.user),
  changes: (id: string): string => DATA + id + 'c',
  changesOfType: (id: string, type: string): string => DATA + id + 'y' + part(type),
  times: (id: string): string => DATA + id + 'i',
  time: (id: string, ms: number, rev: number): string => DATA + id + 'i' + u48(ms) + u48(rev),
  models: (id: string): string => DATA + id + 'm',
  model: (id: string, modelId: string): string => DATA + id + 'm' + modelId,
  assertions: (id: string, modelId: string): string => DATA + id + 'a' + modelId,
  shadow: (id: string): string => DATA + id + 'h',
  permissionIndexes: (id: string): string => DATA + id + 'p',
  permissionIndex: (id: string, indexId: string): string => DATA + id + 'p' + indexId,
  checkpoint: (id: string): string => DATA + id + 'k',
  chunk: (id: string, generation: number, i: number): string => key.generation(id, generation) + u32(i),
  /** Chunks of one generation (`chunk(id, generation, i)` for every i) lie in [generation(g), generation(g + 1)). */
  generation: (id: string, generation: number): string => key.checkpoint(id) + u32(generation),
  legacyChunk: (id: string, i: number): string => key.checkpoint(id) + u32(i),
};

/** Tuple from a primary key suffix (after `D <id> t`). */
export function decodeTupleKey(suffix: string): Pick<TupleKey, 'object' | 'relation' | 'user'> | undefined {
  const p = parts(suffix);
  if (!p || p.length !== 3) return undefined;
  return { object: p[0] as string, relation: p[1] as string, user: p[2] as string };
}

/**
 * The by-user position of a tuple: `<type><user><relation><id>`, each part escaped and
 * terminated. Positions order the by-user Read shape and resume it (tuples.ts scanFor).
 */
export function userPosition(t: Pick<TupleKey, 'object' | 'relation' | 'user'>): string {
  const colon = t.object.indexOf(':');
  return part(t.object.slice(0, colon)) + part(t.user) + part(t.relation) + part(t.object.slice(colon + 1));
}

/** The tuple at a by-user position (userPosition's inverse); undefined when malformed. */
export function decodeUserIndexKey(suffix: string): Pick<TupleKey, 'object' | 'relation' | 'user'> | undefined {
  const p = parts(suffix);
  if (!p || p.length !== 4) return undefined;
  return { object: `${p[0] as string}:${p[3] as string}`, relation: p[2] as string, user: p[1] as string };
}

// ---- values ----

/** Length of `Date#toISOString()` for years 0–9999: a tuple value without condition is just this. */
export const ISO_LENGTH = 24;

/** Marks an expiry after the timestamp (a condition's JSON starts with `{`). */
const EXPIRY_MARK = '@';

interface TupleValue {
  readonly timestamp: string;
  readonly condition?: RelationshipCondition | undefined;
  /** RFC 3339 normal form (`Date#toISOString`, 24 bytes). */
  readonly expires_at?: string | undefined;
}

/**
 * Tuple value: the 24-byte ISO timestamp, then `@` and the 24-byte expiry when the tuple expires,
 * then the condition as JSON when there is one. Values written before expiries existed read back
 * unchanged.
 */
export function encodeTupleValue(
  timestamp: string,
  condition: RelationshipCondition | undefined,
  expiresAt?: string,
): Uint8Array {
  const exp = expiresAt === undefined ? '' : EXPIRY_MARK + expiresAt;
  return Buffer.from(timestamp + exp + (condition ? JSON.stringify(condition) : ''), 'utf8');
}

/** The value's fields from its text (see encodeTupleValue). */
export function decodeTupleText(s: string): TupleValue {
  const timestamp = s.slice(0, ISO_LENGTH);
  if (s.length === ISO_LENGTH) return { timestamp };
  let at = ISO_LENGTH;
  let expires_at: string | undefined;
  if (s[at] === EXPIRY_MARK) {
    expires_at = s.slice(at + 1, at + 1 + ISO_LENGTH);
    at += 1 + ISO_LENGTH;
  }
  const condition = s.length > at ? (JSON.parse(s.slice(at)) as RelationshipCondition) : undefined;
  return { timestamp, ...(condition ? { condition } : {}), ...(expires_at === undefined ? {} : { expires_at }) };
}

export function decodeTupleValue(v: Uint8Array): TupleValue {
  return decodeTupleText(Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('utf8'));
}

/** The stored tuple key with the value's condition and expiry. */
export function withValue(t: Pick<TupleKey, 'object' | 'relation' | 'user'>, v: TupleValue): TupleKey {
  if (!v.condition && v.expires_at === undefined) return t;
  return {
    ...t,
    ...(v.condition ? { condition: v.condition } : {}),
    ...(v.expires_at === undefined ? {} : { expires_at: v.expires_at }),
  };
}

export function encodeJson(value: unknown): Uint8Array {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

export function decodeJson<T>(v: Uint8Array): T {
  return JSON.parse(Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('utf8')) as T;
}

/** The revision value: decimal ASCII, so it reads back in a text scan (see scanTuples). */
export function encodeRevision(n: number): Uint8Array {
  return Buffer.from(String(n), 'latin1');
}

export function decodeRevision(v: Uint8Array | string): number {
  const n = Number(typeof v === 'string' ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('latin1'));
  if (!Number.isSafeInteger(n) || n < 0) throw new Error('corrupt revision value');
  return n;
}

/**
 * A bulk changelog record: changes of one revision stored as ONE value at the position of its last
 * change, instead of one entry each. Two kinds, told apart by the first element:
 *
 * - delete by filter: `["bulk-delete", timestamp, o1, r1, u1, w1, o2, …]`, the revision's seq 0 …
 *   n-1, where `w` is the tuple as stored (`was`, see StoredChange) or 0 for a plain tuple;
 * - an import chunk: `["bulk-write", timestamp, first, o1, r1, u1, x1, o2, …]`, seq first …
 *   first+n-1, where `x` is `{condition?, expires_at?}` of the written tuple or 0 for a plain one.
 *   A chunk is one record per object type (one revision may hold several, each a seq range).
 *
 * A single change's value is a JSON object, so the first character tells them apart. changes.ts
 * reads a record back as its n changes at their own positions, so ReadChanges, Watch, cursors and
 * past views see no difference. All tuples of one record share one object type (one per-type index
 * entry, at the record's position).
 */
export const BULK_DELETE = 'bulk-delete';
export const BULK_WRITE = 'bulk-write';

/** The fields per change in a bulk record after its head. */
const BULK_STRIDE = 4;

/** True when a changelog value (as text) is a bulk record rather than one change. */
export function isBulkRecord(text: string): boolean {
  return text.charCodeAt(0) === 0x5b; // '['
}

/** Elements before the first change: 2 for a delete record, 3 (with the first seq) for a write record. */
function bulkHead(flat: readonly unknown[]): number {
  return flat[0] === BULK_WRITE ? 3 : 2;
}

/** The seq of a bulk record's first change. */
export function bulkFirst(flat: readonly unknown[]): number {
  return flat[0] === BULK_WRITE ? (flat[2] as number) : 0;
}

/**
 * The changes of a bulk record in seq order, from seq max(`from`, its first) on, at most `max` of
 * them, each as StoredChange (field order as write-plan.ts gives a single change: byte-identical
 * output).
 */
export function bulkChanges(flat: readonly unknown[], from: number, max: number): StoredChange[] {
  const timestamp = flat[1] as string;
  const head = bulkHead(flat);
  const first = bulkFirst(flat);
  const n = (flat.length - head) / BULK_STRIDE;
  const writes = flat[0] === BULK_WRITE;
  const out: StoredChange[] = [];
  for (let i = Math.max(0, from - first); i < n && out.length < max; i++) {
    const at = head + i * BULK_STRIDE;
    const user = flat[at + 2] as string;
    const relation = flat[at + 1] as string;
    const object = flat[at] as string;
    const x = flat[at + 3];
    if (writes) {
      const tuple = x === 0 ? { user, relation, object } : { user, relation, object, ...(x as object) };
      out.push({ op: 'write', tuple, timestamp });
    } else
      out.push({
        op: 'delete',
        tuple: { user, relation, object },
        timestamp,
        was: x === 0 ? {} : (x as StoredChange['was']),
      });
  }
  return out;
}

/** One changelog entry as stored. */
export interface StoredChange {
  readonly op: 'write' | 'delete';
  readonly tuple: TupleKey;
  readonly timestamp: string;
  /**
   * A delete's tuple as it was stored (its condition and expiry; `{}` for a plain tuple), so a
   * past view can restore it without searching the log for its write. Absent on deletes logged
   * before it was recorded, and on writes.
   */
  readonly was?: { readonly condition?: RelationshipCondition; readonly expires_at?: string };
}
