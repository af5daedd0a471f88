// ListUsers (docs/reference/semantics.md §6.3): expand `object#relation` forwards, as the reference does, to
// collect candidate users of the filter's form (objects `U:i`, the wildcard `U:*`, or usersets
// `U:i#S` including every implicit self membership), then keep the candidates Check accepts.
// Check settles intersection and exclusion exactly; in particular `U:*` is kept under a
// `but not` that excludes specific users (Check with subject `U:*` only sees literal wildcards).
// A plain `U:i` is listed only when a path grants it by name (`ReferenceChecker.listed`): one
// that only a typed wildcard grants is covered by the listed `U:*`; a subtract's users are never
// candidates (base users minus subtract users).
//
// Strictness: any condition error met anywhere in the expansion fails (2000); every relation
// visited counts towards the depth limit, computed usersets included (2002); cycles contribute
// nothing, and a cycle reached by the subtract of a difference (through userset tuples and
// computed usersets) empties that difference, its errors included, as the reference does; the
// deadline returns the users confirmed so far.
// Example: `doc:1#viewer@user:*`, `doc:1#blocked@user:bob`, `viewer: [user:*] but not blocked`
//   listUsers(ctx, {object:'doc:1', relation:'viewer', filter:{type:'user'}}, 1000) = [{wildcard:{type:'user'}}].

import { parseObject, parseUser, typeOf } from '../../../domain/tuple.js';
import { AppError, fail } from '../../../errors.js';
import type { TupleEntry } from '../../../index/types.js';
import type { CompiledModel, Rewrite } from '../../../model/types.js';
import type { ListedUser } from '../../contract.js';
import { ReferenceChecker, TRUE } from '../semantics/check.js';
import { RequestState, type EvalContext } from '../semantics/context.js';
import { hasPossibleEdges, relevantRelations, unionOnly } from '../semantics/graph.js';

export interface ListUsersQuery {
  readonly object: string;
  readonly relation: string;
  readonly filter: { readonly type: string; readonly relation?: string | undefined };
}

/**
 * What expanding one node or rewrite yields: candidate users, the height below it (for the memo),
 * whether any cycle was met (memo guard), the reference's cycle flag (`flag`, which only travels
 * through userset tuples and computed usersets and empties a difference whose subtract carries
 * it), whether the depth limit cut some branch below (`truncated`), and the first evaluation
 * error (condition or depth), which fails the request unless such a difference swallows it.
 */
interface Found {
  readonly users: Set<string>;
  height: number;
  cycle: boolean;
  flag: boolean;
  truncated: boolean;
  error: AppError | undefined;
}

const found = (): Found => ({
  users: new Set(),
  height: 0,
  cycle: false,
  flag: false,
  truncated: false,
  error: undefined,
});

/** Adds `child` (one hop below when `hop`) into `acc`; the cycle flag is kept only if `keepFlag`. */
function merge(acc: Found, child: Found, hop: boolean, keepFlag: boolean): void {
  for (const u of child.users) acc.users.add(u);
  acc.height = Math.max(acc.height, child.height + (hop ? 1 : 0));
  acc.cycle ||= child.cycle;
  acc.truncated ||= child.truncated;
  if (keepFlag) acc.flag ||= child.flag;
  acc.error ??= child.error;
}

/**
 * Forward expansion as the reference does it; `path` gives per-branch cycle detection. An error
 * met while no subtract is being expanded can never be swallowed, so it is thrown at once: the
 * request fails with it, and the walk stops there instead of expanding what cannot matter.
 */
class Expansion {
  private readonly path = new Set<string>();
  /**
   * Subtrees expanded completely (no cycle met, no branch cut by the depth limit) are the same
   * on any path and at any depth where they still fit under the limit: key → their result. A
   * cut subtree is not kept: higher up, or on another path, the cut branch may reach further or
   * meet a cycle instead (one that empties a difference and swallows the error).
   */
  private readonly done = new Map<string, Found>();
  /** How many subtracts are being expanded around the current node (0: errors are final). */
  private subtracts = 0;

  constructor(
    private readonly state: RequestState,
    private readonly filter: ListUsersQuery['filter'],
  ) {}

