// What a permission index needs to know of its model, computed once per index: which
// (type, relation) nodes its relations can depend on (forward reachability through the rewrites),
// the reverse edges that lead from a changed tuple's node back up to the indexed relations, and
// the concrete user types a relation can resolve to. Also the creation rule: a relation whose
// answer can depend on a condition is refused, naming the path that reaches the condition.
// Example: `doc#viewer: [group#member] but not blocked`, `group#member: [user]` reaches
// {doc#viewer, group#member, doc#blocked}; a change of `group:eng#member` walks back through
// `doc:*#viewer@group:eng#member` tuples to the documents that can change.

import { AppError } from '../../errors.js';
import type { CompiledModel, Rewrite } from '../../model/types.js';
import type { IndexedRelation } from '../../storage/types.js';

/** How a parent node depends on a child node `(type, relation)` of the reverse walk. */
export type ReverseEdge = (
  | /**
     * The same object's relation `parent` (computed userset, or the tupleset of a TTU: `tupleset`,
     * which leads to the users of another object, not to the tuple's user).
     */
    { readonly kind: 'same'; readonly parent: string; readonly tupleset?: true }
    /** Objects `parentType:y` with a tuple `parentType:y#parent@child-object#child-relation`. */
  | { readonly kind: 'userset'; readonly parentType: string; readonly parent: string }
  /** Objects `parentType:y` with a tuple `parentType:y#tupleset@child-object` (a TTU of `parent`). */
  | { readonly kind: 'ttu'; readonly parentType: string; readonly parent: string; readonly tupleset: string }
) & {
  /** The parent's `type#relation` (the walk's next node, built once here). */
  readonly node: string;
};

export interface IndexGraph {
  /** `type#relation` of every node the indexed relations can depend on (themselves included). */
  readonly reach: ReadonlySet<string>;
  /** Child `type#relation` → the edges to the nodes depending on it (only nodes in `reach`). */
  readonly reverse: ReadonlyMap<string, readonly ReverseEdge[]>;
  /** `type#relation` of the indexed relations. */
  readonly indexed: ReadonlySet<string>;
  /** Concrete user types the indexed relations can resolve to (ListUsers filters). */
  readonly userTypes: readonly string[];
  /** TTUs by tupleset: `type#tupleset` → the computed relations read on the tupleset's objects. */
  readonly ttuComputed: ReadonlyMap<string, readonly string[]>;
  /**
   * A `but not` is reachable. Check empties a difference whose subtract meets a cycle of userset
   * tuples, for every user: a userset tuple can then change users that are not its members.
   */
  readonly hasDifference: boolean;
  /**
   * No `but not` and no `and` is reachable: every path the candidates follow grants, so a
   * write's candidate pairs are granted after it without a Check (only deletes are re-checked).
   */
  readonly monotone: boolean;
}

function children(r: Rewrite): readonly Rewrite[] {
  if (r.kind === 'union' || r.kind === 'intersection') return r.children;
  if (r.kind === 'difference') return [r.base, r.subtract];
  return [];
}

function leaves(r: Rewrite, out: Rewrite[] = []): Rewrite[] {
  if (r.kind === 'this' || r.kind === 'computed' || r.kind === 'ttu') out.push(r);
  for (const c of children(r)) leaves(c, out);
  return out;
}

function add<K, V>(m: Map<K, V[]>, k: K, v: V): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

/**
 * The graph of `relations` under `model`. Throws 400 validation_error for an unknown type or
 * relation, and for a relation that can reach a conditioned type restriction (the message names
 * the path, e.g. `doc#viewer → group#member → [user with in_office]`).
 */
