// The query operations (Check, BatchCheck, ListObjects, StreamedListObjects, ListUsers, Expand):
// bring the store's index to the freshness the query asks for (HIGHER_CONSISTENCY,
// Latch-Min-Revision: ./follower.ts), resolve the model, validate against it with each API's
// codes, take ONE index snapshot, and evaluate — Check on the walker, the list queries and Expand
// on the TypeScript evaluator — at ONE instant of the injected clock (tuple expiry). Paged
// listings compute their complete answer once per store state (./listing.ts).

import type { Consistency } from '../domain/types.js';
import { AppError, toAppError } from '../errors.js';
import type { IndexSnapshot, StoreIndex } from '../index/store-index.js';
import { validateUserFilter } from '../model/query-validation.js';
import type { CompiledModel } from '../model/types.js';
import type { EvalContext } from './reference/context.js';
import { ReferenceChecker, TRUE } from './reference/check.js';
import { RequestState } from './reference/context.js';
import { Trace } from './reference/trace.js';
import { expand } from './list/expand.js';
import { listUsers, type ListUsersQuery } from './list/list-users.js';
import { overlayView } from './reference/view.js';
import type { Follower, Freshness } from './follower.js';
import type { Indexes } from './indexes.js';
import type { ModelCache } from './models.js';
import { ResultCache } from './result-cache.js';
import type { EngineStats } from './stats.js';
import {
  validateCheckKey,
  validateContextualTuples,
  validateObjectRelation,
  validateRequestContext,
  validateSubject,
} from './request-validation.js';
import type {
  BatchCheckInput,
  BatchCheckOutcome,
  BatchCheckResult,
  CheckIdsInput,
  CheckIdsResult,
  CheckExplanation,
  CheckInput,
  CheckResult,
  CheckTupleKey,
  EngineConfig,
  ExpandInput,
  ExpandResult,
  ListObjectsInput,
  ListObjectsResult,
  ListUsersInput,
  ListUsersResult,
  QueryBase,
} from './types.js';
import { checkIds } from './id-checks.js';
import { createWalkerChecker, type WalkerChecker, type CheckItem } from './walker/checker.js';
import { openObjectWalk, streamWalk } from './list/open.js';
import {
  collectAll,
  firstAfter,
  listingKey,
  ListingCache,
  listingTimeout,
  pageOf,
  userKey,
  userOfKey,
  type ListingStamp,
} from './listing.js';

export class Queries {
  private readonly checker: WalkerChecker;
  private readonly cache: ResultCache;
  private readonly listings = new ListingCache();

  constructor(
    private readonly models: ModelCache,
    private readonly indexes: Indexes,
    private readonly config: EngineConfig,
    private readonly follower: Follower,
    /** The clock of tuple expiry (ms since the epoch); tests inject one. */
    private readonly now: () => number = Date.now,
  ) {
    this.checker = createWalkerChecker({ workers: config.workers, resolveDepth: config.resolveDepth, now });
    this.cache = new ResultCache(config.cacheSize);
  }

  async close(): Promise<void> {
    await this.checker.close();
  }

  /** The walker and its pool, shared with the queries at a past revision (./history/). */
  get walker(): WalkerChecker {
    return this.checker;
  }

  /** Result-cache and pool figures for `Latch.stats()`. */
  stats(): Pick<EngineStats, 'cache' | 'pool'> {
    const c = this.cache;
    return {
      cache: { hits: c.hits, misses: c.misses, entries: c.size, capacity: c.capacity },
      pool: this.checker.poolStats(),
    };
  }

  /** Past `checkDeadlineMs` from here a Check answers 422 throttled_timeout_error (D8). */
  async check(input: CheckInput): Promise<CheckResult> {
    const deadline = Date.now() + this.config.checkDeadlineMs;
    const index = await this.index(input, deadline);
    const model = await this.models.resolve(input.storeId, input.modelId);
    return this.checkOn(model, index.snapshot(), input, deadline);
  }

  /** The store's index at the freshness the query asks for (see Follower.fresh). */
  private index(q: Freshness & { readonly storeId: string }, deadline: number): Promise<StoreIndex> {
    if (q.consistency !== 'HIGHER_CONSISTENCY' && q.minRevision === undefined) return this.indexes.get(q.storeId);
    return this.follower.fresh(q.storeId, q, deadline);
  }

