// How a permission index confirms a candidate pair: Check at the index's model, at instant 0 (the
// index follows revisions, not the clock: an expiring tuple counts until the sweeper deletes it),
// then ListUsers' set rule (a user that only a typed wildcard grants belongs to `type:*`). On the
// latest snapshot the walker answers; on a view at an older revision (a lagging index reads the
// latest snapshot corrected by its backlog) the reference evaluator does, which reads any TupleView.
// An evaluation error is thrown: it fails the index.
// Example: `doc:1#viewer@user:*` only: `confirm(…, 'doc:1', 'viewer', 'user:anne')` is false.

import { AppError } from '../../errors.js';
import type { IndexSnapshot } from '../../index/store-index.js';
import type { TupleView } from '../../index/types.js';
import type { CompiledModel } from '../../model/types.js';
import { listedByName } from '../evaluation/list/list-users.js';
import { ReferenceChecker, TRUE } from '../evaluation/semantics/check.js';
import { RequestState } from '../evaluation/semantics/context.js';
import { checkStatus } from '../evaluation/walker/checker.js';
import type { RevisionView } from './backlog.js';

export interface Confirmation {
  readonly model: CompiledModel;
  readonly resolveDepth: number;
  /** User types whose typed wildcard some relation accepts (ListUsers' rule is asked for them). */
  readonly wildcardTypes: ReadonlySet<string>;
}

/** Whether ListUsers lists `user`, Check having accepted it. */
function listed(c: Confirmation, view: TupleView, object: string, relation: string, user: string): boolean {
  if (user.endsWith(':*') || !c.wildcardTypes.has(user.slice(0, user.indexOf(':')))) return true;
  return listedByName(
    { model: c.model, view, resolveDepth: c.resolveDepth, deadline: Infinity },
    object,
    relation,
    user,
  );
}

/** The pair on the walker over `snap` (the build and a current index). */
export function confirmOnWalker(
  c: Confirmation,
  snap: IndexSnapshot,
  object: string,
  relation: string,
  user: string,
): boolean {
  const outcome = checkStatus(snap, c.model, { object, relation, user, contextualTuples: [] }, c.resolveDepth, 0);
  if ('error' in outcome) throw outcome.error;
  return outcome.allowed && listed(c, snap, object, relation, user);
}

/** The pair at the view's revision: the walker when the snapshot is at it, else the reference evaluator. */
export function confirmAt(
  c: Confirmation,
  view: RevisionView,
  object: string,
  relation: string,
  user: string,
): boolean {
  if (view.exact) return confirmOnWalker(c, view.snap, object, relation, user);
  const state = new RequestState({ model: c.model, view, resolveDepth: c.resolveDepth, deadline: Infinity });
  const out = new ReferenceChecker(state, user).eval(object, relation, 0);
  if (out instanceof AppError) throw out;
  return out === TRUE && listed(c, view, object, relation, user);
}
