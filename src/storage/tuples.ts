// Tuple reads: Read by filter shape with cursors, and scanTuples (one snapshot, streamed).

import { AppError } from '../errors.js';
import type { Tuple, TupleKey } from '../domain/types.js';
import {
  decodeRevision,
  decodeTupleKey,
  decodeTupleText,
  decodeTupleValue,
  decodeUserIndexKey,
  ISO_LENGTH,
  key,
  part,
  prefixEnd,
  withValue,
} from './codec.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { FlatIterator, type Kv, type KvTextEntry } from './kv.js';
import type { Page, PageRequest, TupleFilter } from './types.js';

type TupleId = Pick<TupleKey, 'object' | 'relation' | 'user'>;

/** One way to serve a filter: a key range (tag + prefix under the store) and a residual test. */
export interface Scan {
  /** The cursor tag: 't' object scans, 'u' by-user positions, 'v' kvScanFor's type scan for the by-user shape. */
  readonly tag: 't' | 'u' | 'v';
  readonly prefix: string;
  readonly decode: (suffix: string) => TupleId | undefined;
  readonly match: (t: TupleId) => boolean;
}

const escaped = (s: string): string => part(s).slice(0, -2);

/**
 * Picks the scan for a Read filter shape (docs/reference/http-api.md §4.12):
 *   no object → every tuple (relation/user, if any, filtered);
 *   `T:id` [+ relation [+ user]] → that object's key prefix; `T:id` + user → object prefix, filtered;
 *   `T:` + user [+ relation] → the by-user positions (`<type><user><rel><id>`, codec.ts), exact:
 *     PostgreSQL's by-user index, or the store's in-memory index (engine/commands/read.ts);
 *   `T:` alone [+ relation] → every object of the type (the API rejects it; storage still serves).
 * Object scans come back in (object, relation, user) byte order; the by-user shape in
 * (relation, object id) order. Both are stable, and a cursor is tied to its scan by its tag.
 * The key-value backends serve the by-user shape with kvScanFor.
 */
export function scanFor(f: TupleFilter): Scan {
  const rel = f.relation || undefined;
  const user = f.user || undefined;
  const byObject = (prefix: string, match: (t: TupleId) => boolean): Scan => ({
    tag: 't',
    prefix,
    decode: decodeTupleKey,
    match,
  });
  if (!f.object) return byObject('', (t) => (!rel || t.relation === rel) && (!user || t.user === user));
  const colon = f.object.indexOf(':');
  if (colon === f.object.length - 1) {
    const type = f.object.slice(0, -1);
    // `{object:"T:", user[, relation]}` → by-user positions; ordered by (relation, object id).
    if (user)
      return {
        tag: 'u',
        prefix: part(type) + part(user) + (rel ? part(rel) : ''),
        decode: decodeUserIndexKey,
        match: () => true,
      };
    return byObject(escaped(f.object), (t) => !rel || t.relation === rel);
  }
  if (rel) return byObject(part(f.object) + part(rel) + (user ? part(user) : ''), () => true);
  return byObject(part(f.object), (t) => !user || t.user === user);
}

/** True for the by-user filter shape `{object: "T:", user[, relation]}`. */
export function isByUserFilter(f: TupleFilter): boolean {
  return !!f.user && !!f.object && f.object.indexOf(':') === f.object.length - 1;
}

/**
 * `scanFor` on the key-value backends, which keep no by-user keys (Storage.readsByUser): the
 * by-user shape scans its object type instead, in object order, the user and any relation
 * matched on each key. Exact, but it reads every tuple of the type: the engine serves that shape
 * from the store's index (engine/commands/read.ts) and only direct storage callers get this scan.
 * Its cursors have their own tag: a cursor of another shape is still refused.
 */
export function kvScanFor(f: TupleFilter): Scan {
  if (!isByUserFilter(f)) return scanFor(f);
  const rel = f.relation || undefined;
  const user = f.user as string;
  // Only a matching tuple decodes: a cursor is the position of a tuple this filter returned.
  const decode = (suffix: string): TupleId | undefined => {
    const t = decodeTupleKey(suffix);
    return t && t.user === user && (!rel || t.relation === rel) ? t : undefined;
  };
  return { tag: 'v', prefix: escaped(f.object as string), decode, match: () => true };
}

/**
 * The position a Read continuation token resumes after, on every backend: undefined for none; a
 * token of another scan (its tag) or not a key of this filter's range is invalid_continuation_token.
 */
export function resumeAfter(scan: Scan, token: string | undefined): string | undefined {
  return decodeCursor(
    token,
    scan.tag,
    (p) => p.startsWith(scan.prefix) && p.length > scan.prefix.length && scan.decode(p) !== undefined,
  );
}

/** A page of tuples matching `filter`, resuming after `page.after` (the key-value backends). */
export async function readTuples(
  kv: Kv,
  storeId: string,
  filter: TupleFilter,
  page: PageRequest,
): Promise<Page<Tuple>> {
  const scan = kvScanFor(filter);
  const after = resumeAfter(scan, page.after);
  const base = key.tuples(storeId);
  const from = base + scan.prefix;
  // The revision key (`D <id> t` itself) falls in the unfiltered range; it does not decode.
  const range = after === undefined ? { gte: from } : { gt: base + after };
  const items: Tuple[] = [];
  let last = '';
  for await (const [k, v] of kv.entries({ ...range, lt: prefixEnd(from) })) {
    const t = scan.decode(k.slice(base.length));
    if (!t || !scan.match(t)) continue;
    if (items.length === page.pageSize) return { items, next: encodeCursor(scan.tag, last) };
    const value = decodeTupleValue(v);
    items.push({ key: withValue(t, value), timestamp: value.timestamp });
    last = k.slice(base.length);
  }
  return { items };
}

/**
 * The revision and every tuple, from one snapshot: the revision key sorts right before the
 * tuple keys, so one iterator reads both. Streams in native batches (see FlatIterator).
 */
export async function scanTuples(
  kv: Kv,
  storeId: string,
): Promise<{ revision: number; tuples: AsyncIterable<TupleKey> }> {
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
  return v.length === ISO_LENGTH ? t : withValue(t, decodeTupleText(v));
}