  /**
   * Check without a promise when the model and the store's index are already at hand (the warm
   * case); undefined when either would have to be loaded. Same answers and errors as `check`.
   */
  checkSync(input: CheckInput): CheckResult | undefined {
    // HIGHER_CONSISTENCY reads the committed revision from storage: never synchronous.
    if (input.consistency === 'HIGHER_CONSISTENCY') return undefined;
    const model = this.models.peek(input.storeId, input.modelId);
    const index = model && this.indexes.peek(input.storeId);
    if (!index || (input.minRevision !== undefined && index.currentRevision < input.minRevision)) return undefined;
    return this.checkOn(model, index.snapshot(), input, undefined);
  }

  /**
   * The result-cache decision, the one for every Check however it arrives (Check over HTTP or the
   * channel, BatchCheck items, the channel's check groups): the scope to read and fill, or 0. A
   * request may use the cache unless it asks for HIGHER_CONSISTENCY or carries contextual tuples
   * or a context. A hit skips validation: only keys that passed it for this model are cached.
   * With the cache off (capacity 0) nothing is looked up: hashing the key would cost ≈ 10 % of an
   * embedded Check. A store with expiring tuples adds the expiry epoch at the request's instant
   * `now` to the scope, so no cached answer outlives the expiry of a tuple it may depend on.
   */
  private cacheScope(
    consistency: Consistency,
    q: Pick<QueryBase, 'context' | 'contextualTuples'>,
    snapshot: IndexSnapshot,
    model: CompiledModel,
    now: number,
  ): number {
    const cacheable =
      consistency !== 'HIGHER_CONSISTENCY' && q.contextualTuples.length === 0 && !q.context && this.cache.capacity > 0;
    return cacheable ? ResultCache.scope(snapshot, model, snapshot.expiryEpoch(now)) : 0;
  }

  /** The request's instant: the clock is read only for a snapshot with expiring tuples (≈ 70 ns otherwise saved). */
  private instant(snapshot: IndexSnapshot): number {
    return this.checker.instant(snapshot);
  }

  /**
   * `deadline` undefined: the Check started now (the synchronous path) and has `checkDeadlineMs`
   * from the walker's first clock read (`checkStarting`): a cache hit or a walk too short for the
   * walker to read the clock reads none for it (Date.now() is ≈ 5 % of a direct embedded Check).
   */
  private checkOn(
    model: CompiledModel,
    snapshot: IndexSnapshot,
    input: CheckInput,
    deadline: number | undefined,
  ): CheckResult {
    const k = input.tupleKey;
    const now = this.instant(snapshot);
    const scope = this.cacheScope(input.consistency, input, snapshot, model, now);
    const cached = scope === 0 ? undefined : this.cache.get(scope, k);
    if (cached !== undefined) return { allowed: cached, modelId: model.id };
    const item = checkItem(model, k, input);
    const outcome =
      deadline === undefined
        ? this.checker.checkStarting(snapshot, model, item, this.config.checkDeadlineMs, now)
        : this.checker.checkInline(snapshot, model, item, deadline, now);
    if ('error' in outcome) throw outcome.error;
    if (scope !== 0) this.cache.set(scope, k, outcome.allowed);
    return { allowed: outcome.allowed, modelId: model.id };
  }

  /** Bulk Check on interned strings (./id-checks.ts). */
  async checkIds(input: CheckIdsInput): Promise<CheckIdsResult> {
    const deadline = Date.now() + this.config.checkDeadlineMs;
    await this.index(input, deadline);
    return checkIds(this.models, this.indexes, this.checker, input, deadline);
  }

  /** One deadline for the whole batch: the items it cuts short answer throttled_timeout_error. */
  async batchCheck(input: BatchCheckInput): Promise<BatchCheckResult> {
    const deadline = Date.now() + this.config.checkDeadlineMs;
    const index = await this.index(input, deadline);
    const model = await this.models.resolve(input.storeId, input.modelId);
    const snapshot = index.snapshot();
    // One instant for the whole batch: every item sees the same tuples expired.
    const now = this.instant(snapshot);
    // Per item: its cached answer, its validation failure, or its position among the checks that run.
    const slots: (BatchCheckOutcome | number)[] = [];
    const valid: CheckItem[] = [];
    const scopes: number[] = [];
    for (const c of input.checks) {
      const scope = this.cacheScope(input.consistency, c, snapshot, model, now);
      const cached = scope === 0 ? undefined : this.cache.get(scope, c.tupleKey);
      if (cached !== undefined) {
        slots.push(cached ? ALLOWED_ITEM : DENIED_ITEM);
        continue;
      }
      try {
        valid.push(checkItem(model, c.tupleKey, c));
        scopes.push(scope);
        slots.push(valid.length - 1);
      } catch (err) {
        slots.push({ error: toAppError(err) });
      }
    }
    const outcomes = valid.length > 0 ? await this.checker.check(snapshot, model, valid, deadline, now) : [];
    for (let i = 0; i < valid.length; i++) {
      const o = outcomes[i];
      const scope = scopes[i] as number;
      if (scope !== 0 && o && 'allowed' in o) this.cache.set(scope, valid[i] as CheckItem, o.allowed);
    }
    // In the caller's order.
    const results = new Map<string, BatchCheckOutcome>();
    input.checks.forEach((c, i) => {
      const slot = slots[i] as BatchCheckOutcome | number;
      const outcome = typeof slot === 'number' ? outcomes[slot] : slot;
      if (outcome) results.set(c.correlationId, outcome);
    });
    return { modelId: model.id, results };
  }

