// The model compiler: a validated AuthorizationModel → the immutable CompiledModel the engine reads.
// Pure and deterministic (same JSON → structurally equal output); each condition's CEL is compiled once.
// Example: `define viewer: [user] or editor` → {kind:'union', children:[{kind:'this'}, {kind:'computed', relation:'editor'}]}.

import type { AuthorizationModel, TypeDefinitionJson, UsersetJson } from '../domain/types.js';
import { AppError } from '../errors.js';
import { compileCondition } from './conditions.js';
import type { CompiledCondition, CompiledModel, CompiledRelation, CompiledType, DirectType, Rewrite } from './types.js';

/** Compile a model that passed `validateModel`. Throws `validation_error` only on inputs it would have rejected. */
export function compileModel(model: AuthorizationModel): CompiledModel {
  const schemaVersion = model.schema_version === '1.2' ? '1.2' : '1.1';
  const types = new Map<string, CompiledType>();
  for (const t of model.type_definitions) types.set(t.type, compileType(t));
  const conditions = new Map<string, CompiledCondition>();
  for (const [key, def] of Object.entries(model.conditions ?? {})) conditions.set(key, compileCondition(key, def));
  return { id: model.id, schemaVersion, types, conditions, json: model };
}

function compileType(t: TypeDefinitionJson): CompiledType {
  const tuplesets = new Set<string>();
  const rewrites = new Map<string, Rewrite>();
  for (const [name, rw] of Object.entries(t.relations ?? {}))
    rewrites.set(name, compileRewrite(rw, tuplesets, t.type, name));
  const relations = new Map<string, CompiledRelation>();
  for (const [name, rewrite] of rewrites) {
    const refs = t.metadata?.relations?.[name]?.directly_related_user_types ?? [];
    const directTypes: DirectType[] = refs.map((r) => ({
      type: r.type,
      relation: r.relation || undefined,
      wildcard: r.wildcard !== undefined && r.wildcard !== null,
      condition: r.condition || undefined,
    }));
    relations.set(name, { name, rewrite, directTypes, isTupleset: tuplesets.has(name) });
  }
  return { name: t.type, relations };
}

/** JSON rewrite → Rewrite; records every tupleset relation named by a `from`. */
function compileRewrite(rw: UsersetJson, tuplesets: Set<string>, type: string, relation: string): Rewrite {
  const sub = (child: UsersetJson): Rewrite => compileRewrite(child, tuplesets, type, relation);
  if (rw.this) return THIS;
  if (rw.computedUserset) return { kind: 'computed', relation: rw.computedUserset.relation ?? '' };
  if (rw.tupleToUserset) {
    const tupleset = rw.tupleToUserset.tupleset.relation ?? '';
    tuplesets.add(tupleset);
    return { kind: 'ttu', tupleset, computed: rw.tupleToUserset.computedUserset.relation ?? '' };
  }
  if (rw.union) return { kind: 'union', children: rw.union.child.map(sub) };
  if (rw.intersection) return { kind: 'intersection', children: rw.intersection.child.map(sub) };
  if (rw.difference)
    return { kind: 'difference', base: sub(rw.difference.base), subtract: sub(rw.difference.subtract) };
  throw new AppError(
    'validation_error',
    `the definition of relation '${relation}' in type '${type}' is invalid: invalid userset rewrite definition`,
  );
}

const THIS: Rewrite = { kind: 'this' };
