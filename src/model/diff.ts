// The structural difference of two compiled models: types, relations and conditions added,
// removed or changed, each relation with its definition in DSL form on both sides. Pure; what
// `latch model diff` prints and what the impact stream reports before its pairs.
// Example: `define viewer: [user]` → `define viewer: [user, group#member]` is one changed relation
//   {type:'document', relation:'viewer', before:'[user]', after:'[user, group#member]'}.

import type { CompiledModel, CompiledRelation, DirectType, Rewrite } from './types.js';

interface RelationDiff {
  readonly type: string;
  readonly relation: string;
  /** The definition in DSL form; absent on the side where the relation does not exist. */
  readonly before?: string | undefined;
  readonly after?: string | undefined;
}

export interface ModelDiff {
  readonly typesAdded: readonly string[];
  readonly typesRemoved: readonly string[];
  readonly relationsAdded: readonly RelationDiff[];
  readonly relationsRemoved: readonly RelationDiff[];
  readonly relationsChanged: readonly RelationDiff[];
  readonly conditionsAdded: readonly string[];
  readonly conditionsRemoved: readonly string[];
  readonly conditionsChanged: readonly string[];
}

/** `user`, `user:*`, `group#member`, each with ` with cond`: one restriction as the DSL writes it. */
function directTypeText(d: DirectType): string {
  const base = d.wildcard ? `${d.type}:*` : d.relation ? `${d.type}#${d.relation}` : d.type;
  return d.condition ? `${base} with ${d.condition}` : base;
}

function rewriteText(rw: Rewrite, rel: CompiledRelation, top: boolean): string {
  switch (rw.kind) {
    case 'this':
      return `[${rel.directTypes.map(directTypeText).join(', ')}]`;
    case 'computed':
      return rw.relation;
    case 'ttu':
      return `${rw.computed} from ${rw.tupleset}`;
    case 'union':
    case 'intersection': {
      const s = rw.children.map((c) => rewriteText(c, rel, false)).join(rw.kind === 'union' ? ' or ' : ' and ');
      return top ? s : `(${s})`;
    }
    case 'difference': {
      const s = `${rewriteText(rw.base, rel, false)} but not ${rewriteText(rw.subtract, rel, false)}`;
      return top ? s : `(${s})`;
    }
  }
}

/** A relation's definition as the DSL's `define` line writes it after the colon. */
function relationText(rel: CompiledRelation): string {
  return rewriteText(rel.rewrite, rel, true);
}

/**
 * A canonical form of a relation's definition: equal strings ⇔ the same rewrite, the same set of
 * restrictions (order ignored) and the same tupleset role.
 */
export function relationSignature(rel: CompiledRelation | undefined): string {
  if (!rel) return '-';
  const types = rel.directTypes.map(directTypeText).sort();
  return JSON.stringify([rel.rewrite, types, rel.isTupleset]);
}

/** A canonical form of a condition's definition (expression and parameters), '-' when absent. */
export function conditionSignature(model: CompiledModel, name: string): string {
  const c = model.json.conditions?.[name];
  if (!c) return '-';
  const params = Object.entries(c.parameters ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([c.expression, params]);
}

export function diffModels(a: CompiledModel, b: CompiledModel): ModelDiff {
  const typesAdded = [...b.types.keys()].filter((t) => !a.types.has(t));
  const typesRemoved = [...a.types.keys()].filter((t) => !b.types.has(t));
  const relationsAdded: RelationDiff[] = [];
  const relationsRemoved: RelationDiff[] = [];
  const relationsChanged: RelationDiff[] = [];
  for (const [type, ta] of a.types) {
    const tb = b.types.get(type);
    for (const [name, ra] of ta.relations) {
      const rb = tb?.relations.get(name);
      if (!rb) relationsRemoved.push({ type, relation: name, before: relationText(ra) });
      else if (relationSignature(ra) !== relationSignature(rb))
        relationsChanged.push({ type, relation: name, before: relationText(ra), after: relationText(rb) });
    }
  }
  for (const [type, tb] of b.types) {
    const ta = a.types.get(type);
    for (const [name, rb] of tb.relations)
      if (!ta?.relations.has(name)) relationsAdded.push({ type, relation: name, after: relationText(rb) });
  }
  const ca = [...a.conditions.keys()];
  const cb = [...b.conditions.keys()];
  return {
    typesAdded,
    typesRemoved,
    relationsAdded,
    relationsRemoved,
    relationsChanged,
    conditionsAdded: cb.filter((c) => !a.conditions.has(c)),
    conditionsRemoved: ca.filter((c) => !b.conditions.has(c)),
    conditionsChanged: ca.filter((c) => b.conditions.has(c) && conditionSignature(a, c) !== conditionSignature(b, c)),
  };
}
