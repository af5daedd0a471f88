// Request-shape checks of a model write (docs/reference/semantics.md §3.2, docs/reference/http-api.md §6.4): `unknown` JSON →
// a normalised `AuthorizationModelInput` (camelCase rewrite keys, snake_case elsewhere; both
// spellings accepted on input; unknown fields dropped). Semantic rules live in validate.ts.
// Fields are checked in protobuf declaration order, first failure wins, as the reference does.

import { AppError, type ErrorCode } from '../errors.js';
import type {
  AuthorizationModelInput,
  ConditionJson,
  ConditionParamTypeRefJson,
  ConditionTypeName,
  ObjectRelation,
  RelationMetadataJson,
  RelationReferenceJson,
  TypeDefinitionJson,
  UsersetJson,
} from '../domain/types.js';

type Obj = Record<string, unknown>;

const TYPE_RE = /^[^:#@\s]{1,254}$/;
const NAME_RE = /^[^:#@\s]{1,50}$/;
const TYPE_PATTERN = '"^[^:#@\\\\s]{1,254}$"';
const NAME_PATTERN = '"^[^:#@\\\\s]{1,50}$"';
export const MAX_TYPES = 100;
export const MAX_MODEL_BYTES = 262_144;
/**
 * latch's own bounds on the work one model costs (docs/configuration.md): validating and compiling
 * run on the event loop in time linear in the relations and rewrite operands, so these cap the
 * longest stall a model write or its first Check can cause.
 */
export const MAX_MODEL_RELATIONS = 1_000;
export const MAX_REWRITE_OPERANDS = 100;

const TYPE_NAMES: readonly ConditionTypeName[] = [
  'TYPE_NAME_UNSPECIFIED',
  'TYPE_NAME_ANY',
  'TYPE_NAME_BOOL',
  'TYPE_NAME_STRING',
  'TYPE_NAME_INT',
  'TYPE_NAME_UINT',
  'TYPE_NAME_DOUBLE',
  'TYPE_NAME_DURATION',
  'TYPE_NAME_TIMESTAMP',
  'TYPE_NAME_MAP',
  'TYPE_NAME_LIST',
  'TYPE_NAME_IPADDRESS',
];

const fail = (code: ErrorCode, message: string): never => {
  throw new AppError(code, message);
};
const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A field under its JSON name or its proto name. */
const field = (o: Obj, snake: string, camel: string): unknown => (o[snake] !== undefined ? o[snake] : o[camel]);

function str(v: unknown, what: string): string {
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : fail('validation_error', `invalid ${what}: expected a string`);
}

function mapOf(v: unknown, what: string): Obj {
  if (v === undefined || v === null) return {};
  return isObj(v) ? v : fail('validation_error', `invalid ${what}: expected an object`);
}

/** Normalise and shape-check a WriteAuthorizationModel body. Throws AppError (400). */
export function normalizeModel(input: unknown): AuthorizationModelInput {
  if (!isObj(input)) return fail('validation_error', 'invalid authorization model: expected a JSON object');
  const rawTypes = field(input, 'type_definitions', 'typeDefinitions') ?? [];
  if (!Array.isArray(rawTypes))
    return fail('validation_error', 'invalid WriteAuthorizationModelRequest.TypeDefinitions: expected an array');
  if (rawTypes.length === 0) {
    fail(
      'type_definitions_too_few_items',
      'invalid WriteAuthorizationModelRequest.TypeDefinitions: value must contain at least 1 item(s)',
    );
  }
  const type_definitions = rawTypes.map(normalizeTypeDef);
  const schema_version = str(
    field(input, 'schema_version', 'schemaVersion'),
    'WriteAuthorizationModelRequest.SchemaVersion',
  );
  if (!['1.0', '1.1', '1.2'].includes(schema_version)) {
    fail(
      'validation_error',
      'invalid WriteAuthorizationModelRequest.SchemaVersion: value must be in list [1.0 1.1 1.2]',
    );
  }
  const rawConditions = mapOf(input.conditions, 'WriteAuthorizationModelRequest.Conditions');
  if (Object.keys(rawConditions).length > 25) {
    fail(
      'validation_error',
      'invalid WriteAuthorizationModelRequest.Conditions: value must contain no more than 25 pair(s)',
    );
  }
  const model: AuthorizationModelInput = { schema_version, type_definitions };
  if (input.conditions !== undefined && input.conditions !== null) {
    model.conditions = Object.fromEntries(Object.entries(rawConditions).map(([k, v]) => [k, normalizeCondition(k, v)]));
  }
  if (type_definitions.length > MAX_TYPES) {
    fail(
      'exceeded_entity_limit',
      `The number of type definitions in an authorization model exceeds the allowed limit of ${MAX_TYPES}`,
    );
  }
  const size = wireSize(model);
  if (size > MAX_MODEL_BYTES)
    fail('exceeded_entity_limit', `model exceeds size limit: ${size} bytes vs ${MAX_MODEL_BYTES} bytes`);
  limitWork(type_definitions); // after OpenFGA's own limits, which keep their precedence
  return model;
}

/** Relations in the whole model, then operands (leaves) in each relation's rewrite. */
function limitWork(typeDefs: readonly TypeDefinitionJson[]): void {
  let relations = 0;
  for (const t of typeDefs) relations += Object.keys(t.relations ?? {}).length;
  if (relations > MAX_MODEL_RELATIONS) {
    fail(
      'exceeded_entity_limit',
      `The number of relations in an authorization model exceeds the allowed limit of ${MAX_MODEL_RELATIONS}`,
    );
  }
  for (const t of typeDefs) {
    for (const [name, rw] of Object.entries(t.relations ?? {})) {
      if (operands(rw) > MAX_REWRITE_OPERANDS) {
        fail(
          'exceeded_entity_limit',
          `The rewrite of relation '${name}' in type '${t.type}' exceeds the allowed limit of ${MAX_REWRITE_OPERANDS} operands`,
        );
      }
    }
  }
}

function operands(rw: UsersetJson): number {
  const children =
    rw.union?.child ??
    rw.intersection?.child ??
    (rw.difference ? [rw.difference.base, rw.difference.subtract] : undefined);
  if (!children) return 1;
  let n = 0;
  for (const c of children) n += operands(c);
  return n;
}

function normalizeTypeDef(raw: unknown): TypeDefinitionJson {
  if (!isObj(raw)) return fail('validation_error', 'invalid TypeDefinition: expected an object');
  const type = str(raw.type, 'TypeDefinition.Type');
  if (bytes(type) > 254)
    fail('type_invalid_length', `invalid TypeDefinition.Type: value length must be at most 254 bytes (type '${type}')`);
  if (!TYPE_RE.test(type))
    fail(
      'type_invalid_pattern',
      `invalid TypeDefinition.Type: value does not match regex pattern ${TYPE_PATTERN} (type '${type}')`,
    );
  const relations: Record<string, UsersetJson> = {};
  for (const [name, rw] of Object.entries(mapOf(raw.relations, `TypeDefinition.Relations (type '${type}')`))) {
    const where = `type '${type}', relation '${name}'`;
    if (bytes(name) > 50)
      fail(
        'relations_too_long',
        `invalid key for TypeDefinition.Relations[${name}]: value length must be at most 50 bytes (${where})`,
      );
    if (!NAME_RE.test(name)) {
      fail(
        'relations_invalid_pattern',
        `invalid key for TypeDefinition.Relations[${name}]: value does not match regex pattern ${NAME_PATTERN} (${where})`,
      );
    }
    relations[name] = normalizeUserset(rw, where);
  }
  const def: TypeDefinitionJson = { type, relations };
  if (raw.metadata === null) def.metadata = null;
  else if (raw.metadata !== undefined) def.metadata = normalizeTypeMetadata(raw.metadata, type);
  return def;
}

function objectRelation(v: unknown, what: string, where: string): ObjectRelation {
  if (!isObj(v)) return fail('validation_error', `invalid ${what}: value is required (${where})`);
  const object = str(v.object, `${what}.Object`);
  const relation = str(v.relation, `${what}.Relation`);
  if (bytes(object) > 256)
    fail('object_too_long', `invalid ObjectRelation.Object: value length must be at most 256 bytes (${where})`);
  if (bytes(relation) > 50)
    fail('relation_too_long', `invalid ObjectRelation.Relation: value length must be at most 50 bytes (${where})`);
  return object === '' ? { relation } : { object, relation };
}

const REWRITE_KEYS = [
  'this',
  'computedUserset',
  'computed_userset',
  'tupleToUserset',
  'tuple_to_userset',
  'union',
  'intersection',
  'difference',
];

/** One rewrite node; a node with no rewrite key normalises to `{}` (rule R4 reports it). */
function normalizeUserset(raw: unknown, where: string): UsersetJson {
  if (!isObj(raw)) return fail('validation_error', `invalid Userset: expected an object (${where})`);
  const keys = REWRITE_KEYS.filter((k) => raw[k] !== undefined && raw[k] !== null);
  if (keys.length > 1)
    fail('validation_error', `invalid Userset: more than one rewrite set (${keys.join(', ')}) (${where})`);
  const cu = field(raw, 'computedUserset', 'computed_userset');
  const ttu = field(raw, 'tupleToUserset', 'tuple_to_userset');
  if (raw.this !== undefined && raw.this !== null) return { this: {} };
  if (cu !== undefined && cu !== null) return { computedUserset: objectRelation(cu, 'ComputedUserset', where) };
  if (isObj(ttu)) {
    return {
      tupleToUserset: {
        tupleset: objectRelation(ttu.tupleset, 'TupleToUserset.Tupleset', where),
        computedUserset: objectRelation(
          field(ttu, 'computedUserset', 'computed_userset'),
          'TupleToUserset.ComputedUserset',
          where,
        ),
      },
    };
  }
  for (const op of ['union', 'intersection'] as const) {
    const v = raw[op];
    if (v === undefined || v === null) continue;
    const child = isObj(v) ? (v.child ?? []) : undefined;
    if (!Array.isArray(child)) return fail('validation_error', `invalid Usersets.Child: expected an array (${where})`);
    return { [op]: { child: child.map((c) => normalizeUserset(c, where)) } };
  }
  if (isObj(raw.difference)) {
    const { base, subtract } = raw.difference;
    if (!isObj(base)) fail('difference_base_missing_value', `invalid Difference.Base: value is required (${where})`);
    if (!isObj(subtract))
      fail('subtract_base_missing_value', `invalid Difference.Subtract: value is required (${where})`);
    return { difference: { base: normalizeUserset(base, where), subtract: normalizeUserset(subtract, where) } };
  }
  return {};
}

function normalizeTypeMetadata(raw: unknown, type: string): NonNullable<TypeDefinitionJson['metadata']> {
  const m = mapOf(raw, `Metadata (type '${type}')`);
  const out: NonNullable<TypeDefinitionJson['metadata']> = {};
  const rels = m.relations;
  if (rels === null) out.relations = null;
  else if (rels !== undefined) {
    out.relations = Object.fromEntries(
      Object.entries(mapOf(rels, `Metadata.Relations (type '${type}')`)).map(([r, v]) => [
        r,
        normalizeRelationMetadata(v, type, r),
      ]),
    );
  }
  copyModuleInfo(m, out);
  return out;
}

function copyModuleInfo(from: Obj, to: { module?: string; source_info?: { file?: string } | null }): void {
  if (typeof from.module === 'string' && from.module !== '') to.module = from.module;
  const si = field(from, 'source_info', 'sourceInfo');
  if (si === null) to.source_info = null;
  else if (isObj(si)) to.source_info = typeof si.file === 'string' ? { file: si.file } : {};
}

function normalizeRelationMetadata(raw: unknown, type: string, relation: string): RelationMetadataJson {
  const m = mapOf(raw, `RelationMetadata (type '${type}', relation '${relation}')`);
  const list = field(m, 'directly_related_user_types', 'directlyRelatedUserTypes') ?? [];
  if (!Array.isArray(list))
    return fail(
      'validation_error',
      `invalid RelationMetadata.DirectlyRelatedUserTypes: expected an array (type '${type}', relation '${relation}')`,
    );
  const out: RelationMetadataJson = {
    directly_related_user_types: list.map((r) => normalizeReference(r, `type '${type}', relation '${relation}'`)),
  };
  copyModuleInfo(m, out);
  return out;
}

function normalizeReference(raw: unknown, where: string): RelationReferenceJson {
  if (!isObj(raw)) return fail('validation_error', `invalid RelationReference: expected an object (${where})`);
  const type = str(raw.type, 'RelationReference.Type');
  if (!TYPE_RE.test(type))
    fail(
      'type_invalid_pattern',
      `invalid RelationReference.Type: value does not match regex pattern ${TYPE_PATTERN} (${where})`,
    );
  const relation = str(raw.relation, 'RelationReference.Relation');
  const condition = str(raw.condition, 'RelationReference.Condition');
  const wildcard = raw.wildcard !== undefined && raw.wildcard !== null;
  if (relation !== '' && wildcard)
    fail('validation_error', `invalid RelationReference: both relation and wildcard are set for '${type}' (${where})`);
  if (relation !== '' && !NAME_RE.test(relation)) {
    fail(
      'validation_error',
      `invalid RelationReference.Relation: value does not match regex pattern ${NAME_PATTERN} (${where})`,
    );
  }
  if (condition !== '' && !NAME_RE.test(condition)) {
    fail(
      'validation_error',
      `invalid RelationReference.Condition: value does not match regex pattern ${NAME_PATTERN} (${where})`,
    );
  }
  const ref: RelationReferenceJson = { type };
  if (relation !== '') ref.relation = relation;
  if (wildcard) ref.wildcard = {};
  if (condition !== '') ref.condition = condition;
  return ref;
}

function normalizeCondition(key: string, raw: unknown): ConditionJson {
  const where = `condition '${key}'`;
  if (!NAME_RE.test(key))
    fail(
      'validation_error',
      `invalid key for WriteAuthorizationModelRequest.Conditions[${key}]: value does not match regex pattern ${NAME_PATTERN}`,
    );
  const c = mapOf(raw, `Condition (${where})`);
  const name = str(c.name, 'Condition.Name');
  if (!NAME_RE.test(name))
    fail('validation_error', `invalid Condition.Name: value does not match regex pattern ${NAME_PATTERN} (${where})`);
  const expression = str(c.expression, 'Condition.Expression');
  if (bytes(expression) > 512)
    fail('validation_error', `invalid Condition.Expression: value length must be at most 512 bytes (${where})`);
  const params = mapOf(c.parameters, `Condition.Parameters (${where})`);
  if (Object.keys(params).length > 25)
    fail('validation_error', `invalid Condition.Parameters: value must contain no more than 25 pair(s) (${where})`);
  const parameters: Record<string, ConditionParamTypeRefJson> = {};
  for (const [p, ref] of Object.entries(params)) {
    if (!NAME_RE.test(p))
      fail(
        'validation_error',
        `invalid key for Condition.Parameters[${p}]: value does not match regex pattern ${NAME_PATTERN} (${where})`,
      );
    parameters[p] = normalizeParamType(ref, `${where}, parameter '${p}'`);
  }
  const out: ConditionJson = { name, expression, parameters };
  if (c.metadata === null) out.metadata = null;
  else if (isObj(c.metadata)) copyModuleInfo(c.metadata, (out.metadata = {}));
  return out;
}

function normalizeParamType(raw: unknown, where: string): ConditionParamTypeRefJson {
  const r = mapOf(raw, `ConditionParamTypeRef (${where})`);
  const t = field(r, 'type_name', 'typeName') ?? 'TYPE_NAME_UNSPECIFIED';
  const type_name = typeof t === 'number' ? TYPE_NAMES[t] : TYPE_NAMES.find((n) => n === t);
  if (type_name === undefined)
    return fail(
      'validation_error',
      `invalid ConditionParamTypeRef.TypeName: value must be one of the defined enum values (${where})`,
    );
  const generics = field(r, 'generic_types', 'genericTypes') ?? [];
  if (!Array.isArray(generics))
    return fail('validation_error', `invalid ConditionParamTypeRef.GenericTypes: expected an array (${where})`);
  if (generics.length > 5)
    fail(
      'validation_error',
      `invalid ConditionParamTypeRef.GenericTypes: value must contain no more than 5 item(s) (${where})`,
    );
  const out: ConditionParamTypeRefJson = { type_name };
  if (generics.length > 0) out.generic_types = generics.map((g) => normalizeParamType(g, where));
  return out;
}

const PROTO_FIELDS = new Set([
  'schema_version',
  'type_definitions',
  'conditions',
  'type',
  'relations',
  'metadata',
  'this',
  'computedUserset',
  'tupleToUserset',
  'tupleset',
  'union',
  'intersection',
  'difference',
  'child',
  'base',
  'subtract',
  'object',
  'relation',
  'directly_related_user_types',
  'wildcard',
  'condition',
  'module',
  'source_info',
  'file',
  'name',
  'expression',
  'parameters',
  'type_name',
  'generic_types',
]);

/**
 * Approximate protobuf wire size: every string and map key costs its bytes plus 2, every message 2.
 * Field names cost nothing (protobuf uses tags), so a model passes wherever the reference passes it.
 */
function wireSize(v: unknown): number {
  if (typeof v === 'string') return bytes(v) + 2;
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + wireSize(x), 0);
  if (!isObj(v)) return 2;
  let n = 2;
  for (const [k, x] of Object.entries(v)) n += (PROTO_FIELDS.has(k) ? 0 : bytes(k) + 2) + wireSize(x);
  return n;
}