  node(object: string, relation: string, depth: number): Found {
    if (depth >= this.state.ctx.resolveDepth)
      return { ...found(), truncated: true, error: this.met(fail.tooComplex()) };
    const key = `${object}#${relation}`;
    if (this.path.has(key)) return { ...found(), cycle: true, flag: true };
    const hit = this.done.get(key);
    if (hit && depth + hit.height < this.state.ctx.resolveDepth) return hit;
    this.state.checkDeadline();
    const out = found();
    const type = object.slice(0, object.indexOf(':'));
    if (type === this.filter.type && relation === this.filter.relation) out.users.add(key);
    const rel = this.state.ctx.model.types.get(type)?.relations.get(relation);
    if (!rel) return out;
    this.path.add(key);
    try {
      merge(out, this.rewrite(object, relation, rel.rewrite, depth), false, true);
      if (!out.cycle && !out.truncated) this.done.set(key, out);
      return out;
    } finally {
      this.path.delete(key);
    }
  }

  /** An evaluation error: thrown when no subtract around could swallow it, else returned. */
  private met(e: AppError): AppError {
    if (this.subtracts === 0) throw e;
    return e;
  }

  private rewrite(object: string, relation: string, rw: Rewrite, depth: number): Found {
    const out = found();
    switch (rw.kind) {
      case 'this':
        this.direct(object, relation, depth, out);
        break;
      case 'computed':
        merge(out, this.node(object, rw.relation, depth + 1), true, true);
        break;
      case 'ttu':
        this.ttu(object, rw.tupleset, rw.computed, depth, out);
        break;
      case 'union':
      case 'intersection':
        for (const c of rw.children) merge(out, this.rewrite(object, relation, c, depth), false, false);
        break;
      case 'difference': {
        // The subtract first, as the reference does: only its cycle flag can swallow errors.
        this.subtracts++;
        let sub: Found;
        try {
          sub = this.rewrite(object, relation, rw.subtract, depth);
        } finally {
          this.subtracts--;
        }
        // §6.3: a cycle flag in the subtract empties the difference, errors included.
        if (sub.flag) return { ...found(), height: sub.height, cycle: true };
        if (sub.error) this.met(sub.error);
        merge(out, this.rewrite(object, relation, rw.base, depth), false, false);
        // The subtract's bookkeeping (height, cycles, cuts, errors), never its users: a user the
        // subtract names is not granted by it (§6.3: base users minus subtract users).
        merge(out, { ...sub, users: new Set() }, false, false);
      }
    }
    return out;
  }

  /** The tuple's condition; an evaluation error is recorded and the tuple skipped. */
  private usable(t: TupleEntry, out: Found): boolean {
    const c = this.state.condition(t);
    if (c instanceof AppError) {
      out.error ??= this.met(c);
      return false;
    }
    return c;
  }

  private direct(object: string, relation: string, depth: number, out: Found): void {
    for (const t of this.state.validUsers(object, relation)) {
      if (!this.usable(t, out)) continue;
      // Valid tuples carry well-formed users: `T:id`, `T:*` or `T:id#R` (split on the last `#`).
      const hash = t.user.lastIndexOf('#');
      if (hash !== -1) merge(out, this.node(t.user.slice(0, hash), t.user.slice(hash + 1), depth + 1), true, true);
      else if (this.filter.relation === undefined && t.user.slice(0, t.user.indexOf(':')) === this.filter.type)
        out.users.add(t.user);
    }
  }

  private ttu(object: string, tupleset: string, computed: string, depth: number, out: Found): void {
    for (const t of this.state.validUsers(object, tupleset)) {
      if (this.usable(t, out)) merge(out, this.node(t.user, computed, depth + 1), true, false);
    }
  }
}

/** The expansion's candidates (undefined when the deadline passed); throws its error. */
function expand(state: RequestState, q: ListUsersQuery): Set<string> | undefined {
  const type = parseObject(q.object)?.type ?? '';
  const self = type === q.filter.type && q.relation === q.filter.relation;
  if (!self && !hasPossibleEdges(state.ctx.model, type, q.relation, q.filter.type, q.filter.relation)) return new Set();
  let root: Found;
  try {
    root = new Expansion(state, q.filter).node(q.object, q.relation, 0);
  } catch (e) {
    if (e instanceof AppError && e.code === 'deadline_exceeded') return undefined;
    throw e;
  }
  if (root.error) throw root.error;
  return root.users;
}

/**
 * ListUsers' candidates before confirmation: a superset of the users ListUsers returns (every
 * user a Check could accept through the tuples, as strings), for callers that confirm each one
 * with the walker themselves (the permission indexes). Throws what ListUsers throws.
 */
