// ListObjects / StreamedListObjects (semantics.md §6.1-6.2): walk backwards from the subject
// through the model's reverse edges to collect candidate objects, then confirm every candidate
// with Check (which settles `and` / `but not` and masks nothing the walk did not see).
//
// Error strictness: a condition error on any tuple the walk touches, or in a confirming Check,
// fails the request with 2000 unless `maxResults` objects were collected; every hop of the walk
// counts towards the depth limit (2002, immediately); the deadline ends the walk without error.
// Example: `doc:1#viewer@group:eng#member`, `group:eng#member@user:anne`, `viewer: [group#member]`
//   listObjects(ctx, {type:'doc', relation:'viewer', user:'user:anne'}, 1000) = ['doc:1'].

import { parseUser, typeOf } from '../../src/domain/tuple.js';
import { AppError, fail } from '../../src/errors.js';
import type { TupleEntry } from '../../src/index/types.js';
import { confirm, ReferenceChecker } from '../../src/engine/evaluation/semantics/check.js';
import { RequestState, type EvalContext } from '../../src/engine/evaluation/semantics/context.js';
import { relevantRelations, reverseGraph, type ReverseGraph } from '../../src/engine/evaluation/semantics/graph.js';

export interface ListObjectsQuery {
  readonly type: string;
  readonly relation: string;
  readonly user: string;
}

interface Node {
  readonly object: string;
  readonly relation: string;
  readonly depth: number;
}

class ReverseWalk {
  private readonly graph: ReverseGraph;
  private readonly relevant: Set<string>;
  private readonly seen = new Set<string>();
  readonly queue: Node[] = [];
  error: AppError | undefined;

  /** Only relations that can flow into `type#relation` are walked (no stray tuple reads). */
  constructor(
    private readonly state: RequestState,
    type: string,
    relation: string,
  ) {
    this.graph = reverseGraph(state.ctx.model);
    this.relevant = relevantRelations(state.ctx.model, type, relation);
  }

  /** Seed the walk with the subject's direct tuples (or, for a userset subject, itself). */
  start(user: string): void {
    const parsed = parseUser(user);
    if (!parsed) throw fail.validation(`invalid user '${user}'`);
    if (parsed.kind === 'userset') {
      this.enqueue(`${parsed.type}:${parsed.id}`, parsed.relation, 0);
      return;
    }
    if (parsed.kind === 'object') this.follow(this.graph.direct.get(parsed.type), user, 0);
    this.follow(this.graph.direct.get(`${parsed.type}:*`), `${parsed.type}:*`, 0);
  }

  /** From "the subject is in object#relation": every relation that includes that userset. */
  expand(n: Node): void {
    const type = typeOf(n.object);
    this.follow(this.graph.direct.get(`${type}#${n.relation}`), `${n.object}#${n.relation}`, n.depth);
    for (const r of this.graph.computed.get(`${type}#${n.relation}`) ?? []) {
      if (this.relevant.has(`${r.type}#${r.relation}`)) this.enqueue(n.object, r.relation, n.depth + 1);
    }
    for (const e of this.graph.ttu.get(`${type}#${n.relation}`) ?? []) {
      if (!this.relevant.has(`${e.type}#${e.relation}`)) continue;
      for (const t of this.state.ctx.view.objects(e.type, e.tupleset, n.object)) {
        if (this.usable(t)) this.enqueue(t.object, e.relation, n.depth + 1);
      }
    }
  }

  private follow(refs: readonly { type: string; relation: string }[] | undefined, user: string, depth: number): void {
    for (const r of refs ?? []) {
      if (!this.relevant.has(`${r.type}#${r.relation}`)) continue;
      for (const t of this.state.ctx.view.objects(r.type, r.relation, user)) {
        if (this.usable(t)) this.enqueue(t.object, r.relation, depth + 1);
      }
    }
  }

  /** Valid and condition met; a condition error is remembered and the tuple skipped. */
  private usable(t: TupleEntry): boolean {
    if (!this.state.isValid(t)) return false;
    const c = this.state.condition(t);
    if (c instanceof AppError) {
      this.error ??= c;
      return false;
    }
    return c;
  }

  private enqueue(object: string, relation: string, depth: number): void {
    const key = `${object}#${relation}`;
    if (this.seen.has(key)) return;
    if (depth >= this.state.ctx.resolveDepth) throw fail.tooComplex();
    this.seen.add(key);
    this.queue.push({ object, relation, depth });
  }
}

/**
 * Objects of `q.type` for which Check(q.user, q.relation, object) is TRUE, at most `maxResults`
 * (use Infinity for the streamed API), without duplicates. `onObject` sees each object as soon as
 * it is confirmed. Throws 2002 on the depth limit, 2000 on condition errors (see file comment).
 */
export function listObjects(
  ctx: EvalContext,
  q: ListObjectsQuery,
  maxResults: number,
  onObject?: (o: string) => void,
): string[] {
  const state = new RequestState(ctx);
  const walk = new ReverseWalk(state, q.type, q.relation);
  const checker = new ReferenceChecker(state, q.user);
  const results: string[] = [];
  let error: AppError | undefined;
  walk.start(q.user);
  for (let i = 0; i < walk.queue.length && results.length < maxResults; i++) {
    if (state.expired()) return results;
    const n = walk.queue[i] as { object: string; relation: string; depth: number };
    if (n.relation === q.relation && typeOf(n.object) === q.type) {
      const out = confirm(checker, n.object, q.relation);
      if (out === 'deadline') return results;
      if (out === true) {
        results.push(n.object);
        onObject?.(n.object);
      } else if (out instanceof AppError) error ??= out;
    }
    walk.expand(n);
  }
  error ??= walk.error;
  if (error && results.length < maxResults) throw error;
  return results;
}