  async listObjects(input: ListObjectsInput): Promise<ListObjectsResult> {
    if (input.page) {
      const { model, keys } = await this.completeObjects(input);
      const page = pageOf(keys, input.page);
      return { objects: page.items, modelId: model.id, next: page.next };
    }
    const { model, walk } = await this.prepareListObjects(input);
    const max = this.config.listObjectsMaxResults;
    const objects: string[] = [];
    for (const o of walk) {
      objects.push(o);
      if (objects.length >= max) break; // stops the walk: no later error can surface
    }
    return { objects, modelId: model.id };
  }

  /** Objects as the walk confirms them, against one pinned snapshot (list/open.ts `streamWalk`). */
  async *streamedListObjects(input: ListObjectsInput, signal?: AbortSignal): AsyncIterable<string> {
    if (input.page) {
      const { keys } = await this.completeObjects(input, signal);
      const from = firstAfter(keys, input.page.after);
      const to = Math.min(keys.length, from + input.page.size);
      for (let i = from; i < to; i++) {
        if (signal?.aborted) return;
        yield keys[i] as string;
      }
      return;
    }
    const { walk, snapshot, deadline } = await this.prepareListObjects(input);
    yield* streamWalk(walk, snapshot, deadline, signal);
  }

  /**
   * The complete, sorted answer of a paged ListObjects against the current snapshot (at the
   * freshness the request asks for): from the listing cache when the store, model and expiry
   * horizon are unchanged since it was computed, else by a full walk sliced over event-loop turns
   * (its snapshot pinned meanwhile).
   */
  private async completeObjects(
    input: ListObjectsInput,
    signal?: AbortSignal,
  ): Promise<{ model: CompiledModel; keys: readonly string[] }> {
    const deadline = Date.now() + this.config.listPageDeadlineMs;
    const index = await this.index(input, deadline);
    const model = await this.validListObjects(input);
    const snapshot = index.snapshot();
    const now = this.now();
    const stamp: ListingStamp = {
      index,
      revision: snapshot.revision,
      modelId: model.id,
      validUntil: snapshot.nextExpiry(now),
    };
    const key = `${input.storeId}\u0000${listingKey('list-objects', [input.type, input.relation, input.user, input.contextualTuples, input.context ?? null])}`;
    const hit = this.listings.get(key, stamp, now);
    if (hit) return { model, keys: hit };
    const outcome = { stopped: false };
    snapshot.pin();
    try {
      const walk = openObjectWalk(
        {
          snapshot,
          model,
          contextual: input.contextualTuples,
          context: input.context,
          resolveDepth: this.config.resolveDepth,
          deadline,
          outcome,
          now,
        },
        { type: input.type, relation: input.relation, user: input.user },
      );
      const keys = await collectAll(walk, outcome, signal);
      keys.sort();
      this.listings.set(key, stamp, keys);
      return { model, keys };
    } finally {
      snapshot.unpin();
    }
  }

  async listUsers(input: ListUsersInput): Promise<ListUsersResult> {
    const deadline = Date.now() + (input.page ? this.config.listPageDeadlineMs : this.config.listUsersDeadlineMs);
    const index = await this.index(input, deadline);
    const model = await this.models.resolve(input.storeId, input.modelId);
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
    const ctx = this.context(input, model, index.snapshot(), deadline);
    if (input.page) {
      const page = pageOf(this.completeUsers(input, index, ctx, q), input.page);
      return { users: page.items.map(userOfKey), modelId: model.id, next: page.next };
    }
    return { users: listUsers(ctx, q, this.config.listUsersMaxResults), modelId: model.id };
  }

  /** The complete, sorted users of a paged ListUsers (cached like `completeObjects`). */
  private completeUsers(
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
    const hit = this.listings.get(key, stamp, now);
    if (hit) return hit;
    const users = listUsers(ctx, q, Number.POSITIVE_INFINITY);
    // The evaluator ends quietly at the deadline; a complete listing may not (D8).
    if (Date.now() > ctx.deadline) throw listingTimeout();
    const keys = users.map(userKey).sort();
    this.listings.set(key, stamp, keys);
    return keys;
  }

