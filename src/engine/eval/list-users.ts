// ListUsers (semantics.md §6.3): expand `object#relation` forwards, as the reference does, to
// collect candidate users of the filter's form (objects `U:i`, the wildcard `U:*`, or usersets
// `U:i#S` including every implicit self membership), then keep the candidates Check accepts.
// Check settles intersection and exclusion exactly; in particular `U:*` is kept under a
// `but not` that excludes specific users (Check with subject `U:*` only sees literal wildcards).
//
// Strictness: any condition error met anywhere in the expansion fails (2000); every relation
// visited counts towards the depth limit, computed usersets included (2002); cycles contribute
// nothing; the deadline returns the users confirmed so far.
// Example: `doc:1#viewer@user:*`, `doc:1#blocked@user:bob`, `viewer: [user:*] but not blocked`
//   listUsers(ctx, {object:'doc:1', relation:'viewer', filter:{type:'user'}}, 1000) = [{wildcard:{type:'user'}}].

import { parseObject, parseUser } from '../../domain/tuple.js';
import { AppError, fail } from '../../errors.js';
import type { TupleEntry } from '../../index/types.js';
import type { Rewrite } from '../../model/types.js';
import type { ListedUser } from '../types.js';
import { Checker, TRUE } from './check.js';
import { RequestState, type EvalContext } from './context.js';
import { hasPossibleEdges } from './graph.js';

export interface ListUsersQuery {
  readonly object: string;
  readonly relation: string;
  readonly filter: { readonly type: string; readonly relation?: string | undefined };
}

/** Forward expansion collecting candidates; `path` gives per-branch cycle detection. */
class Expansion {
  readonly candidates = new Set<string>();
  private readonly path = new Set<string>();
  /** Subtrees expanded without meeting a cycle: key → height below them (path-independent). */
  private readonly done = new Map<string, number>();

  constructor(
    private readonly state: RequestState,
    private readonly filter: ListUsersQuery['filter'],
  ) {}

  /** Returns [height of the subtree, whether a cycle was met]. */
  node(object: string, relation: string, depth: number): [number, boolean] {
    if (depth >= this.state.ctx.resolveDepth) throw fail.tooComplex();
    const key = `${object}#${relation}`;
    if (this.path.has(key)) return [0, true];
    const h = this.done.get(key);
    if (h !== undefined && depth + h < this.state.ctx.resolveDepth) return [h, false];
    this.state.checkDeadline();
    const type = object.slice(0, object.indexOf(':'));
    if (type === this.filter.type && relation === this.filter.relation) this.candidates.add(key);
    const rel = this.state.ctx.model.types.get(type)?.relations.get(relation);
    if (!rel) return [0, false];
    this.path.add(key);
    try {
      const res = this.rewrite(object, relation, rel.rewrite, depth);
      if (!res[1]) this.done.set(key, res[0]);
      return res;
    } finally {
      this.path.delete(key);
    }
  }

  private rewrite(object: string, relation: string, rw: Rewrite, depth: number): [number, boolean] {
    switch (rw.kind) {
      case 'this':
        return this.direct(object, relation, depth);
      case 'computed':
        return this.child(this.node(object, rw.relation, depth + 1));
      case 'ttu':
        return this.ttu(object, rw.tupleset, rw.computed, depth);
      case 'union':
      case 'intersection':
        return this.all(rw.children.map((c) => () => this.rewrite(object, relation, c, depth)));
      case 'difference':
        return this.all([rw.base, rw.subtract].map((c) => () => this.rewrite(object, relation, c, depth)));
    }
  }

  private child([h, cycle]: [number, boolean]): [number, boolean] {
    return [h + 1, cycle];
  }

  private all(parts: (() => [number, boolean])[]): [number, boolean] {
    let height = 0;
    let cycle = false;
    for (const p of parts) {
      const [h, c] = p();
      height = Math.max(height, h);
      cycle ||= c;
    }
    return [height, cycle];
  }

  private usable(t: TupleEntry): boolean {
    const c = this.state.condition(t);
    if (c instanceof AppError) throw c;
    return c;
  }

  private direct(object: string, relation: string, depth: number): [number, boolean] {
    const parts: (() => [number, boolean])[] = [];
    for (const t of this.state.validUsers(object, relation)) {
      if (!this.usable(t)) continue;
      // Valid tuples carry well-formed users: `T:id`, `T:*` or `T:id#R` (split on the last `#`).
      const hash = t.user.lastIndexOf('#');
      if (hash !== -1) {
        parts.push(() => this.child(this.node(t.user.slice(0, hash), t.user.slice(hash + 1), depth + 1)));
      } else if (this.filter.relation === undefined && t.user.slice(0, t.user.indexOf(':')) === this.filter.type) {
        this.candidates.add(t.user);
      }
    }
    return this.all(parts);
  }

  private ttu(object: string, tupleset: string, computed: string, depth: number): [number, boolean] {
    const parts: (() => [number, boolean])[] = [];
    for (const t of this.state.validUsers(object, tupleset)) {
      if (!this.usable(t)) continue;
      parts.push(() => this.child(this.node(t.user, computed, depth + 1)));
    }
    return this.all(parts);
  }
}

/** A user string as ListUsers returns it. */
export function toListedUser(user: string): ListedUser {
  const u = parseUser(user);
  if (!u) throw new AppError('internal_error', `unexpected user '${user}'`);
  if (u.kind === 'wildcard') return { wildcard: { type: u.type } };
  if (u.kind === 'userset') return { userset: { type: u.type, id: u.id, relation: u.relation } };
  return { object: { type: u.type, id: u.id } };
}

/**
 * Users of the filter's form related to `q.object` by `q.relation`, de-duplicated, at most
 * `maxResults`. Throws 2000 on any condition error, 2002 on the depth limit (see file comment).
 */
export function listUsers(ctx: EvalContext, q: ListUsersQuery, maxResults: number): ListedUser[] {
  const type = parseObject(q.object)?.type ?? '';
  const self = type === q.filter.type && q.relation === q.filter.relation;
  if (!self && !hasPossibleEdges(ctx.model, type, q.relation, q.filter.type, q.filter.relation)) return [];
  const state = new RequestState(ctx);
  const exp = new Expansion(state, q.filter);
  try {
    exp.node(q.object, q.relation, 0);
  } catch (e) {
    if (!(e instanceof AppError && e.code === 'deadline_exceeded')) throw e;
  }
  const out: ListedUser[] = [];
  for (const user of exp.candidates) {
    if (out.length >= maxResults || state.expired()) break;
    const res = new Checker(state, user).eval(q.object, q.relation, 0);
    if (res instanceof AppError) throw res;
    if (res === TRUE) out.push(toListedUser(user));
  }
  return out;
}