export function indexGraph(model: CompiledModel, relations: readonly IndexedRelation[]): IndexGraph {
  const reach = new Set<string>();
  const parentOf = new Map<string, string>();
  const userTypes = new Set<string>();
  const ttuComputed = new Map<string, string[]>();
  const pathTo = (node: string): string => {
    const path = [node];
    for (let p = parentOf.get(node); p !== undefined; p = parentOf.get(p)) path.unshift(p);
    return path.join(' → ');
  };
  const stack: string[] = [];
  for (const r of relations) {
    const node = `${r.object_type}#${r.relation}`;
    if (!model.types.get(r.object_type)?.relations.has(r.relation)) {
      throw new AppError(
        'validation_error',
        `relation '${r.relation}' not found on type '${r.object_type}' in model ${model.id}`,
      );
    }
    if (!reach.has(node)) stack.push(node);
    reach.add(node);
  }
  const visit = (from: string, node: string): void => {
    if (reach.has(node)) return;
    reach.add(node);
    parentOf.set(node, from);
    stack.push(node);
  };
  while (stack.length > 0) {
    const node = stack.pop() as string;
    const [type, relation] = node.split('#') as [string, string];
    const rel = model.types.get(type)?.relations.get(relation);
    if (!rel) continue;
    for (const d of rel.directTypes) {
      if (d.condition !== undefined) {
        throw new AppError(
          'validation_error',
          `permission index: ${pathTo(node)} → [${d.type}${d.wildcard ? ':*' : d.relation ? '#' + d.relation : ''} with ${d.condition}] depends on a condition; relations whose answer can depend on a condition or request context cannot be indexed`,
        );
      }
      if (d.relation !== undefined) visit(node, `${d.type}#${d.relation}`);
    }
    for (const leaf of leaves(rel.rewrite)) {
      if (leaf.kind === 'computed') visit(node, `${type}#${leaf.relation}`);
      else if (leaf.kind === 'ttu') {
        visit(node, `${type}#${leaf.tupleset}`);
        add(ttuComputed, `${type}#${leaf.tupleset}`, leaf.computed);
        for (const d of model.types.get(type)?.relations.get(leaf.tupleset)?.directTypes ?? []) {
          if (model.types.get(d.type)?.relations.has(leaf.computed)) visit(node, `${d.type}#${leaf.computed}`);
        }
      }
    }
  }
  let hasDifference = false;
  let hasIntersection = false;
  for (const node of reach) {
    const [type, relation] = node.split('#') as [string, string];
    const rel = model.types.get(type)?.relations.get(relation);
    if (!rel) continue;
    if (!hasDifference && hasKind(rel.rewrite, 'difference')) hasDifference = true;
    if (!hasIntersection && hasKind(rel.rewrite, 'intersection')) hasIntersection = true;
    if (leaves(rel.rewrite).some((l) => l.kind === 'this'))
      for (const d of rel.directTypes) if (d.relation === undefined) userTypes.add(d.type);
  }
  const indexed = new Set(relations.map((r) => `${r.object_type}#${r.relation}`));
  return {
    reach,
    reverse: reverseEdges(model, reach),
    indexed,
    userTypes: [...userTypes].sort(),
    ttuComputed,
    hasDifference,
    monotone: !hasDifference && !hasIntersection,
  };
}

function hasKind(r: Rewrite, kind: Rewrite['kind']): boolean {
  return r.kind === kind || children(r).some((c) => hasKind(c, kind));
}

/** The reverse edges between the nodes of `reach`. */
function reverseEdges(model: CompiledModel, reach: ReadonlySet<string>): Map<string, ReverseEdge[]> {
  const reverse = new Map<string, ReverseEdge[]>();
  for (const node of reach) {
    const [type, relation] = node.split('#') as [string, string];
    const rel = model.types.get(type)?.relations.get(relation);
    if (!rel) continue;
    for (const leaf of leaves(rel.rewrite)) {
      if (leaf.kind === 'this') {
        for (const d of rel.directTypes)
          if (d.relation !== undefined)
            add(reverse, `${d.type}#${d.relation}`, { kind: 'userset', parentType: type, parent: relation, node });
      } else if (leaf.kind === 'computed')
        add(reverse, `${type}#${leaf.relation}`, { kind: 'same', parent: relation, node });
      else if (leaf.kind === 'ttu') {
        add(reverse, `${type}#${leaf.tupleset}`, { kind: 'same', parent: relation, tupleset: true, node });
        for (const d of model.types.get(type)?.relations.get(leaf.tupleset)?.directTypes ?? []) {
          add(reverse, `${d.type}#${leaf.computed}`, {
            kind: 'ttu',
            parentType: type,
            parent: relation,
            tupleset: leaf.tupleset,
            node,
          });
        }
      }
    }
  }
  return reverse;
}
