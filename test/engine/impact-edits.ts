// Random candidate edits of a random model (test/oracle/generate.ts) for the impact differential:
// a restriction removed or its condition toggled, a rewrite wrapped in a union, intersection or
// difference with another relation or a parent's relation, a rewrite replaced by another relation,
// a relation added or removed, a type removed. Callers validate and retry on invalid results.

import type { AuthorizationModelInput, TypeDefinitionJson, UsersetJson } from '../../src/domain/types.js';
import { OBJECT_TYPES, USER_TYPES, evolveModel, type Rng } from '../oracle/generate.js';

function relationsOf(d: TypeDefinitionJson): string[] {
  return Object.keys(d.relations ?? {}).filter((r) => r !== 'parent');
}

/** Another leaf to combine with: a relation of the same type, or `r from parent`. */
function otherLeaf(rng: Rng, model: AuthorizationModelInput, def: TypeDefinitionJson): UsersetJson {
  const parents = (def.metadata?.relations?.parent?.directly_related_user_types ?? []).map((d) => d.type);
  if (parents.length > 0 && rng.chance(0.4)) {
    const p = model.type_definitions.find((d) => d.type === rng.pick(parents));
    const rels = p ? relationsOf(p) : [];
    if (rels.length > 0)
      return {
        tupleToUserset: { tupleset: { relation: 'parent' }, computedUserset: { relation: rng.pick(rels) } },
      };
  }
  return { computedUserset: { relation: rng.pick(relationsOf(def)) } };
}

function editRewrite(rng: Rng, model: AuthorizationModelInput): void {
  const def = rng.pick(model.type_definitions.filter((d) => OBJECT_TYPES.includes(d.type)));
  const name = rng.pick(relationsOf(def));
  const rels = def.relations ?? {};
  const current = rels[name] ?? { this: {} };
  const other = otherLeaf(rng, model, def);
  const k = rng.int(5);
  if (k === 0) rels[name] = { union: { child: [current, other] } };
  else if (k === 1) rels[name] = { intersection: { child: [current, other] } };
  else if (k === 2) rels[name] = { difference: { base: current, subtract: other } };
  else if (k === 3 && !current.this) rels[name] = other;
  else rels[name] = { difference: { base: other, subtract: current } };
}

function addRelation(rng: Rng, model: AuthorizationModelInput): void {
  const def = rng.pick(model.type_definitions.filter((d) => OBJECT_TYPES.includes(d.type)));
  const rels = def.relations ?? {};
  rels[`added${rng.int(100)}`] = rng.chance(0.5)
    ? { union: { child: [otherLeaf(rng, model, def), otherLeaf(rng, model, def)] } }
    : otherLeaf(rng, model, def);
  def.relations = rels;
}

function removeRelation(rng: Rng, model: AuthorizationModelInput): void {
  const def = rng.pick(model.type_definitions.filter((d) => OBJECT_TYPES.includes(d.type)));
  const name = rng.pick(relationsOf(def));
  delete def.relations?.[name];
  delete def.metadata?.relations?.[name];
}

function removeType(rng: Rng, model: AuthorizationModelInput): void {
  const type = rng.pick([...USER_TYPES, ...OBJECT_TYPES]);
  model.type_definitions = model.type_definitions.filter((d) => d.type !== type);
}

/** One to three random edits of a copy of `model` (not necessarily valid). */
export function randomEdit(rng: Rng, model: AuthorizationModelInput): AuthorizationModelInput {
  let next = JSON.parse(JSON.stringify(model)) as AuthorizationModelInput;
  for (let i = 1 + rng.int(3); i > 0; i--) {
    const k = rng.int(10);
    if (k < 3) next = evolveModel(rng, next);
    else if (k < 7) editRewrite(rng, next);
    else if (k < 8) addRelation(rng, next);
    else if (k < 9) removeRelation(rng, next);
    else removeType(rng, next);
  }
  return next;
}
