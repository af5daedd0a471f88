// Delete by filter: the store, then, through the store writer (state/store-writer.ts), the stored
// tuples the filter selects, gathered through Read (./read.ts readPage: the datastore's, or the
// index's for the by-user shape on a datastore without a by-user index) and bounded by the
// request's limit, deleted in one `writeTuples` call: each request is one atomic batch and one
// revision. Reading and deleting run as one step of the store's write order; a tuple that
// vanished between the two (another writer) is skipped, not an error. A dry run only reads.
// Where the datastore deletes by filter itself (Storage.deleteMatching), it does, except for the
// by-user shape that its Read does not serve from an index.

import type { TupleKey } from '../../domain/types.js';
import type { TupleFilter, WriteResult } from '../../storage/types.js';
import type { DeleteTuplesFilter, DeleteTuplesInput, DeleteTuplesOutput } from '../contract.js';
import type { EngineParts } from './parts.js';
import { readFromIndex, readPage } from './read.js';
import { storeOf } from './request-steps.js';

export async function deleteTuples(e: EngineParts, input: DeleteTuplesInput): Promise<DeleteTuplesOutput> {
  const { storeId, filter, limit } = input;
  await storeOf(e, storeId);
  const none = async (): Promise<DeleteTuplesOutput> => ({
    tuples: [],
    more: false,
    revision: await e.storage.revision(storeId),
  });
  if (input.dryRun) {
    const found = await matching(e, storeId, filter, limit);
    return { tuples: found.keys, more: found.more, revision: await e.storage.revision(storeId) };
  }
  if (!e.storage.ordersWrites && (await namesUnknown(e, storeId, filter))) return none();
  if (!keyed(filter)) {
    // No key range serves the filter: read it without holding the store's write order, so a
    // scan of the whole store never holds up other writes; delete what it found in one step.
    const found = await matching(e, storeId, filter, limit);
    if (found.keys.length === 0) return none();
    return e.writer.write(storeId, async (commit) => {
      const res = await commit((storage) =>
        storage.writeTuples(storeId, { writes: [], deletes: found.keys, onDuplicate: 'error', onMissing: 'ignore' }),
      );
      return { tuples: res.deleted, more: found.more, revision: res.revision };
    });
  }
  return e.writer.write(storeId, async (commit) => {
    const { deleteMatching } = e.storage;
    if (deleteMatching && !readFromIndex(e.storage, readFilterOf(filter))) {
      let more = false;
      // The index looks the deleted keys up while the datastore commits them (StoreIndex.prepare).
      const index = e.indexes.peek(storeId);
      const prepare = index && ((r: WriteResult): void => index.prepare(r));
      const res = await commit(async (storage) => {
        const d = await deleteMatching.call(storage, storeId, readFilterOf(filter), limit, prepare);
        more = d.more;
        return d.result;
      });
      return { tuples: res.deleted, more, revision: res.revision };
    }
    const found = await matching(e, storeId, filter, limit);
    if (found.keys.length === 0) return none();
    const res = await commit((storage) =>
      storage.writeTuples(storeId, { writes: [], deletes: found.keys, onDuplicate: 'error', onMissing: 'ignore' }),
    );
    return { tuples: res.deleted, more: found.more, revision: res.revision };
  });
}

/** True when a key range of the store serves the filter: it names an object or an object type. */
function keyed(f: DeleteTuplesFilter): boolean {
  return f.object !== undefined || f.objectType !== undefined;
}

/**
 * True when the store's index has never seen a name the filter needs (its relation, its user's
 * node, its object or object type), so no stored tuple can match and nothing is scanned. Only when
 * the index is at the datastore's revision, on a datastore whose writes this node orders.
 */
async function namesUnknown(e: EngineParts, storeId: string, f: DeleteTuplesFilter): Promise<boolean> {
  const index = await e.indexes.get(storeId);
  // An index behind the datastore (another node's writes not yet applied) proves nothing.
  if (index.currentRevision !== (await e.storage.revision(storeId))) return false;
  // The live dictionary, not a snapshot: it holds every name applied so far, and a snapshot built
  // here copied the index's overlay (a bulk delete's keys) into shared memory once per request.
  const { names, nodes } = index.dict;
  if (f.relation !== undefined && names.get(f.relation) === undefined) return true;
  if (f.objectType !== undefined && names.get(f.objectType) === undefined) return true;
  if (f.object !== undefined && nodes.get(f.object) === undefined) return true;
  return f.user !== undefined && nodes.get(f.user.split('#')[0] ?? '') === undefined;
}

/** The most tuples one delete-by-filter request removes. */
export const MAX_DELETE_BY_FILTER = 10_000;

/** The tuples a request without `limit` removes (the reply lists each one). */
export const DEFAULT_DELETE_BY_FILTER = 1000;

/** The pages Read gathers the matches in. */
const READ_PAGE = 1000;

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
  e: EngineParts,
  storeId: string,
  filter: DeleteTuplesFilter,
  limit: number,
): Promise<Matching> {
  const read = readFilterOf(filter);
  const keys: TupleKey[] = [];
  let after: string | undefined;
  for (;;) {
    const want = Math.min(READ_PAGE, limit - keys.length);
    const page = await readPage(e, storeId, read, { pageSize: want, after });
    for (const t of page.items) keys.push({ user: t.key.user, relation: t.key.relation, object: t.key.object });
    if (page.next === undefined) return { keys, more: false };
    after = page.next;
    if (keys.length >= limit) {
      // A backend may hand out a cursor at the end of the data: one probe says whether any is left.
      const probe = await readPage(e, storeId, read, { pageSize: 1, after });
      return { keys, more: probe.items.length > 0 };
    }
  }
}
