// Read: the store, then a page of its stored tuples matching the filter, straight from the
// datastore (fresh by nature: the consistency preference has nothing to choose).
//
// The by-user shape `{object: "T:", user[, relation]}` on a datastore without a by-user index
// (Storage.readsByUser false: LevelDB, memory) is served from the store's in-memory index: the
// user's tuples of the type, as by-user positions (storage/tuples.ts scanFor: `<type><user><rel>
// <id>`, ordered by relation then object id, the order and cursors of that shape on every
// backend), then each page's stored values read back from the datastore by key. The index holds
// every write acknowledged on this node; a tuple it lists that a later write deleted has no
// stored value and is skipped.

import { nextTurn } from '../../domain/turn.js';
import type { Page, Tuple, TupleKey } from '../../domain/types.js';
import { decodeUserIndexKey, part, userPosition } from '../../storage/codec.js';
import { encodeCursor } from '../../storage/cursor.js';
import { sortBinaryKeys } from '../../storage/key-sort.js';
import { isByUserFilter, resumeAfter, scanFor } from '../../storage/tuples.js';
import type { PageRequest, TupleFilter } from '../../storage/types.js';
import type { ReadInput } from '../contract.js';
import type { EngineParts } from './parts.js';
import { storeOf } from './request-steps.js';

export async function read(e: EngineParts, input: ReadInput): Promise<Page<Tuple>> {
  await storeOf(e, input.storeId);
  return readPage(e, input.storeId, input.filter, input);
}

/** A page of the store's tuples matching `filter`: the datastore's Read, or the index's for the by-user shape. */
export function readPage(
  e: EngineParts,
  storeId: string,
  filter: TupleFilter,
  page: PageRequest,
): Promise<Page<Tuple>> {
  if (e.storage.readsByUser || !isByUserFilter(filter)) return e.storage.readTuples(storeId, filter, page);
  return readByUser(e, storeId, filter, page);
}

/** Positions gathered between two turns of the event loop (a user with a million tuples takes many). */
const GATHER_SLICE = 8192;

async function readByUser(
  e: EngineParts,
  storeId: string,
  filter: TupleFilter,
  page: PageRequest,
): Promise<Page<Tuple>> {
  const scan = scanFor(filter);
  const after = resumeAfter(scan, page.after);
  const positions = await userPositions(e, storeId, filter, page.pageSize);
  let i = after === undefined ? 0 : upperBound(positions, after);
  const items: Tuple[] = [];
  let last = '';
  while (i < positions.length) {
    // One more than the page needs: it tells whether a next page exists.
    const want = positions.slice(i, i + page.pageSize + 1 - items.length);
    i += want.length;
    const keys = want.map((p) => decodeUserIndexKey(p) as TupleKey);
    const values = await tupleValues(e, storeId, keys);
    for (let j = 0; j < values.length; j++) {
      const v = values[j];
      if (v === undefined) continue; // deleted after the index listed it
      if (items.length === page.pageSize) return { items, next: encodeCursor(scan.tag, last) };
      items.push(v);
      last = want[j] as string;
    }
  }
  return { items };
}

function tupleValues(e: EngineParts, storeId: string, keys: readonly TupleKey[]): Promise<(Tuple | undefined)[]> {
  const values = e.storage.tupleValues;
  if (!values) throw new Error('a datastore without readsByUser must implement tupleValues');
  return values.call(e.storage, storeId, keys);
}

/**
 * The user's tuples of the filter's type (and relation) at the index's current revision, as
 * sorted by-user positions. A list longer than one page is kept in the listing cache for the next
 * pages while the index stays at that revision (a user with 100,000 tuples is gathered and sorted
 * once, not once per page).
 */
async function userPositions(
  e: EngineParts,
  storeId: string,
  filter: TupleFilter,
  pageSize: number,
): Promise<readonly string[]> {
  const object = filter.object as string;
  const user = filter.user as string;
  const type = object.slice(0, -1);
  const rel = filter.relation || undefined;
  const index = await e.indexes.get(storeId);
  const snap = index.snapshot();
  const stamp = { index, revision: snap.revision, modelId: '', validUntil: Infinity };
  const cacheKey = `${storeId}\u0000read-by-user\u0000${type}\u0000${user}\u0000${rel ?? ''}`;
  const cached = e.listings.peek(cacheKey, stamp, 0);
  if (cached) return cached;
  const positions: string[] = [];
  snap.pin();
  try {
    let n = 0;
    for (const [relation, object] of snap.namesOfUser(type, user, rel)) {
      positions.push(userPosition({ object, relation, user }));
      if (++n % GATHER_SLICE === 0) await nextTurn();
    }
  } finally {
    snap.unpin();
  }
  // Binary strings: code unit order is the by-user order of every backend.
  sortBinaryKeys(positions, part(type).length + part(user).length);
  if (positions.length > pageSize) e.listings.set(cacheKey, stamp, positions);
  return positions;
}

/** The first index in sorted `list` whose element is greater than `p`. */
function upperBound(list: readonly string[], p: string): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((list[mid] as string) <= p) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
