// The queries with `at` (latch extension, docs/audit.md): Check, BatchCheck, ListObjects,
// StreamedListObjects, ListUsers, Expand and explain, evaluated on the store's past view
// (./past-views.ts) with the model that was the latest at that instant (or the one named), at
// that instant for tuple expiry. Each answer reports the revision it read.

import { ulidTime } from '../../domain/ids.js';
import { fail } from '../../errors.js';
import type { CompiledModel } from '../../model/types.js';
import type { Storage } from '../../storage/types.js';
import type { ModelCache } from '../models.js';
import type {
  BatchCheckInput,
  BatchCheckResult,
  CheckExplanation,
  CheckInput,
  CheckResult,
  EngineConfig,
  ExpandInput,
  ExpandResult,
  ListObjectsInput,
  ListObjectsResult,
  ListUsersInput,
  ListUsersResult,
  PastPoint,
} from '../types.js';
import type { WalkerChecker } from '../walker/checker.js';
import {
  batchCheckOnFrame,
  checkOnFrame,
  expandOnFrame,
  explainOnFrame,
  type Frame,
  listObjectsOnFrame,
  listUsersOnFrame,
} from './frame-eval.js';
import { DEFAULT_HISTORY_LIMITS, PastViews } from './past-views.js';
import type { Follower } from '../follower.js';
import type { Indexes } from '../indexes.js';

/** What a query names of its store and model. */
interface Target {
  readonly storeId: string;
  readonly modelId?: string | undefined;
}

export class PastQueries {
  constructor(
    private readonly storage: Storage,
    private readonly models: ModelCache,
    private readonly views: PastViews,
    private readonly walker: () => WalkerChecker,
    private readonly config: EngineConfig,
  ) {}

  async check(input: CheckInput, at: PastPoint): Promise<CheckResult> {
    const f = await this.frame(input, at, this.config.checkDeadlineMs);
    return { allowed: await checkOnFrame(f, this.walker(), input), modelId: f.model.id, atRevision: f.revision };
  }

  async batchCheck(input: BatchCheckInput, at: PastPoint): Promise<BatchCheckResult> {
    const f = await this.frame(input, at, this.config.checkDeadlineMs);
    const results = await batchCheckOnFrame(f, this.walker(), input.checks);
    return { results, modelId: f.model.id, atRevision: f.revision };
  }

  async listObjects(input: ListObjectsInput, at: PastPoint): Promise<ListObjectsResult> {
    const f = await this.frame(
      input,
      at,
      input.page ? this.config.listPageDeadlineMs : this.config.listObjectsDeadlineMs,
    );
    return { ...(await listObjectsOnFrame(f, this.config, input)), modelId: f.model.id, atRevision: f.revision };
  }

  /** The listing computed first, then streamed (a past view is not pinned for a slow consumer). */
  async *streamedListObjects(input: ListObjectsInput, at: PastPoint, signal?: AbortSignal): AsyncIterable<string> {
    const r = await this.listObjects(input, at);
    for (const o of r.objects) {
      if (signal?.aborted) return;
      yield o;
    }
  }

  async listUsers(input: ListUsersInput, at: PastPoint): Promise<ListUsersResult> {
    const f = await this.frame(
      input,
      at,
      input.page ? this.config.listPageDeadlineMs : this.config.listUsersDeadlineMs,
    );
    return { ...listUsersOnFrame(f, this.config, input), modelId: f.model.id, atRevision: f.revision };
  }

  async expand(input: ExpandInput, at: PastPoint): Promise<ExpandResult> {
    const f = await this.frame(input, at, this.config.checkDeadlineMs);
    return { tree: expandOnFrame(f, input), modelId: f.model.id, atRevision: f.revision };
  }

  forgetStore(storeId: string): void {
    this.views.forgetStore(storeId);
  }

  async explainCheck(input: CheckInput, at: PastPoint): Promise<CheckExplanation> {
    const f = await this.frame(input, at, this.config.checkDeadlineMs);
    return { ...explainOnFrame(f, this.config, input), modelId: f.model.id, atRevision: f.revision };
  }

  /**
   * The past view, the model and the deadline of one query. Waiting for the node's index to reach
   * the revision counts against the query's budget; building the view does not (it is bounded by
   * `--history-max-undo` instead), so the evaluation gets its whole budget once the view exists.
   */
  private async frame(q: Target, at: PastPoint, budgetMs: number): Promise<Frame & { readonly revision: number }> {
    const store = await this.storage.getStore(q.storeId);
    if (!store) throw fail.storeNotFound();
    const view = await this.views.view(store, at, Date.now() + budgetMs);
    const model = await this.modelAt(q.storeId, q.modelId, view.instant);
    const deadline = Date.now() + budgetMs;
    return { snapshot: view.snapshot, model, instant: view.instant, deadline, revision: view.revision };
  }

  /**
   * The named model, or the store's latest at `instant`: the greatest model id whose ULID time is
   * at or before it (a model written in the very millisecond of the revision counts as before).
   */
  private async modelAt(storeId: string, modelId: string | undefined, instant: number): Promise<CompiledModel> {
    if (modelId) return this.models.resolve(storeId, modelId);
    let after: string | undefined;
    do {
      const page = await this.storage.listModels(storeId, { pageSize: 100, after });
      const then = page.items.find((m) => ulidTime(m.id) <= instant);
      if (then) return this.models.resolve(storeId, then.id);
      after = page.next;
    } while (after);
    throw fail.latestModelNotFound(storeId);
  }
}

/** The past queries of a service, over its storage, models, indexes and walker. */
export function pastQueries(
  storage: Storage,
  models: ModelCache,
  indexes: Indexes,
  follower: Follower,
  walker: () => WalkerChecker,
  config: EngineConfig,
): PastQueries {
  const views = new PastViews(storage, indexes, follower, { ...DEFAULT_HISTORY_LIMITS, ...config.history });
  return new PastQueries(storage, models, views, walker, config);
}
