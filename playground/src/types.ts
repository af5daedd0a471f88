// The OpenFGA JSON shapes the playground reads and writes (a subset of the public API's).

export interface Store {
  id: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface Userset {
  this?: Record<string, never>;
  computedUserset?: { relation: string };
  tupleToUserset?: { tupleset: { relation: string }; computedUserset: { relation: string } };
  union?: { child: Userset[] };
  intersection?: { child: Userset[] };
  difference?: { base: Userset; subtract: Userset };
}

export interface RelationRef {
  type: string;
  relation?: string;
  wildcard?: Record<string, never>;
  condition?: string;
}

export interface TypeDefinition {
  type: string;
  relations?: Record<string, Userset>;
  metadata?: { relations?: Record<string, { directly_related_user_types?: RelationRef[] }> } | null;
}

export interface ModelJson {
  id?: string;
  schema_version: string;
  type_definitions: TypeDefinition[];
  conditions?: Record<string, unknown>;
}

export interface TupleKey {
  user: string;
  relation: string;
  object: string;
  condition?: { name: string; context?: Record<string, unknown> };
}

export interface Tuple {
  key: TupleKey;
  timestamp: string;
}

export interface Assertion {
  tuple_key: TupleKey;
  expectation: boolean;
  contextual_tuples?: TupleKey[];
  context?: Record<string, unknown>;
}
