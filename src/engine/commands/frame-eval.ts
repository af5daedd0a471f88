// The queries evaluated on one frame — a snapshot, a model and an instant — with the same
// evaluators and the same validation codes as the live queries (./check.ts and the other command files): Check and
// BatchCheck on the walker, ListObjects on the indexed walk, ListUsers, Expand and explain on
// the TypeScript evaluators. Queries at a past revision (./past-queries.ts) run them on a past
// view; the differential test runs them on a fresh index of the same revision. Nothing here is
// cached: a frame is not the live snapshot, so the result and listing caches do not apply.

import { AppError, toAppError } from '../../errors.js';
import type { IndexSnapshot } from '../../index/store-index.js';
import { validateUserFilter } from '../../model/query-validation.js';
import type { CompiledModel } from '../../model/types.js';
import { expand } from '../evaluation/list/expand.js';
import { listUsers } from '../evaluation/list/list-users.js';
import { openObjectWalk } from '../evaluation/list/open.js';
import { collectAll, listingTimeout, pageOf, userKey, userOfKey } from '../evaluation/list/pages.js';
import { ReferenceChecker, TRUE } from '../evaluation/semantics/check.js';
import { type EvalContext, RequestState } from '../evaluation/semantics/context.js';
import { Trace } from '../evaluation/semantics/trace.js';
import { overlayView } from '../evaluation/semantics/view.js';
import {
  checkItem,
  validateContextualTuples,
  validateObjectRelation,
  validateRequestContext,
  validateSubject,
} from './validate-request.js';
import type {
  BatchCheckItem,
  BatchCheckOutcome,
  CheckExplanation,
  CheckInput,
  EngineConfig,
  ExpandInput,
  ExpandResult,
  ListObjectsInput,
  ListObjectsResult,
  ListUsersInput,
  ListUsersResult,
  QueryBase,
} from '../contract.js';
import type { CheckItem, WalkerChecker } from '../evaluation/walker/checker.js';

/** One query's evaluation inputs. */
export interface Frame {
  readonly snapshot: IndexSnapshot;
  readonly model: CompiledModel;
  /** Tuple expiry is judged at this instant (ms). */
  readonly instant: number;
  /** `Date.now()` ms past which the evaluation stops (D8). */
  readonly deadline: number;
}

export async function checkOnFrame(f: Frame, walker: WalkerChecker, input: CheckInput): Promise<boolean> {
  const item = checkItem(f.model, input.tupleKey, input);
  const [outcome] = await walker.check(f.snapshot, f.model, [item], f.deadline, f.instant);
  if (!outcome) throw new AppError('internal_error', 'the walker returned no outcome');
  if ('error' in outcome) throw outcome.error;
  return outcome.allowed;
}

/** Outcomes by correlation id, in the caller's order; an invalid item answers its error. */
export async function batchCheckOnFrame(
  f: Frame,
  walker: WalkerChecker,
  checks: readonly BatchCheckItem[],
): Promise<Map<string, BatchCheckOutcome>> {
  const slots: (BatchCheckOutcome | number)[] = [];
  const valid: CheckItem[] = [];
  for (const c of checks) {
    try {
      valid.push(checkItem(f.model, c.tupleKey, c));
      slots.push(valid.length - 1);
    } catch (err) {
      slots.push({ error: toAppError(err) });
    }
  }
  const outcomes = valid.length > 0 ? await walker.check(f.snapshot, f.model, valid, f.deadline, f.instant) : [];
  const results = new Map<string, BatchCheckOutcome>();
  checks.forEach((c, i) => {
    const slot = slots[i] as BatchCheckOutcome | number;
    const outcome = typeof slot === 'number' ? outcomes[slot] : slot;
    if (outcome) results.set(c.correlationId, outcome);
  });
  return results;
}

