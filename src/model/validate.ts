// Server-side validation of a written model (docs/reference/semantics.md §3.2–§3.5, rules R1–R17; docs/reference/decisions.md D5):
// shape first (validate-shape.ts), then schema, duplicate types and names, then per type and
// relation in lexicographic order the rewrite rules, the restriction rules, entrypoints and cycles,
// then conditions. The first failure wins; every message names the type and relation.
// Example: `define viewer: [user] or viewer` → 400 cannot_allow_multiple_references_to_one_relation.

import { AppError, type ErrorCode } from '../errors.js';
import type { AuthorizationModelInput, TypeDefinitionJson, UsersetJson } from '../domain/types.js';
import { compileCondition } from './conditions.js';
import {
  ModelIndex,
  computedTargets,
  computedCycles,
  reachesComputedCycle,
  relationsWithEntrypoints,
} from './validate-graph.js';
import { normalizeModel } from './validate-shape.js';

/** A semantic model error; `type`/`relation`/`condition` say where (used to add DSL positions). */
export class ModelValidationError extends AppError {
  constructor(
    code: ErrorCode,
    message: string,
    readonly type?: string,
    readonly relation?: string,
    readonly condition?: string,
  ) {
    super(code, message);
  }
}

const invalid = (code: ErrorCode, type: string, relation: string, cause: string): ModelValidationError =>
  new ModelValidationError(
    code,
    `the definition of relation '${relation}' in type '${type}' is invalid: ${cause}`,
    type,
    relation,
  );

