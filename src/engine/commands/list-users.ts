// ListUsers: the contextual-tuple limit and the store, the index at the asked freshness, the
// model with every model-dependent check in ListUsers' codes (exactly one user filter), then the
// candidate walk (evaluation/list/list-users.ts; each candidate confirmed by the reference checker
// unless the walk alone is exact) over ONE snapshot seen at ONE instant. With a page: the complete, sorted users, from the listing cache
// while the store state lasts; a complete listing that cannot finish in time answers 422 (docs/reference/decisions.md D8).

import { AppError } from '../../errors.js';
import type { StoreIndex } from '../../index/store-index.js';
import { validateUserFilter } from '../../model/query-validation.js';
import type { ListedUser, ListUsersInput, ListUsersResult } from '../contract.js';
import { listUserKeys, listUsers as walkUsers, type ListUsersQuery } from '../evaluation/list/list-users.js';
import { listingKey, listingTimeout, pageOf, userOfKey } from '../evaluation/list/pages.js';
import type { EvalContext } from '../evaluation/semantics/context.js';
import type { ListingStamp } from '../state/listing-cache.js';
import type { EngineParts } from './parts.js';
import { pastListUsers } from './past-queries.js';
import { admit, evalContext, freshIndex } from './request-steps.js';
import { validateContextualTuples, validateObjectRelation, validateRequestContext } from './validate-request.js';

export async function listUsers(e: EngineParts, input: ListUsersInput): Promise<ListUsersResult> {
  await admit(e, input);
  if (input.at) return pastListUsers(e, input, input.at);
  const deadline = Date.now() + (input.page ? e.config.listPageDeadlineMs : e.config.listUsersDeadlineMs);
  const index = await freshIndex(e, input, deadline);
  const model = await e.models.resolve(input.storeId, input.modelId);
  validateRequestContext(input.context);
  validateContextualTuples(model, input.contextualTuples, 'listUsers');
  const filter = input.userFilters[0];
  if (!filter || input.userFilters.length !== 1) {
    throw new AppError(
      'validation_error',
      'invalid ListUsersRequest.UserFilters: value must contain exactly 1 item(s)',
    );
  }
  validateUserFilter(model, filter);
  validateObjectRelation(model, input.object.type, input.relation, 'listUsers');
  const q = {
    object: `${input.object.type}:${input.object.id}`,
    relation: input.relation,
    filter: { type: filter.type, relation: filter.relation || undefined },
  };
  const ctx = evalContext(e, input, model, index.snapshot(), deadline);
  if (input.page) {
    const page = pageOf(completeUsers(e, input, index, ctx, q), input.page);
    return pagedUsers(page.items, model.id, page.next, evaluated(ctx));
  }
  const users = walkUsers(ctx, q, e.config.listUsersMaxResults, { uniqueKeys: input.contextualTuples.length === 0 });
  return { users, modelId: model.id, ...evaluated(ctx) };
}

/**
 * A page's result: `userKeys`, and `users` built from them only when first read. HTTP JSON renders
 * the keys straight into bytes (api/listing-lines.ts), so a page of 100,000 users costs no
 * 200,000 objects unless msgpack, the decision log or an embedded caller reads `users`.
 */
function pagedUsers(
  keys: readonly string[],
  modelId: string,
  next: string | undefined,
  at: { revision: number; instant: number },
): ListUsersResult {
  let users: ListedUser[] | undefined;
  return {
    get users(): ListedUser[] {
      return (users ??= keys.map(userOfKey));
    },
    userKeys: keys,
    modelId,
    next,
    ...at,
  };
}

/** The revision and instant the listing read (the decision log replays them). */
function evaluated(ctx: EvalContext & { readonly now: number }): { revision: number; instant: number } {
  return { revision: ctx.view.revision, instant: ctx.now };
}

/** The complete, sorted users of a paged ListUsers (cached like ListObjects' complete answers). */
function completeUsers(
  e: EngineParts,
  input: ListUsersInput,
  index: StoreIndex,
  ctx: EvalContext & { readonly now: number },
  q: ListUsersQuery,
): readonly string[] {
  const now = ctx.now;
  const stamp: ListingStamp = {
    index,
    revision: ctx.view.revision,
    modelId: ctx.model.id,
    validUntil: index.snapshot().nextExpiry(now),
  };
  const key = `${input.storeId}\u0000${listingKey('list-users', [q.object, q.relation, q.filter.type, q.filter.relation ?? '', input.contextualTuples, input.context ?? null])}`;
  const hit = e.listings.get(key, stamp, now);
  if (hit) return hit;
  const keys = listUserKeys(ctx, q, Number.POSITIVE_INFINITY, { uniqueKeys: input.contextualTuples.length === 0 });
  // The evaluator ends quietly at the deadline; a complete listing may not (D8).
  if (Date.now() > ctx.deadline) throw listingTimeout();
  keys.sort();
  e.listings.set(key, stamp, keys);
  return keys;
}
