// The query operations (Check, BatchCheck, ListObjects, StreamedListObjects, ListUsers, Expand):
// bring the store's index to the freshness the query asks for (HIGHER_CONSISTENCY,
// Latch-Min-Revision: ./follower.ts), resolve the model, validate against it with each API's
// codes, take ONE index snapshot, and evaluate — Check on the walker, the list queries and Expand
// on the TypeScript evaluator.

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
import { listUsers } from './list/list-users.js';
import { overlayView } from './reference/view.js';
import type { Follower, Freshness } from './follower.js';
import type { Indexes } from './indexes.js';
import type { ModelCache } from './models.js';
import { ResultCache } from './result-cache.js';
import type { EngineStats } from './stats.js';
import { validateCheckKey, validateContextualTuples, validateObjectRelation, validateRequestContext, validateSubject } from './request-validation.js';
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

export class Queries {
  private readonly checker: WalkerChecker;
  private readonly cache: ResultCache;

  constructor(
    private readonly models: ModelCache,
    private readonly indexes: Indexes,
    private readonly config: EngineConfig,
    private readonly follower: Follower,
  ) {
    this.checker = createWalkerChecker({ workers: config.workers, resolveDepth: config.resolveDepth });
    this.cache = new ResultCache(config.cacheSize);
  }

  async close(): Promise<void> {
    await this.checker.close();
  }

  /** Result-cache and pool figures for `Latch.stats()`. */
  stats(): Pick<EngineStats, 'cache' | 'pool'> {
    const c = this.cache;
    return { cache: { hits: c.hits, misses: c.misses, entries: c.size, capacity: c.capacity }, pool: this.checker.poolStats() };
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
    return this.checkOn(model, index.snapshot(), input, Date.now() + this.config.checkDeadlineMs);
  }

  /**
   * The result-cache decision, the one for every Check however it arrives (Check over HTTP or the
   * channel, BatchCheck items, the channel's check groups): the scope to read and fill, or 0. A
   * request may use the cache unless it asks for HIGHER_CONSISTENCY or carries contextual tuples
   * or a context. A hit skips validation: only keys that passed it for this model are cached.
   * With the cache off (capacity 0) nothing is looked up: hashing the key would cost ≈ 10 % of an
   * embedded Check.
   */
  private cacheScope(consistency: Consistency, q: Pick<QueryBase, 'context' | 'contextualTuples'>, snapshot: IndexSnapshot, model: CompiledModel): number {
    const cacheable = consistency !== 'HIGHER_CONSISTENCY' && q.contextualTuples.length === 0 && !q.context && this.cache.capacity > 0;
    return cacheable ? ResultCache.scope(snapshot, model) : 0;
  }

  private checkOn(model: CompiledModel, snapshot: IndexSnapshot, input: CheckInput, deadline: number): CheckResult {
    const k = input.tupleKey;
    const scope = this.cacheScope(input.consistency, input, snapshot, model);
    const cached = scope === 0 ? undefined : this.cache.get(scope, k);
    if (cached !== undefined) return { allowed: cached, modelId: model.id };
    const outcome = this.checker.checkInline(snapshot, model, checkItem(model, k, input), deadline);
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
    // Per item: its cached answer, its validation failure, or its position among the checks that run.
    const slots: (BatchCheckOutcome | number)[] = [];
    const valid: CheckItem[] = [];
    const scopes: number[] = [];
    for (const c of input.checks) {
      const scope = this.cacheScope(input.consistency, c, snapshot, model);
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
    const outcomes = valid.length > 0 ? await this.checker.check(snapshot, model, valid, deadline) : [];
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
    const { walk, snapshot, deadline } = await this.prepareListObjects(input);
    yield* streamWalk(walk, snapshot, deadline, signal);
  }

  async listUsers(input: ListUsersInput): Promise<ListUsersResult> {
    const deadline = Date.now() + this.config.listUsersDeadlineMs;
    const index = await this.index(input, deadline);
    const model = await this.models.resolve(input.storeId, input.modelId);
    validateRequestContext(input.context);
    validateContextualTuples(model, input.contextualTuples, 'listUsers');
    const filter = input.userFilters[0];
    if (!filter || input.userFilters.length !== 1) {
      throw new AppError('validation_error', 'invalid ListUsersRequest.UserFilters: value must contain exactly 1 item(s)');
    }
    validateUserFilter(model, filter);
    validateObjectRelation(model, input.object.type, input.relation, 'listUsers');
    const ctx = this.context(input, model, index.snapshot(), deadline);
    const users = listUsers(
      ctx,
      {
        object: `${input.object.type}:${input.object.id}`,
        relation: input.relation,
        filter: { type: filter.type, relation: filter.relation || undefined },
      },
      this.config.listUsersMaxResults,
    );
    return { users, modelId: model.id };
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
    const view = overlayView(snapshot, input.contextualTuples);
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

  private async prepareListObjects(input: ListObjectsInput): Promise<{ model: CompiledModel; walk: Generator<string, void>; snapshot: IndexSnapshot; deadline: number }> {
    const deadline = Date.now() + this.config.listObjectsDeadlineMs;
    const index = await this.index(input, deadline);
    const model = await this.models.resolve(input.storeId, input.modelId);
    validateRequestContext(input.context);
    validateContextualTuples(model, input.contextualTuples, 'listObjects');
    validateObjectRelation(model, input.type, input.relation, 'listObjects');
    validateSubject(model, input.user);
    const snapshot = index.snapshot();
    const walk = openObjectWalk(
      { snapshot, model, contextual: input.contextualTuples, context: input.context, resolveDepth: this.config.resolveDepth, deadline },
      { type: input.type, relation: input.relation, user: input.user },
    );
    return { model, walk, snapshot, deadline };
  }

  private context(input: QueryBase, model: CompiledModel, snapshot: IndexSnapshot, deadline: number): EvalContext {
    return {
      model,
      view: overlayView(snapshot, input.contextualTuples),
      context: input.context,
      resolveDepth: this.config.resolveDepth,
      deadline,
    };
  }
}

const ALLOWED_ITEM: BatchCheckOutcome = Object.freeze({ allowed: true });
const DENIED_ITEM: BatchCheckOutcome = Object.freeze({ allowed: false });

/**
 * A Check key validated against the model with Check's codes (key, request context, contextual
 * tuples), as the walker's item. Fields spelled out: `{...key, more}` takes V8's slow clone path
 * (≈ 1.5 µs on Node 20).
 */
function checkItem(model: CompiledModel, k: CheckTupleKey, q: Pick<QueryBase, 'context' | 'contextualTuples'>): CheckItem {
  validateCheckKey(model, k);
  validateRequestContext(q.context);
  validateContextualTuples(model, q.contextualTuples, 'check');
  return { object: k.object, relation: k.relation, user: k.user, contextualTuples: q.contextualTuples, context: q.context };
}
