// Delete by filter: which stored tuples a filter selects, gathered through the storage contract's
// `readTuples` (pages of at most 100), bounded by the request's limit. The service deletes what
// this returns in one `writeTuples` call, so each request is one atomic batch and one revision.

import type { TupleKey } from '../../domain/types.js';
import type { Storage, TupleFilter } from '../../storage/types.js';
import type { DeleteTuplesFilter } from '../contract.js';

/** The most tuples one delete-by-filter request removes; a request's `limit` may lower it. */
export const MAX_DELETE_BY_FILTER = 1000;

/** The storage contract's page bound for `readTuples`. */
const READ_PAGE = 100;

/**
 * The Read filter that serves a delete filter: an object names itself, an object type alone is
 * the `T:` prefix. Relation and user narrow either, or the whole store when neither is given.
 */
export function readFilterOf(f: DeleteTuplesFilter): TupleFilter {
  const object = f.object ?? (f.objectType !== undefined ? `${f.objectType}:` : undefined);
  return { object, relation: f.relation, user: f.user };
}

export interface Matching {
  /** At most `limit` keys, in the backend's stable Read order, conditions dropped. */
  readonly keys: TupleKey[];
  /** True when at least one more tuple matched beyond `limit`. */
  readonly more: boolean;
}

/** The first `limit` tuples the filter selects, and whether more remain. */
export async function matching(
  storage: Storage,
  storeId: string,
  filter: DeleteTuplesFilter,
  limit: number,
): Promise<Matching> {
  const read = readFilterOf(filter);
  const keys: TupleKey[] = [];
  let after: string | undefined;
  for (;;) {
    const want = Math.min(READ_PAGE, limit - keys.length);
    const page = await storage.readTuples(storeId, read, { pageSize: want, after });
    for (const t of page.items) keys.push({ user: t.key.user, relation: t.key.relation, object: t.key.object });
    if (page.next === undefined) return { keys, more: false };
    after = page.next;
    if (keys.length >= limit) {
      // A backend may hand out a cursor at the end of the data: one probe says whether any is left.
      const probe = await storage.readTuples(storeId, read, { pageSize: 1, after });
      return { keys, more: probe.items.length > 0 };
    }
  }
}
