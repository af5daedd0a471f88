// Complete listings in pages (ListObjects, StreamedListObjects and ListUsers with `page_size` /
// `continuation_token`, docs/reference/decisions.md D15): the whole answer is computed against one snapshot,
// sorted by its string form, and cut after the caller's cursor; results computed for one store
// state are kept for the next pages while that state lasts.
//
// Contract of a page (docs/openfga-comparison.md, "Complete listings"): page n holds, in
// ascending code-unit order, the first `size` results greater than the cursor of page n-1, each
// one accessible in the store's state when page n was served. Hence no duplicates (the cursor
// only moves forward) and no result accessible for the whole listing is missed (it is accessible
// in the state of the page whose range holds it). A result gained or lost between pages may or may
// not be listed. Example: objects {doc:a, doc:b, doc:c}, size 2 → [doc:a, doc:b] (cursor doc:b),
// then [doc:c] (end); a doc:aa granted after the first page is not listed (it sorts before the
// cursor), a doc:bb granted then is.

import { nextTurn } from '../../../domain/turn.js';
import { createHash } from 'node:crypto';
import { AppError } from '../../../errors.js';
import type { Latch, ListedUser, ListObjectsInput, ListPageRequest, ListUsersInput } from '../../contract.js';

/** The results of one page; `next` is the cursor of the next page, absent after the last one. */
export interface ListPage<T> {
  readonly items: T[];
  readonly next?: string | undefined;
}

/**
 * Page sizes a request may ask for: up to 100,000 results, a reply of a few MB (the complete
 * answer is computed once per store state and cached, so a page costs its own rendering).
 */
export const MAX_LIST_PAGE_SIZE = 100_000;
export const DEFAULT_LIST_PAGE_SIZE = 100;

/** The first index of the sorted `keys` whose key is greater than `after` (binary search). */
export function firstAfter(keys: readonly string[], after: string | undefined): number {
  if (after === undefined) return 0;
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((keys[mid] as string) <= after) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The page of the sorted `keys` after `page.after`. */
export function pageOf(keys: readonly string[], page: ListPageRequest): ListPage<string> {
  const from = firstAfter(keys, page.after);
  const items = keys.slice(from, from + page.size);
  const more = from + page.size < keys.length;
  return more ? { items, next: items[items.length - 1] } : { items };
}

/**
 * The fingerprint of a listing request without its page fields: a continuation token is valid
 * only with the request that produced it. Example: listingKey('list-objects', [type, relation,
 * user, modelId, contextual, context]) → 22 URL-safe base64 characters.
 */
export function listingKey(kind: string, parts: readonly unknown[]): string {
  return createHash('sha256')
    .update(JSON.stringify([kind, ...parts]))
    .digest('base64url')
    .slice(0, 22);
}

/** The error of a complete listing that could not finish within its deadline or budget (D8). */
export function listingTimeout(): AppError {
  return new AppError(
    'throttled_timeout_error',
    'timeout due to throttling on complex request: the complete listing did not finish within the deadline',
  );
}

/** The string form of a listed user, its sort key and cursor: `user:anne`, `team:x#member`, `user:*`. */
export function userKey(u: ListedUser): string {
  if ('object' in u) return `${u.object.type}:${u.object.id}`;
  if ('userset' in u) return `${u.userset.type}:${u.userset.id}#${u.userset.relation}`;
  return `${u.wildcard.type}:*`;
}

/** The listed user of a key made by `userKey`. */
export function userOfKey(key: string): ListedUser {
  const colon = key.indexOf(':');
  const type = key.slice(0, colon);
  const rest = key.slice(colon + 1);
  const hash = rest.indexOf('#');
  if (hash !== -1) return { userset: { type, id: rest.slice(0, hash), relation: rest.slice(hash + 1) } };
  return rest === '*' ? { wildcard: { type } } : { object: { type, id: rest } };
}

/** Work between two event-loop turns while a complete listing is collected. */
const SLICE_MS = 5;

/**
 * Pulls a walk to its end in slices of ≈ 5 ms, so other requests run meanwhile (the caller pins
 * the snapshot the walk reads). Throws `listingTimeout` when the walk reports it stopped early
 * (`outcome.stopped`) or when the signal aborts; rethrows the walk's own errors.
 */
export async function collectAll(
  walk: Iterator<string, void>,
  outcome: { stopped: boolean },
  signal?: AbortSignal,
): Promise<string[]> {
  const out: string[] = [];
  let sliceEnd = performance.now() + SLICE_MS;
  for (;;) {
    if (signal?.aborted) throw new AppError('cancelled', 'Request Cancelled');
    const next = walk.next();
    if (next.done) break;
    out.push(next.value);
    if (performance.now() > sliceEnd) {
      await nextTurn();
      sliceEnd = performance.now() + SLICE_MS;
    }
  }
  if (outcome.stopped) throw listingTimeout();
  return out;
}

/**
 * Every object of a ListObjects request, page after page (embedded API): complete and in order,
 * whatever `listObjectsMaxResults` and the listing deadline are. Example:
 * `for await (const o of listAllObjects(latch, {storeId, type: 'doc', relation: 'viewer', user: 'user:anne', contextualTuples: [], consistency: 'UNSPECIFIED'})) …`
 */
export async function* listAllObjects(
  latch: Pick<Latch, 'listObjects'>,
  input: Omit<ListObjectsInput, 'page'>,
  pageSize = MAX_LIST_PAGE_SIZE,
): AsyncGenerator<string, void> {
  let after: string | undefined;
  do {
    const r = await latch.listObjects({ ...input, page: { size: pageSize, after } });
    yield* r.objects;
    after = r.next;
  } while (after !== undefined);
}

/** Every user of a ListUsers request, page after page (embedded API). */
export async function* listAllUsers(
  latch: Pick<Latch, 'listUsers'>,
  input: Omit<ListUsersInput, 'page'>,
  pageSize = MAX_LIST_PAGE_SIZE,
): AsyncGenerator<ListedUser, void> {
  let after: string | undefined;
  do {
    const r = await latch.listUsers({ ...input, page: { size: pageSize, after } });
    yield* r.users;
    after = r.next;
  } while (after !== undefined);
}