/** Unpaged: at most `listObjectsMaxResults`, unordered; paged: the sorted complete listing's page. */
export async function listObjectsOnFrame(
  f: Frame,
  config: EngineConfig,
  input: ListObjectsInput,
  signal?: AbortSignal,
): Promise<Omit<ListObjectsResult, 'modelId'>> {
  validateRequestContext(input.context);
  validateContextualTuples(f.model, input.contextualTuples, 'listObjects');
  validateObjectRelation(f.model, input.type, input.relation, 'listObjects');
  validateSubject(f.model, input.user);
  const outcome = { stopped: false };
  const walk = openObjectWalk(
    {
      snapshot: f.snapshot,
      model: f.model,
      contextual: input.contextualTuples,
      context: input.context,
      resolveDepth: config.resolveDepth,
      deadline: f.deadline,
      outcome,
      now: f.instant,
    },
    { type: input.type, relation: input.relation, user: input.user },
  );
  if (!input.page) {
    const objects: string[] = [];
    for (const o of walk) {
      objects.push(o);
      if (objects.length >= config.listObjectsMaxResults) break;
    }
    return { objects };
  }
  f.snapshot.pin();
  try {
    const keys = await collectAll(walk, outcome, signal);
    keys.sort();
    const page = pageOf(keys, input.page);
    return { objects: page.items, next: page.next };
  } finally {
    f.snapshot.unpin();
  }
}

export function listUsersOnFrame(
  f: Frame,
  config: EngineConfig,
  input: ListUsersInput,
): Omit<ListUsersResult, 'modelId'> {
  validateRequestContext(input.context);
  validateContextualTuples(f.model, input.contextualTuples, 'listUsers');
  const filter = input.userFilters[0];
  if (!filter || input.userFilters.length !== 1)
    throw new AppError(
      'validation_error',
      'invalid ListUsersRequest.UserFilters: value must contain exactly 1 item(s)',
    );
  validateUserFilter(f.model, filter);
  validateObjectRelation(f.model, input.object.type, input.relation, 'listUsers');
  const q = {
    object: `${input.object.type}:${input.object.id}`,
    relation: input.relation,
    filter: { type: filter.type, relation: filter.relation || undefined },
  };
  const ctx = evalContext(f, config, input);
  if (!input.page) return { users: listUsers(ctx, q, config.listUsersMaxResults) };
  const users = listUsers(ctx, q, Number.POSITIVE_INFINITY);
  if (Date.now() > f.deadline) throw listingTimeout();
  const page = pageOf(users.map(userKey).sort(), input.page);
  return { users: page.items.map(userOfKey), next: page.next };
}

export function expandOnFrame(f: Frame, input: ExpandInput): ExpandResult['tree'] {
  validateContextualTuples(f.model, input.contextualTuples, 'expand');
  const colon = input.object.indexOf(':');
  const type = colon === -1 ? input.object : input.object.slice(0, colon);
  validateObjectRelation(f.model, type, input.relation, 'expand');
  const view = overlayView(f.snapshot.at(f.instant), input.contextualTuples);
  return { root: expand(f.model, view, input.object, input.relation) };
}

/** Check on the reference evaluator with its trace (as Latch.explainCheck). */
export function explainOnFrame(f: Frame, config: EngineConfig, input: CheckInput): Omit<CheckExplanation, 'modelId'> {
  const k = input.tupleKey;
  checkItem(f.model, k, input);
  const trace = new Trace();
  const state = new RequestState(evalContext(f, config, input));
  const out = new ReferenceChecker(state, k.user, trace).eval(k.object, k.relation, 0);
  const tree = trace.root.children?.[0] ?? trace.root;
  return { allowed: out === TRUE, tree, truncated: trace.dropped };
}

function evalContext(f: Frame, config: EngineConfig, input: QueryBase): EvalContext & { readonly now: number } {
  return {
    model: f.model,
    view: overlayView(f.snapshot.at(f.instant), input.contextualTuples),
    context: input.context,
    resolveDepth: config.resolveDepth,
    deadline: f.deadline,
    now: f.instant,
  };
}
