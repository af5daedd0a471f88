// Delete by filter: the store, then, through the store writer (state/store-writer.ts), the stored
// tuples the filter selects, gathered through the storage contract's `readTuples` (pages of at
// most 100) and bounded by the request's limit, deleted in one `writeTuples` call: each request
// is one atomic batch and one revision. Reading and deleting run as one step of the store's write
// order; a tuple that vanished between the two (another writer) is skipped, not an error. A dry
// run only reads.

import type { TupleKey } from '../../domain/types.js';
import type { Storage, TupleFilter } from '../../storage/types.js';
import type { DeleteTuplesFilter, DeleteTuplesInput, DeleteTuplesOutput } from '../contract.js';
import type { EngineParts } from './parts.js';
import { storeOf } from './request-steps.js';

export async function deleteTuples(e: EngineParts, input: DeleteTuplesInput): Promise<DeleteTuplesOutput> {
  const { storeId } = input;
  await storeOf(e, storeId);
  if (input.dryRun) {
    const found = await matching(e.storage, storeId, input.filter, input.limit);
    return { tuples: found.keys, more: found.more, revision: await e.storage.revision(storeId) };
  }
  return e.writer.write(storeId, async (commit) => {
    const found = await matching(e.storage, storeId, input.filter, input.limit);
    if (found.keys.length === 0) return { tuples: [], more: false, revision: await e.storage.revision(storeId) };
    const res = await commit((storage) =>
      storage.writeTuples(storeId, { writes: [], deletes: found.keys, onDuplicate: 'error', onMissing: 'ignore' }),
    );
    return { tuples: res.deleted, more: found.more, revision: res.revision };
  });
}

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
