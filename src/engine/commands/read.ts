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
import type { IndexSnapshot } from '../../index/store-index.js';
import type { PageRequest, Storage, TupleFilter } from '../../storage/types.js';
import type { ReadInput } from '../contract.js';
import { firstAfter } from '../evaluation/list/pages.js';
import type { EngineParts } from './parts.js';
import { storeOf } from './request-steps.js';

export async function read(e: EngineParts, input: ReadInput): Promise<Page<Tuple>> {
  await storeOf(e, input.storeId);
  return readPage(e, input.storeId, input.filter, input);
}

/** True when the engine serves `filter` from the index: the by-user shape on a datastore without a by-user index. */
export function readFromIndex(storage: Storage, filter: TupleFilter): boolean {
  return !storage.readsByUser && isByUserFilter(filter);
}

/** A page of the store's tuples matching `filter`: the datastore's Read, or the index's for the by-user shape. */
export function readPage(
  e: EngineParts,
  storeId: string,
  filter: TupleFilter,
  page: PageRequest,
): Promise<Page<Tuple>> {
  if (readFromIndex(e.storage, filter)) return readByUser(e, storeId, filter, page);
  return e.storage.readTuples(storeId, filter, page);
}

/** Positions gathered between two turns of the event loop (a user with a million tuples takes many). */
const GATHER_SLICE = 8192;

/**
 * The longest list of one user's positions sorted and kept for the next pages (≈ 80 bytes each:
 * 40 MB), and how many such lists are kept (`EngineParts.userLists`). A longer list is never held:
 * each page streams the user's tuples and keeps only the page's worth after its cursor
 * (`smallestAfter`), so memory stays bounded by the page whatever the user holds, and each page
 * costs a pass over them.
 */
const MAX_LIST = 500_000;
export const USER_LISTS = 2;

async function readByUser(
  e: EngineParts,
  storeId: string,
  filter: TupleFilter,
  page: PageRequest,
): Promise<Page<Tuple>> {
  const scan = scanFor(filter);
  const items: Tuple[] = [];
  let after = resumeAfter(scan, page.after);
  let last = '';
  for (;;) {
    // One more than the page needs: it tells whether a next page exists.
    const { positions, more } = await positionsAfter(e, storeId, filter, after, page.pageSize + 1 - items.length);
    const keys = positions.map((p) => decodeUserIndexKey(p) as TupleKey);
    const values = await tupleValues(e, storeId, keys);
    for (let j = 0; j < values.length; j++) {
      const v = values[j];
      if (v === undefined) continue; // deleted after the index listed it
      if (items.length === page.pageSize) return { items, next: encodeCursor(scan.tag, last) };
      items.push(v);
      last = positions[j] as string;
    }
    if (!more) return { items };
    after = positions[positions.length - 1];
  }
}

function tupleValues(e: EngineParts, storeId: string, keys: readonly TupleKey[]): Promise<(Tuple | undefined)[]> {
  const values = e.storage.tupleValues;
  if (!values) throw new Error('a datastore without readsByUser must implement tupleValues');
  return values.call(e.storage, storeId, keys);
}

/**
 * The first `want` by-user positions after `after` (all when undefined) of the filter's user,
 * type and relation, in order, at the index's current revision, and whether more follow. A list
 * of at most MAX_LIST is gathered, sorted and kept for the next pages while the index stays at
 * that revision (a user with 100,000 tuples is sorted once, not once per page); a longer one is
 * streamed each time (`smallestAfter`).
 */
async function positionsAfter(
  e: EngineParts,
  storeId: string,
  filter: TupleFilter,
  after: string | undefined,
  want: number,
): Promise<{ positions: readonly string[]; more: boolean }> {
  const type = (filter.object as string).slice(0, -1);
  const user = filter.user as string;
  const rel = filter.relation || undefined;
  const index = await e.indexes.get(storeId);
  const snap = index.snapshot();
  const stamp = { index, revision: snap.revision, modelId: '', validUntil: Infinity };
  const cacheKey = `${storeId}\u0000${type}\u0000${user}\u0000${rel ?? ''}`;
  let list = e.userLists.peek(cacheKey, stamp, 0);
  if (!list) {
    const gathered: string[] = [];
    snap.pin();
    try {
      for (const [relation, object] of snap.namesOfUser(type, user, rel)) {
        if (gathered.length === MAX_LIST) return await smallestAfter(snap, type, user, rel, after, want);
        gathered.push(userPosition({ object, relation, user }));
        if (gathered.length % GATHER_SLICE === 0) await nextTurn();
      }
    } finally {
      snap.unpin();
    }
    // Binary strings: code unit order is the by-user order of every backend.
    list = sortBinaryKeys(gathered, part(type).length + part(user).length);
    if (list.length > want) e.userLists.set(cacheKey, stamp, list);
  }
  const from = firstAfter(list, after);
  return { positions: list.slice(from, from + want), more: from + want < list.length };
}

/**
 * `positionsAfter` for a user with more than MAX_LIST tuples of the type: one pass over them,
 * keeping the `want` smallest positions after `after` in a max-heap (memory of one page), then
 * those in order. The caller holds the snapshot's pin.
 */
export async function smallestAfter(
  snap: IndexSnapshot,
  type: string,
  user: string,
  rel: string | undefined,
  after: string | undefined,
  want: number,
): Promise<{ positions: readonly string[]; more: boolean }> {
  const heap: string[] = [];
  let more = false;
  let n = 0;
  for (const [relation, object] of snap.namesOfUser(type, user, rel)) {
    if (++n % GATHER_SLICE === 0) await nextTurn();
    const p = userPosition({ object, relation, user });
    if (after !== undefined && p <= after) continue;
    if (heap.length < want) heapPush(heap, p);
    else {
      more = true;
      if (p < (heap[0] as string)) heapReplaceTop(heap, p);
    }
  }
  return { positions: sortBinaryKeys(heap, part(type).length + part(user).length), more };
}

/** Adds `p` to the max-heap `h` (its greatest element first). */
function heapPush(h: string[], p: string): void {
  let i = h.length;
  h.push(p);
  while (i > 0) {
    const up = (i - 1) >> 1;
    if ((h[up] as string) >= p) break;
    h[i] = h[up] as string;
    i = up;
  }
  h[i] = p;
}

/** Replaces the greatest element of the max-heap `h` by `p` (smaller). */
function heapReplaceTop(h: string[], p: string): void {
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= h.length) break;
    const r = l + 1;
    const c = r < h.length && (h[r] as string) > (h[l] as string) ? r : l;
    if ((h[c] as string) <= p) break;
    h[i] = h[c] as string;
    i = c;
  }
  h[i] = p;
}
