// The exact, per-tuple work of a permission index: which (object, relation) keys and which
// concrete users a changed tuple can affect, and the candidate users of one key. Candidates of a
// delete come from the snapshot before it (its paths exist only there), of a write from the one
// after it; they over-approximate, and the caller re-checks every candidate pair with the
// walker, so the result is exact however wide the candidates are.
// Example: deleting `group:eng#member@user:bob` under `doc#viewer: [group#member]` gives the keys
// {doc:1#viewer} (through `doc:1#viewer@group:eng#member`) and the users {user:bob}.

import type { TupleKey } from '../../domain/types.js';
import type { TupleView } from '../../index/types.js';
import type { CompiledModel } from '../../model/types.js';
import { listUserCandidates } from '../evaluation/list/list-users.js';
import { isValidAtReadTime } from '../evaluation/semantics/validity.js';
import type { IndexGraph } from './graph.js';

const typeOf = (object: string): string => object.slice(0, object.indexOf(':'));

/**
 * `object#relation` keys of the indexed relations whose answer can depend on `t`'s node in `snap`.
 * Only tuples valid under the model at read time are followed (Check ignores the others).
 * `grants`: only the edges that pass `t`'s user up (no tupleset edge), so in a model without
 * `but not` and `and` every key found grants `t.user` (or its members) in `snap`.
 * `touched`: receives every `object#relation` node whose users can depend on `t` in `snap` (the
 * userset closures `t` can change), the indexed ones and the ones between: 2 when a granting path
 * reaches it, 1 when only a tupleset edge does (with `grants`).
 */
export function candidateKeys(
  graph: IndexGraph,
  model: CompiledModel,
  snap: TupleView,
  t: TupleKey,
  out: Set<string>,
  grants = false,
  touched?: Map<string, number>,
): void {
  // Key → 2 once reached on a granting path, 1 while reached only through a tupleset edge
  // (walked for `touched` alone; reaching it later on a granting path walks it again). Each queued
  // node: its object, its key (`object#relation`) and its `type#relation`.
  const seen = new Map<string, number>();
  const objects: string[] = [t.object];
  const keys: string[] = [`${t.object}#${t.relation}`];
  const nodes: string[] = [`${typeOf(t.object)}#${t.relation}`];
  const granting: boolean[] = [true];
  const push = (object: string, relation: string, node: string, g: boolean): void => {
    const key = `${object}#${relation}`;
    const level = g ? 2 : 1;
    if ((seen.get(key) ?? 0) >= level) return;
    seen.set(key, level);
    objects.push(object);
    keys.push(key);
    nodes.push(node);
    granting.push(g);
  };
  seen.set(keys[0] as string, 2);
  for (let i = 0; i < objects.length; i++) {
    const object = objects[i] as string;
    const key = keys[i] as string;
    const node = nodes[i] as string;
    const g = granting[i] as boolean;
    if (g && graph.indexed.has(node)) out.add(key);
    touched?.set(key, g ? 2 : 1);
    const edges = graph.reverse.get(node);
    if (edges === undefined) continue;
    for (const e of edges) {
      if (e.kind === 'same') {
        if (!(grants && e.tupleset)) push(object, e.parent, e.node, g);
        else if (touched) push(object, e.parent, e.node, false);
      } else if (e.kind === 'userset') {
        for (const x of snap.objects(e.parentType, e.parent, key))
          if (isValidAtReadTime(model, x)) push(x.object, e.parent, e.node, g);
      } else
        for (const x of snap.objects(e.parentType, e.tupleset, object))
          if (isValidAtReadTime(model, x)) push(x.object, e.parent, e.node, g);
    }
  }
}

/**
 * The candidate concrete users (objects and `type:*`) of `object#relation` in `snap`: ListUsers'
 * forward expansion without its confirmation (the caller confirms each with the walker).
 */
export function usersOf(
  graph: IndexGraph,
  model: CompiledModel,
  snap: TupleView,
  object: string,
  relation: string,
  out: Set<string>,
): void {
  const ctx = { model, view: snap, resolveDepth: 25, deadline: Infinity };
  for (const type of graph.userTypes)
    for (const u of listUserCandidates(ctx, { object, relation, filter: { type } })) out.add(u);
}

/** The concrete users whose answers `t` can change: its user expanded to its members in `snap`. */
export function candidateUsers(
  graph: IndexGraph,
  model: CompiledModel,
  snap: TupleView,
  t: TupleKey,
  out: Set<string>,
): void {
  const hash = t.user.indexOf('#');
  if (hash !== -1) {
    usersOf(graph, model, snap, t.user.slice(0, hash), t.user.slice(hash + 1), out);
    return;
  }
  const userType = typeOf(t.user);
  if (graph.userTypes.includes(userType)) out.add(t.user);
  // A tupleset tuple: the users of the computed relations read on its object.
  for (const computed of graph.ttuComputed.get(`${typeOf(t.object)}#${t.relation}`) ?? []) {
    if (model.types.get(userType)?.relations.has(computed)) usersOf(graph, model, snap, t.user, computed, out);
  }
}
