// Expand (docs/reference/semantics.md §6.4): one level of the rewrite of `object#relation` as a userset tree.
// Direct users are the distinct, sorted user strings of the valid tuples (conditions ignored);
// a tuple-to-userset lists `parent#X` once per distinct parent, even if the parent's type lacks X.
// Example: `viewer: [user] or editor` with `doc:1#viewer@user:anne` →
//   {name:'doc:1#viewer', union:{nodes:[{name:'doc:1#viewer', leaf:{users:{users:['user:anne']}}},
//                                       {name:'doc:1#viewer', leaf:{computed:{userset:'doc:1#editor'}}}]}}

import { parseObject } from '../../../domain/tuple.js';
import type { TupleView } from '../../../index/types.js';
import type { CompiledModel, Rewrite } from '../../../model/types.js';
import type { UsersetTreeNode } from '../../contract.js';
import { isValidAtReadTime } from '../semantics/validity.js';

function validUsers(model: CompiledModel, view: TupleView, object: string, relation: string): string[] {
  const out = new Set<string>();
  for (const t of view.users(object, relation)) if (isValidAtReadTime(model, t)) out.add(t.user);
  return [...out];
}

function node(model: CompiledModel, view: TupleView, object: string, relation: string, rw: Rewrite): UsersetTreeNode {
  const name = `${object}#${relation}`;
  switch (rw.kind) {
    case 'this':
      return { name, leaf: { users: { users: validUsers(model, view, object, relation).sort() } } };
    case 'computed':
      return { name, leaf: { computed: { userset: `${object}#${rw.relation}` } } };
    case 'ttu': {
      const parents = validUsers(model, view, object, rw.tupleset);
      return {
        name,
        leaf: {
          tupleToUserset: {
            tupleset: `${object}#${rw.tupleset}`,
            computed: parents.map((p) => ({ userset: `${p}#${rw.computed}` })),
          },
        },
      };
    }
    case 'union':
      return { name, union: { nodes: rw.children.map((c) => node(model, view, object, relation, c)) } };
    case 'intersection':
      return { name, intersection: { nodes: rw.children.map((c) => node(model, view, object, relation, c)) } };
    case 'difference':
      return {
        name,
        difference: {
          base: node(model, view, object, relation, rw.base),
          subtract: node(model, view, object, relation, rw.subtract),
        },
      };
  }
}

/** The one-level userset tree of `object#relation`. The relation must exist on the object's type. */
export function expand(model: CompiledModel, view: TupleView, object: string, relation: string): UsersetTreeNode {
  const rel = model.types.get(parseObject(object)?.type ?? '')?.relations.get(relation);
  if (!rel) return { name: `${object}#${relation}`, leaf: { users: { users: [] } } };
  return node(model, view, object, relation, rel.rewrite);
}
