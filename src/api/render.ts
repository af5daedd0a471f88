// Output shapes exactly as OpenFGA's gateway emits them (docs/reference/http-api.md §1.2): every field present,
// zero values for unset scalars, `null` for unset messages, `[]`/`{}` for unset lists and maps,
// only the set member of a oneof, snake_case except `computedUserset` / `tupleToUserset`.

import type {
  Assertion,
  AuthorizationModel,
  ConditionJson,
  ConditionParamTypeRefJson,
  ObjectRelation,
  RelationMetadataJson,
  RelationReferenceJson,
  SourceInfoJson,
  Store,
  Tuple,
  TupleChange,
  TupleKey,
  TypeDefinitionJson,
  TypeMetadataJson,
  UsersetJson,
} from '../domain/types.js';

type Json = Record<string, unknown>;

export function storeOut(s: Store): Json {
  return {
    id: s.id,
    name: s.name,
    created_at: s.created_at,
    updated_at: s.updated_at,
    deleted_at: s.deleted_at ?? null,
  };
}

export function tupleKeyOut(k: TupleKey): Json {
  const condition = k.condition ? { name: k.condition.name, context: k.condition.context ?? null } : null;
  // `expires_at` (docs/reference/decisions.md D15) only on tuples that carry one: OpenFGA's shape is unchanged otherwise.
  if (k.expires_at !== undefined)
    return { user: k.user, relation: k.relation, object: k.object, condition, expires_at: k.expires_at };
  return { user: k.user, relation: k.relation, object: k.object, condition };
}

export function tupleOut(t: Tuple): Json {
  return { key: tupleKeyOut(t.key), timestamp: t.timestamp };
}

export function changeOut(c: TupleChange): Json {
  return { tuple_key: tupleKeyOut(c.tuple_key), operation: c.operation, timestamp: c.timestamp };
}

export function assertionOut(a: Assertion): Json {
  return {
    tuple_key: { object: a.tuple_key.object, relation: a.tuple_key.relation, user: a.tuple_key.user },
    expectation: a.expectation,
    contextual_tuples: (a.contextual_tuples ?? []).map(tupleKeyOut),
    context: a.context ?? null,
  };
}

function objectRelationOut(o: ObjectRelation | undefined): Json {
  return { object: o?.object ?? '', relation: o?.relation ?? '' };
}

export function usersetOut(u: UsersetJson): Json {
  if (u.this) return { this: {} };
  if (u.computedUserset) return { computedUserset: objectRelationOut(u.computedUserset) };
  if (u.tupleToUserset) {
    return {
      tupleToUserset: {
        tupleset: objectRelationOut(u.tupleToUserset.tupleset),
        computedUserset: objectRelationOut(u.tupleToUserset.computedUserset),
      },
    };
  }
  if (u.union) return { union: { child: u.union.child.map(usersetOut) } };
  if (u.intersection) return { intersection: { child: u.intersection.child.map(usersetOut) } };
  if (u.difference)
    return { difference: { base: usersetOut(u.difference.base), subtract: usersetOut(u.difference.subtract) } };
  return {};
}

function sourceInfoOut(s: SourceInfoJson | null | undefined): Json | null {
  return s ? { file: s.file ?? '' } : null;
}

function referenceOut(r: RelationReferenceJson): Json {
  const out: Json = { type: r.type };
  if (r.relation !== undefined && r.relation !== '') out.relation = r.relation;
  else if (r.wildcard) out.wildcard = {};
  out.condition = r.condition ?? '';
  return out;
}

function relationMetadataOut(m: RelationMetadataJson): Json {
  return {
    directly_related_user_types: (m.directly_related_user_types ?? []).map(referenceOut),
    module: m.module ?? '',
    source_info: sourceInfoOut(m.source_info),
  };
}

function typeMetadataOut(m: TypeMetadataJson | null | undefined): Json | null {
  if (!m) return null;
  const relations: Json = {};
  for (const [name, r] of Object.entries(m.relations ?? {})) relations[name] = relationMetadataOut(r);
  return { relations, module: m.module ?? '', source_info: sourceInfoOut(m.source_info) };
}

function typeDefinitionOut(t: TypeDefinitionJson): Json {
  const relations: Json = {};
  for (const [name, u] of Object.entries(t.relations ?? {})) relations[name] = usersetOut(u);
  return { type: t.type, relations, metadata: typeMetadataOut(t.metadata) };
}

function paramTypeOut(p: ConditionParamTypeRefJson): Json {
  return { type_name: p.type_name, generic_types: (p.generic_types ?? []).map(paramTypeOut) };
}

function conditionOut(c: ConditionJson): Json {
  const parameters: Json = {};
  for (const [name, p] of Object.entries(c.parameters ?? {})) parameters[name] = paramTypeOut(p);
  const metadata = c.metadata
    ? { module: c.metadata.module ?? '', source_info: sourceInfoOut(c.metadata.source_info) }
    : null;
  return { name: c.name, expression: c.expression, parameters, metadata };
}

export function modelOut(m: AuthorizationModel): Json {
  const conditions: Json = {};
  for (const [name, c] of Object.entries(m.conditions ?? {})) conditions[name] = conditionOut(c);
  return {
    id: m.id,
    schema_version: m.schema_version,
    type_definitions: m.type_definitions.map(typeDefinitionOut),
    conditions,
  };
}
