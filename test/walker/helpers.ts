// Test helpers: DSL → CompiledModel, tuple strings → TupleKeys, and one Check through the walker.

import type { JsonObject, TupleKey } from '../../src/domain/types.js';
import { StoreIndex } from '../../src/index/store-index.js';
import { dslToModel } from '../../src/model/dsl.js';
import { validateAndCompile } from '../../src/model/load.js';
import type { CompiledModel } from '../../src/model/types.js';
import { checkStatus, type CheckOutcome } from '../../src/engine/evaluation/walker/checker.js';

let n = 0;
export function model(dsl: string): CompiledModel {
  return validateAndCompile(dslToModel(dsl), `01HZZZZZZZZZZZZZZZZZZZZZ${String(n++ % 100).padStart(2, '0')}`);
}

/** `doc:1#viewer@user:anne` or `doc:1#viewer@user:anne[cond]` or `...[cond {"x":1}]`. */
export function tk(s: string): TupleKey {
  const m = /^([^#]+)#([^@]+)@([^[\s]+)(?:\[(\w+)(?:\s+(\{.*\}))?\])?$/.exec(s.trim());
  if (!m) throw new Error(`bad tuple ${s}`);
  const [, object = '', relation = '', user = '', cond, ctx] = m;
  const t: TupleKey = { object, relation, user };
  if (cond) return { ...t, condition: ctx ? { name: cond, context: JSON.parse(ctx) as JsonObject } : { name: cond } };
  return t;
}

export function index(tuples: readonly string[], revision = 1): StoreIndex {
  return StoreIndex.build(tuples.map(tk), revision);
}

/** `doc:1#viewer@user:anne` → the walker's answer as 'true' | 'false' | error code. */
export function answer(
  ix: StoreIndex,
  m: CompiledModel,
  query: string,
  opts: { ctx?: string[]; context?: JsonObject; depth?: number } = {},
): string {
  const q = tk(query);
  const out: CheckOutcome = checkStatus(
    ix.snapshot(),
    m,
    {
      object: q.object,
      relation: q.relation,
      user: q.user,
      contextualTuples: (opts.ctx ?? []).map(tk),
      ...(opts.context ? { context: opts.context } : {}),
    },
    opts.depth ?? 25,
  );
  return 'allowed' in out ? String(out.allowed) : out.error.code;
}