  /** Forgets what the listing cache holds for a deleted store. */
  forgetStore(storeId: string): void {
    this.listings.dropStore(storeId);
  }

  /** Expand has no deadline of its own: a freshness wait is bounded by the Check deadline. */
  async expand(input: ExpandInput): Promise<ExpandResult> {
    const index = await this.index(input, Date.now() + this.config.checkDeadlineMs);
    const model = await this.models.resolve(input.storeId, input.modelId);
    validateContextualTuples(model, input.contextualTuples, 'expand');
    const colon = input.object.indexOf(':');
    const type = colon === -1 ? input.object : input.object.slice(0, colon);
    validateObjectRelation(model, type, input.relation, 'expand');
    const snapshot = index.snapshot();
    const view = overlayView(snapshot.at(this.now()), input.contextualTuples);
    return { tree: { root: expand(model, view, input.object, input.relation) }, modelId: model.id };
  }

  /**
   * Check on the reference evaluator, recording its trace. Validation errors throw as Check's do;
   * an evaluation error (a condition, the depth limit) is part of the answer, in the trace.
   */
  async explainCheck(input: CheckInput): Promise<CheckExplanation> {
    const deadline = Date.now() + this.config.checkDeadlineMs;
    const index = await this.index(input, deadline);
    const model = await this.models.resolve(input.storeId, input.modelId);
    const k = input.tupleKey;
    checkItem(model, k, input);
    const ctx = this.context(input, model, index.snapshot(), deadline);
    const trace = new Trace();
    const out = new ReferenceChecker(new RequestState(ctx), k.user, trace).eval(k.object, k.relation, 0);
    const tree = trace.root.children?.[0] ?? trace.root; // eval opened exactly one node at the top
    return { allowed: out === TRUE, modelId: model.id, tree, truncated: trace.dropped };
  }

  /** The model of a ListObjects request, after every model-dependent check with ListObjects' codes. */
  private async validListObjects(input: ListObjectsInput): Promise<CompiledModel> {
    const model = await this.models.resolve(input.storeId, input.modelId);
    validateRequestContext(input.context);
    validateContextualTuples(model, input.contextualTuples, 'listObjects');
    validateObjectRelation(model, input.type, input.relation, 'listObjects');
    validateSubject(model, input.user);
    return model;
  }

  private async prepareListObjects(
    input: ListObjectsInput,
  ): Promise<{ model: CompiledModel; walk: Generator<string, void>; snapshot: IndexSnapshot; deadline: number }> {
    const deadline = Date.now() + this.config.listObjectsDeadlineMs;
    const index = await this.index(input, deadline);
    const model = await this.validListObjects(input);
    const snapshot = index.snapshot();
    const walk = openObjectWalk(
      {
        snapshot,
        model,
        contextual: input.contextualTuples,
        context: input.context,
        resolveDepth: this.config.resolveDepth,
        deadline,
        now: this.now(),
      },
      { type: input.type, relation: input.relation, user: input.user },
    );
    return { model, walk, snapshot, deadline };
  }

  /** The evaluator's inputs: the snapshot as seen at the request's instant, plus the contextual tuples. */
  private context(
    input: QueryBase,
    model: CompiledModel,
    snapshot: IndexSnapshot,
    deadline: number,
  ): EvalContext & { readonly now: number } {
    const now = this.now();
    return {
      model,
      view: overlayView(snapshot.at(now), input.contextualTuples),
      context: input.context,
      resolveDepth: this.config.resolveDepth,
      deadline,
      now,
    };
  }
}

const ALLOWED_ITEM: BatchCheckOutcome = Object.freeze({ allowed: true });
const DENIED_ITEM: BatchCheckOutcome = Object.freeze({ allowed: false });

/**
 * A Check key validated against the model with Check's codes (key, request context, contextual
 * tuples), as the walker's item, with the key's parts the validation found (not parsed again).
 * Fields spelled out: `{...key, more}` takes V8's slow clone path (≈ 1.5 µs on Node 20).
 */
export function checkItem(
  model: CompiledModel,
  k: CheckTupleKey,
  q: Pick<QueryBase, 'context' | 'contextualTuples'>,
): CheckItem {
  const parts = validateCheckKey(model, k);
  validateRequestContext(q.context);
  validateContextualTuples(model, q.contextualTuples, 'check');
  return {
    object: k.object,
    relation: k.relation,
    user: k.user,
    contextualTuples: q.contextualTuples,
    context: q.context,
    parts,
  };
}
