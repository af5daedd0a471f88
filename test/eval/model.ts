// Test-side model loading: DSL/JSON → CompiledModel. Uses src/model/compile.ts `compileModel`
// when it exists; until then a small local transcription of the compiled form (same contract,
// conditions compiled by src/model/conditions.ts). Not a mock: it builds the real data shape.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AuthorizationModelInput, UsersetJson } from '../../src/domain/types.js';
import { compileCondition } from '../../src/model/conditions.js';
import { dslToModel } from '../../src/model/dsl.js';
import type { CompiledCondition, CompiledModel, CompiledRelation, CompiledType, DirectType, Rewrite } from '../../src/model/types.js';

type Compile = (model: AuthorizationModelInput & { id?: string }) => CompiledModel;

const here = path.dirname(fileURLToPath(import.meta.url));
const compilePath = path.resolve(here, '../../src/model/compile.ts');

let compiler: Compile | undefined;

/** The project's compiler if present, else the local transcription. Call once before `compile`. */
export async function loadCompiler(): Promise<Compile> {
  if (compiler) return compiler;
  if (existsSync(compilePath)) {
    const mod = (await import(compilePath)) as { compileModel?: unknown };
    if (typeof mod.compileModel === 'function') {
      const fn = mod.compileModel as (m: AuthorizationModelInput) => CompiledModel;
      compiler = (m) => fn({ id: '01HTESTMODEL0000000000000', ...m } as AuthorizationModelInput);
      return compiler;
    }
  }
  compiler = localCompile;
  return compiler;
}

export function compile(model: AuthorizationModelInput): CompiledModel {
  if (!compiler) throw new Error('call loadCompiler() first');
  return compiler(model);
}

export function compileDsl(text: string): CompiledModel {
  return compile(dslToModel(text));
}

function rewriteOf(u: UsersetJson): Rewrite {
  if (u.this) return { kind: 'this' };
  if (u.computedUserset) return { kind: 'computed', relation: u.computedUserset.relation ?? '' };
  if (u.tupleToUserset) {
    return { kind: 'ttu', tupleset: u.tupleToUserset.tupleset.relation ?? '', computed: u.tupleToUserset.computedUserset.relation ?? '' };
  }
  if (u.union) return { kind: 'union', children: u.union.child.map(rewriteOf) };
  if (u.intersection) return { kind: 'intersection', children: u.intersection.child.map(rewriteOf) };
  if (u.difference) return { kind: 'difference', base: rewriteOf(u.difference.base), subtract: rewriteOf(u.difference.subtract) };
  throw new Error('empty rewrite');
}

function tuplesets(rw: Rewrite, out: Set<string>): Set<string> {
  if (rw.kind === 'ttu') out.add(rw.tupleset);
  else if (rw.kind === 'union' || rw.kind === 'intersection') rw.children.forEach((c) => tuplesets(c, out));
  else if (rw.kind === 'difference') [rw.base, rw.subtract].forEach((c) => tuplesets(c, out));
  return out;
}

function localCompile(model: AuthorizationModelInput & { id?: string }): CompiledModel {
  const types = new Map<string, CompiledType>();
  for (const td of model.type_definitions) {
    const rewrites = new Map(Object.entries(td.relations ?? {}).map(([r, u]) => [r, rewriteOf(u)] as const));
    const ts = new Set<string>();
    for (const rw of rewrites.values()) tuplesets(rw, ts);
    const relations = new Map<string, CompiledRelation>();
    for (const [name, rewrite] of rewrites) {
      const refs = td.metadata?.relations?.[name]?.directly_related_user_types ?? [];
      const directTypes: DirectType[] = refs.map((r) => ({ type: r.type, relation: r.relation || undefined, wildcard: r.wildcard !== undefined, condition: r.condition || undefined }));
      relations.set(name, { name, rewrite, directTypes, isTupleset: ts.has(name) });
    }
    types.set(td.type, { name: td.type, relations });
  }
  const conditions = new Map<string, CompiledCondition>();
  for (const [k, c] of Object.entries(model.conditions ?? {})) conditions.set(k, compileCondition(k, c));
  return { id: model.id ?? 'local', schemaVersion: '1.1', types, conditions, json: { id: model.id ?? 'local', ...model } };
}