/** Validate a WriteAuthorizationModel body; returns the normalised model or throws AppError (400). */
export function validateModel(input: unknown): AuthorizationModelInput {
  const model = normalizeModel(input);
  if (model.schema_version !== '1.1' && model.schema_version !== '1.2') {
    throw new ModelValidationError(
      'validation_error',
      `invalid schema version: ${model.schema_version} is not supported, use 1.1 or 1.2`,
    );
  }
  validateTypesAndNames(model.type_definitions);
  const index = new ModelIndex(model.type_definitions);
  const sorted = [...model.type_definitions].sort((a, b) => cmp(a.type, b.type));
  const each = (fn: (t: TypeDefinitionJson, r: string, rw: UsersetJson) => void): void => {
    for (const t of sorted) for (const r of Object.keys(t.relations ?? {}).sort(cmp)) fn(t, r, t.relations?.[r] ?? {});
  };
  each((t, r, rw) => validateRewrite(index, t.type, r, rw));
  each((t, r, rw) => validateRestrictions(index, model, t, r, rw));
  const withEntry = relationsWithEntrypoints(index, model.type_definitions);
  const cycles = new Map<string, Set<string>>();
  const cyclic = (type: string, relation: string): boolean => {
    let set = cycles.get(type);
    if (!set) cycles.set(type, (set = computedCycles(index, type)));
    return set.has(relation);
  };
  each((t, r, rw) => validateGraph(index, withEntry, cyclic, t.type, r, rw));
  for (const key of Object.keys(model.conditions ?? {}).sort(cmp)) {
    try {
      compileCondition(key, model.conditions?.[key] ?? { name: '', expression: '' });
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      throw new ModelValidationError('validation_error', err.message, undefined, undefined, key);
    }
  }
  return model;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** R2, R3. */
function validateTypesAndNames(typeDefs: readonly TypeDefinitionJson[]): void {
  const seen = new Set<string>();
  for (const t of typeDefs) {
    if (seen.has(t.type)) {
      throw new ModelValidationError(
        'cannot_allow_duplicate_types_in_one_request',
        `the model cannot contain duplicate types: type '${t.type}' is defined more than once`,
        t.type,
      );
    }
    seen.add(t.type);
  }
  for (const t of typeDefs) {
    if (t.type === 'self' || t.type === 'this') {
      throw new ModelValidationError(
        'validation_error',
        `the definition of type '${t.type}' is invalid: self and this are reserved keywords`,
        t.type,
      );
    }
    for (const r of Object.keys(t.relations ?? {})) {
      if (r === 'self' || r === 'this')
        throw invalid('validation_error', t.type, r, 'self and this are reserved keywords');
    }
  }
}

/** R4–R9 over one relation's rewrite tree, depth first. */
function validateRewrite(m: ModelIndex, type: string, relation: string, rw: UsersetJson): void {
  const walk = (node: UsersetJson): void => {
    if (node.this) return;
    if (node.computedUserset) {
      const target = node.computedUserset.relation ?? '';
      if (target === relation) {
        throw invalid(
          'cannot_allow_multiple_references_to_one_relation',
          type,
          relation,
          `invalid userset rewrite definition: '${type}#${relation}' references itself`,
        );
      }
      if (!m.rewrite(type, target))
        throw invalid('unknown_relation', type, relation, `'${type}#${target}' relation is undefined`);
      return;
    }
    if (node.tupleToUserset)
      return validateTupleToUserset(
        m,
        type,
        relation,
        node.tupleToUserset.tupleset.relation ?? '',
        node.tupleToUserset.computedUserset.relation ?? '',
      );
    const children =
      node.union?.child ??
      node.intersection?.child ??
      (node.difference ? [node.difference.base, node.difference.subtract] : undefined);
    if (!children)
      throw invalid(
        'empty_relation_definition',
        type,
        relation,
        'invalid userset rewrite definition: the rewrite is empty',
      );
    children.forEach(walk);
  };
  walk(rw);
}

/** R7–R9 for `computed from tupleset`. */
function validateTupleToUserset(
  m: ModelIndex,
  type: string,
  relation: string,
  tupleset: string,
  computed: string,
): void {
  const ts = m.rewrite(type, tupleset);
  if (!ts) throw invalid('unknown_relation', type, relation, `'${type}#${tupleset}' relation is undefined`);
  if (!ts.this) {
    throw invalid(
      'invalid_tuple_set',
      type,
      relation,
      `the '${type}#${tupleset}' relation is referenced in at least one tupleset and thus must be a direct relation`,
    );
  }
  if (!m.restrictions(type, tupleset).some((ref) => m.rewrite(ref.type, computed))) {
    throw invalid(
      'unknown_relation',
      type,
      relation,
      `undefined relation: '${computed}' does not appear on any directly related type of '${type}#${tupleset}'`,
    );
  }
}

function containsThis(rw: UsersetJson): boolean {
  if (rw.this) return true;
  const children =
    rw.union?.child ?? rw.intersection?.child ?? (rw.difference ? [rw.difference.base, rw.difference.subtract] : []);
  return children.some(containsThis);
}

/** Relations of a type used as the tupleset (`Y` in `X from Y`) of some rewrite of that type. */
const tuplesetsOf = new WeakMap<TypeDefinitionJson, Set<string>>();

/** Found once per type (once per relation was quadratic in the relations of a type). */
function tuplesets(t: TypeDefinitionJson): Set<string> {
  const known = tuplesetsOf.get(t);
  if (known) return known;
  const out = new Set<string>();
  tuplesetsOf.set(t, out);
  const walk = (rw: UsersetJson): void => {
    if (rw.tupleToUserset) out.add(rw.tupleToUserset.tupleset.relation ?? '');
    for (const c of rw.union?.child ?? rw.intersection?.child ?? []) walk(c);
    if (rw.difference) [rw.difference.base, rw.difference.subtract].forEach(walk);
  };
  Object.values(t.relations ?? {}).forEach(walk);
  return out;
}

/** R10–R13. */
function validateRestrictions(
  m: ModelIndex,
  model: AuthorizationModelInput,
  t: TypeDefinitionJson,
  relation: string,
  rw: UsersetJson,
): void {
  const type = t.type;
  const refs = m.restrictions(type, relation);
  const assignable = containsThis(rw);
  if (assignable && refs.length === 0) {
    throw invalid(
      'validation_error',
      type,
      relation,
      `the assignable relation '${relation}' in type '${type}' must contain at least one relation type`,
    );
  }
  if (!assignable && refs.length > 0) {
    throw invalid(
      'validation_error',
      type,
      relation,
      `the non-assignable relation '${relation}' in type '${type}' should not contain a relation type`,
    );
  }
  const isTupleset = tuplesets(t).has(relation);
  for (const ref of refs) {
    const shown = ref.wildcard ? `${ref.type}:*` : ref.relation ? `${ref.type}#${ref.relation}` : ref.type;
    const bad = (code: ErrorCode, why: string): ModelValidationError =>
      invalid(
        code,
        type,
        relation,
        `the relation type '${shown}' on '${relation}' in object type '${type}' is not valid: ${why}`,
      );
    if (!m.hasType(ref.type)) throw bad('type_not_found', `type '${ref.type}' not found`);
    if (ref.relation && !m.rewrite(ref.type, ref.relation))
      throw bad('relation_not_found', `relation '${ref.type}#${ref.relation}' not found`);
    if (isTupleset && (ref.relation || ref.wildcard)) {
      throw bad('invalid_tuple_set', `'${relation}' is used as a tupleset, so its restrictions must be plain types`);
    }
    if (ref.condition && !Object.prototype.hasOwnProperty.call(model.conditions ?? {}, ref.condition)) {
      throw invalid(
        'validation_error',
        type,
        relation,
        `condition ${ref.condition} is undefined for relation ${relation}`,
      );
    }
  }
}

/** R16, R14, R15. */
function validateGraph(
  m: ModelIndex,
  withEntry: ReadonlySet<string>,
  cyclic: (type: string, relation: string) => boolean,
  type: string,
  relation: string,
  rw: UsersetJson,
): void {
  const short = (node: UsersetJson): boolean =>
    ((node.union ?? node.intersection)?.child.length ?? 2) < 2 ||
    (
      node.union?.child ??
      node.intersection?.child ??
      (node.difference ? [node.difference.base, node.difference.subtract] : [])
    ).some(short);
  if (short(rw))
    throw invalid('validation_error', type, relation, 'invalid relation: union/intersection has less than 2 children');
  if (!withEntry.has(`${type}#${relation}`)) {
    const loop = reachesComputedCycle(m, type, relation);
    throw invalid(
      'validation_error',
      type,
      relation,
      loop ? 'invalid relation: potential loop' : 'invalid relation: no entrypoints defined',
    );
  }
  if (computedTargets(rw).length > 0 && cyclic(type, relation)) {
    throw invalid('validation_error', type, relation, 'invalid relation: the model cannot contain a cycle');
  }
}
