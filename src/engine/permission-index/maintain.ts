// The exact, per-tuple work of a permission index: which (object, relation) keys and which
// concrete users a changed tuple can affect, and the candidate users of one key. Candidates of a
// delete come from the snapshot before it (its paths exist only there), of a write from the one
// after it; they over-approximate, and the caller re-checks every candidate pair with the
// walker, so the result is exact however wide the candidates are.
// Example: deleting `group:eng#member@user:bob` under `doc#viewer: [group#member]` gives the keys
// {doc:1#viewer} (through `doc:1#viewer@group:eng#member`) and the users {user:bob}.

import type { TupleKey } from '../../domain/types.js';
import type { IndexSnapshot } from '../../index/store-index.js';
import type { CompiledModel } from '../../model/types.js';
import { listUserCandidates } from '../evaluation/list/list-users.js';
import type { IndexGraph } from './graph.js';

const typeOf = (object: string): string => object.slice(0, object.indexOf(':'));

/** `object#relation` keys of the indexed relations whose answer can depend on `t`'s node in `snap`. */
export function candidateKeys(graph: IndexGraph, snap: IndexSnapshot, t: TupleKey, out: Set<string>): void {
  const seen = new Set<string>();
  const objects: string[] = [t.object];
  const relations: string[] = [t.relation];
  const push = (object: string, relation: string): void => {
    const key = `${object}#${relation}`;
    if (seen.has(key)) return;
    seen.add(key);
    objects.push(object);
    relations.push(relation);
  };
  seen.add(`${t.object}#${t.relation}`);
  for (let i = 0; i < objects.length; i++) {
    const object = objects[i] as string;
    const relation = relations[i] as string;
    const node = `${typeOf(object)}#${relation}`;
    if (graph.indexed.has(node)) out.add(`${object}#${relation}`);
    for (const e of graph.reverse.get(node) ?? []) {
      if (e.kind === 'same') push(object, e.parent);
      else if (e.kind === 'userset')
        for (const x of snap.objects(e.parentType, e.parent, `${object}#${relation}`)) push(x.object, e.parent);
      else for (const x of snap.objects(e.parentType, e.tupleset, object)) push(x.object, e.parent);
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
  snap: IndexSnapshot,
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
  snap: IndexSnapshot,
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