export function listUserCandidates(ctx: EvalContext, q: ListUsersQuery): ReadonlySet<string> {
  return expand(new RequestState(ctx), q) ?? new Set();
}

/** Whether some relation of the model accepts the typed wildcard `type:*`. */
export function admitsWildcard(model: CompiledModel, type: string): boolean {
  let types = wildcardTypes.get(model);
  if (types === undefined) {
    const found = new Set<string>();
    for (const t of model.types.values())
      for (const r of t.relations.values()) for (const d of r.directTypes) if (d.wildcard) found.add(d.type);
    wildcardTypes.set(model, found);
    types = found;
  }
  return types.has(type);
}

/** Per compiled model (immutable): the user types some relation accepts as `type:*`. */
const wildcardTypes = new WeakMap<CompiledModel, ReadonlySet<string>>();

/**
 * For a plain object `user` that Check accepts: whether ListUsers lists it, i.e. whether a path
 * names it rather than only a typed wildcard (`ReferenceChecker.listed`). Callers that confirm
 * candidates with the walker (the permission indexes) ask this when `admitsWildcard`.
 */
export function listedByName(ctx: EvalContext, object: string, relation: string, user: string): boolean {
  return new ReferenceChecker(new RequestState(ctx), user).listed(object, relation);
}

/** A user string as ListUsers returns it. */
export function toListedUser(user: string): ListedUser {
  const u = parseUser(user);
  if (!u) throw new AppError('internal_error', `unexpected user '${user}'`);
  if (u.kind === 'wildcard') return { wildcard: { type: u.type } };
  if (u.kind === 'userset') return { userset: { type: u.type, id: u.id, relation: u.relation } };
  return { object: { type: u.type, id: u.id } };
}

/** How a ListUsers request's view was built. */
export interface ListUsersOptions {
  /**
   * The view holds each tuple key at most once (a store snapshot without contextual tuples).
   * Then, where every relation flowing into the query is a plain union (`unionOnly`), the
   * expansion's candidates are the answer and none is confirmed: each was reached along a simple
   * path of valid, met tuples within the depth limit, which Check follows to TRUE, and a plain user
   * reached that way is named by its tuple (so the typed-wildcard rule keeps it too). Otherwise
   * every candidate is confirmed by a Check of its own, whose direct step reads the object's
   * whole tuple list: the expansion alone is linear in the tuples read, confirming is not.
   */
  readonly uniqueKeys?: boolean | undefined;
}

/**
 * Users of the filter's form related to `q.object` by `q.relation`, de-duplicated, at most
 * `maxResults`, as strings in `userKey` form (`user:anne`, `user:*`, `team:x#member`), in the
 * expansion's order. Throws 2000 on any condition error, 2002 on the depth limit (see file comment).
 */
export function listUserKeys(
  ctx: EvalContext,
  q: ListUsersQuery,
  maxResults: number,
  opts: ListUsersOptions = {},
): string[] {
  const state = new RequestState(ctx);
  const candidates = expand(state, q);
  if (!candidates) return [];
  const out: string[] = [];
  if (opts.uniqueKeys === true && unionOnly(ctx.model, relevantRelations(ctx.model, typeOf(q.object), q.relation))) {
    for (const user of candidates) {
      if (out.length >= maxResults) break;
      out.push(user);
    }
    return out;
  }
  // A plain object is listed only when a path names it (`ReferenceChecker.listed`); that can
  // differ from Check only where the model lets a typed wildcard of the filter's type in.
  const wildcards = q.filter.relation === undefined && admitsWildcard(ctx.model, q.filter.type);
  try {
    for (const user of candidates) {
      if (out.length >= maxResults || state.expired()) break;
      // An error here can only come from a region the expansion was allowed to swallow.
      const checker = new ReferenceChecker(state, user);
      const res = checker.eval(q.object, q.relation, 0);
      if (res === TRUE && (!wildcards || user.endsWith(':*') || checker.listed(q.object, q.relation))) out.push(user);
    }
  } catch (e) {
    if (!(e instanceof AppError && e.code === 'deadline_exceeded')) throw e;
  }
  return out;
}

/** `listUserKeys` as ListUsers returns them. */
export function listUsers(
  ctx: EvalContext,
  q: ListUsersQuery,
  maxResults: number,
  opts: ListUsersOptions = {},
): ListedUser[] {
  return listUserKeys(ctx, q, maxResults, opts).map(toListedUser);
}
