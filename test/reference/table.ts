// Helpers for table-driven evaluator tests: tuples written as `doc:1#viewer@user:anne`,
// optionally followed by ` with cond {"x":1}`; queries run on a MemoryTupleView.

import type { JsonObject, TupleKey } from '../../src/domain/types.js';
import { AppError } from '../../src/errors.js';
import { evalCheck, listObjects, MemoryTupleView, overlayView, type EvalContext } from '../oracle/reference.js';
import { listUsers } from '../../src/engine/evaluation/list/list-users.js';
import type { CompiledModel } from '../../src/model/types.js';
import { userString } from '../conformance/engine.js';

/** `object#relation@user[ with cond [json]]` → TupleKey. */
export function tk(text: string): TupleKey {
  const [key, cond] = text.split(' with ') as [string, string | undefined];
  const at = key.indexOf('@');
  const left = key.slice(0, at);
  const hash = left.lastIndexOf('#');
  const base = { object: left.slice(0, hash), relation: left.slice(hash + 1), user: key.slice(at + 1) };
  if (cond === undefined) return base;
  const space = cond.indexOf(' ');
  const name = space === -1 ? cond : cond.slice(0, space);
  const context = space === -1 ? undefined : (JSON.parse(cond.slice(space + 1)) as JsonObject);
  return { ...base, condition: { name, ...(context ? { context } : {}) } };
}

export interface Env {
  model: CompiledModel;
  tuples: string[];
  contextual?: string[];
  context?: JsonObject;
  depth?: number;
}

export function ctxOf(env: Env): EvalContext {
  const view = overlayView(new MemoryTupleView(env.tuples.map(tk)), (env.contextual ?? []).map(tk));
  return { model: env.model, view, context: env.context, resolveDepth: env.depth ?? 25, deadline: Date.now() + 10_000 };
}

/** A query outcome: true/false, or the numeric code of the AppError thrown. */
export function attempt<T>(fn: () => T): T | number {
  try {
    return fn();
  } catch (e) {
    if (e instanceof AppError) return e.numeric;
    throw e;
  }
}

/** `doc:1#viewer@user:anne` → Check outcome. */
export function check(env: Env, query: string): boolean | number {
  const q = tk(query);
  return attempt(() => evalCheck(ctxOf(env), q.object, q.relation, q.user));
}

/** `doc#viewer@user:anne` → sorted ListObjects result or error code. */
export function objects(env: Env, query: string): string[] | number {
  const q = tk(query.replace('#', ':_#'));
  return attempt(() =>
    listObjects(ctxOf(env), { type: q.object.slice(0, -2), relation: q.relation, user: q.user }, 1000).sort(),
  );
}

/** `doc:1#viewer` and filter `user` / `group#member` → sorted ListUsers strings or error code. */
export function users(env: Env, userset: string, filter: string): string[] | number {
  const hash = userset.lastIndexOf('#');
  const [type, relation] = filter.split('#') as [string, string | undefined];
  return attempt(() =>
    listUsers(
      ctxOf(env),
      {
        object: userset.slice(0, hash),
        relation: userset.slice(hash + 1),
        filter: relation ? { type, relation } : { type },
      },
      1000,
    )
      .map(userString)
      .sort(),
  );
}
