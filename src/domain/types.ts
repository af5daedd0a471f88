// Wire-shaped value types shared by every layer: tuples, stores, models, changes, assertions.
// Field names are the JSON names of the OpenFGA API (snake_case, except the rewrite keys).

/** JSON object as carried by `context` fields (google.protobuf.Struct). */
export type JsonObject = { [key: string]: JsonValue };
export type JsonValue = null | boolean | number | string | JsonValue[] | JsonObject;

/** A condition attached to a tuple: `{name: "in_office", context: {ip: "10.0.0.1"}}`. */
export interface RelationshipCondition {
  readonly name: string;
  readonly context?: JsonObject | undefined;
}

/** `document:1#viewer@user:anne`, optionally conditioned, optionally expiring. */
export interface TupleKey {
  readonly user: string;
  readonly relation: string;
  readonly object: string;
  readonly condition?: RelationshipCondition | undefined;
  /**
   * latch extension (docs/reference/decisions.md D15): the instant from which the tuple grants nothing, RFC 3339 UTC with
   * milliseconds (`2026-12-01T09:00:00.000Z`, normalised when written). Stored tuples only.
   */
  readonly expires_at?: string | undefined;
}

/** A stored tuple with the time it was written (RFC 3339). */
export interface Tuple {
  readonly key: TupleKey;
  readonly timestamp: string;
}

export type TupleOperation = 'TUPLE_OPERATION_WRITE' | 'TUPLE_OPERATION_DELETE';

export interface TupleChange {
  readonly tuple_key: TupleKey;
  readonly operation: TupleOperation;
  readonly timestamp: string;
}

export interface Store {
  readonly id: string;
  readonly name: string;
  readonly created_at: string;
  readonly updated_at: string;
  readonly deleted_at?: string | undefined;
}

export type Consistency = 'UNSPECIFIED' | 'MINIMIZE_LATENCY' | 'HIGHER_CONSISTENCY';

// ---- Authorization model JSON (schema 1.1 / 1.2) ----

export interface ObjectRelation {
  object?: string;
  relation?: string;
}

export interface TupleToUsersetJson {
  tupleset: ObjectRelation;
  computedUserset: ObjectRelation;
}

/** A rewrite node: exactly one key is set. */
export interface UsersetJson {
  this?: Record<string, never>;
  computedUserset?: ObjectRelation;
  tupleToUserset?: TupleToUsersetJson;
  union?: { child: UsersetJson[] };
  intersection?: { child: UsersetJson[] };
  difference?: { base: UsersetJson; subtract: UsersetJson };
}

export interface RelationReferenceJson {
  type: string;
  relation?: string;
  wildcard?: Record<string, never>;
  condition?: string;
}

export interface SourceInfoJson {
  file?: string;
}

export interface RelationMetadataJson {
  directly_related_user_types?: RelationReferenceJson[];
  module?: string;
  source_info?: SourceInfoJson | null;
}

export interface TypeMetadataJson {
  relations?: Record<string, RelationMetadataJson> | null;
  module?: string;
  source_info?: SourceInfoJson | null;
}

export interface TypeDefinitionJson {
  type: string;
  relations?: Record<string, UsersetJson>;
  metadata?: TypeMetadataJson | null;
}

export type ConditionTypeName =
  | 'TYPE_NAME_UNSPECIFIED'
  | 'TYPE_NAME_ANY'
  | 'TYPE_NAME_BOOL'
  | 'TYPE_NAME_STRING'
  | 'TYPE_NAME_INT'
  | 'TYPE_NAME_UINT'
  | 'TYPE_NAME_DOUBLE'
  | 'TYPE_NAME_DURATION'
  | 'TYPE_NAME_TIMESTAMP'
  | 'TYPE_NAME_MAP'
  | 'TYPE_NAME_LIST'
  | 'TYPE_NAME_IPADDRESS';

export interface ConditionParamTypeRefJson {
  type_name: ConditionTypeName;
  generic_types?: ConditionParamTypeRefJson[];
}

export interface ConditionJson {
  name: string;
  expression: string;
  parameters?: Record<string, ConditionParamTypeRefJson>;
  metadata?: { module?: string; source_info?: SourceInfoJson | null } | null;
}

/** A model as written by a client (no id yet). */
export interface AuthorizationModelInput {
  schema_version: string;
  type_definitions: TypeDefinitionJson[];
  conditions?: Record<string, ConditionJson>;
}

/** A stored, immutable model. */
export interface AuthorizationModel extends AuthorizationModelInput {
  id: string;
}

/** An assertion stored per model: the expected answer of one Check. */
export interface Assertion {
  readonly tuple_key: { user: string; relation: string; object: string };
  readonly expectation: boolean;
  readonly contextual_tuples?: TupleKey[];
  readonly context?: JsonObject;
}

// ---- Pages, filters and permission-index records (shared by the engine contract and storage) ----

/** A page of results; `next` is an opaque backend cursor, undefined at the end. */
export interface Page<T> {
  readonly items: T[];
  readonly next?: string | undefined;
}

export interface PageRequest {
  /** 1..100; validated by the caller. */
  readonly pageSize: number;
  /** A cursor returned as `next` by the same call with the same filter. Invalid → AppError invalid_continuation_token. */
  readonly after?: string | undefined;
}

/** Read filter (OpenFGA Read rules): `object` is `T:id` or `T:` (type only); `user` is any user string. */
export interface TupleFilter {
  readonly object?: string | undefined;
  readonly relation?: string | undefined;
  readonly user?: string | undefined;
}

/**
 * One tuple write as Write states it (the engine's WriteInput and the storage contract's
 * writeTuples both take it): deletes first, in order, then writes.
 */
export interface TupleWrite {
  /** A delete ignores any condition. */
  readonly deletes: readonly TupleKey[];
  readonly writes: readonly TupleKey[];
  /** 'error': writing an existing key fails with write_failed_due_to_invalid_input; 'ignore': skipped if identical, 409 transaction_conflict if the condition differs. */
  readonly onDuplicate: 'error' | 'ignore';
  /** 'error': deleting a missing key fails with write_failed_due_to_invalid_input; 'ignore': skipped. */
  readonly onMissing: 'error' | 'ignore';
}

/** One (object type, relation) pair a permission index materialises. */
export interface IndexedRelation {
  readonly object_type: string;
  readonly relation: string;
}

/**
 * A store's shadow model (docs/changing-models.md, shadow evaluation): a written model that a
 * sampled share of the store's Check, BatchCheck and ListObjects requests is also answered under,
 * off the request's path. Example: `{modelId: '01J…', sampling: 0.1, updatedAt: '2026-…Z'}`:
 * about one request in ten is evaluated under model 01J… as well.
 */
export interface ShadowSetting {
  readonly modelId: string;
  /** The share of requests evaluated under the shadow as well, in [0, 1]. */
  readonly sampling: number;
  /** RFC 3339: when the setting was made. */
  readonly updatedAt: string;
}

/**
 * A permission index's definition (docs/permission-indexes.md). Its materialised state is per
 * node and in memory; only this record is stored. Example: `{id: '01J…', name: 'document#viewer',
 * relations: [{object_type: 'document', relation: 'viewer'}], modelId: '01H…', createdAt: '2026-…Z'}`.
 */
export interface PermissionIndexRecord {
  readonly id: string;
  readonly name: string;
  readonly relations: readonly IndexedRelation[];
  /** The model the index is assigned to, for its whole life. */
  readonly modelId: string;
  /** RFC 3339. */
  readonly createdAt: string;
}
