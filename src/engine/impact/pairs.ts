// The access pairs of one object and relation that differ between two models: ListUsers (the
// production path, src/engine/list/list-users.ts, complete: no result cap, no deadline) for every
// user type of each model, then the difference per user type. Usersets are expanded to their
// members (filters name a type only) and wildcards stay `type:*`.
// Example: base `viewer: [user]`, candidate `viewer: [user, user:*]`, tuple `doc:1#viewer@user:*`
//   → one line {kind:'gained', object:'doc:1', relation:'viewer', user:'user:*'}.

import { AppError } from '../../errors.js';
import type { CompiledModel } from '../../model/types.js';
import { listUsers } from '../list/list-users.js';
import type { EvalContext } from '../reference/context.js';
import type { ListedUser } from '../types.js';
import type { EvalError, ImpactLine, RelationSummary } from './types.js';

const NONE: ReadonlySet<string> = new Set();

function userText(u: ListedUser): string {
  if ('object' in u) return `${u.object.type}:${u.object.id}`;
  if ('wildcard' in u) return `${u.wildcard.type}:*`;
  return `${u.userset.type}:${u.userset.id}#${u.userset.relation}`;
}

/** The users of `type` related to `object` by `relation` under `ctx.model`, or its evaluation error. */
export function usersOf(
  ctx: EvalContext,
  object: string,
  relation: string,
  type: string,
): ReadonlySet<string> | EvalError {
  const model = ctx.model;
  const objectType = object.slice(0, object.indexOf(':'));
  if (!model.types.get(objectType)?.relations.has(relation) || !model.types.has(type)) return NONE;
  try {
    return new Set(listUsers(ctx, { object, relation, filter: { type } }, Number.POSITIVE_INFINITY).map(userText));
  } catch (e) {
    if (e instanceof AppError) return { code: e.code, message: e.message };
    throw e;
  }
}

/** User types of either model, the base's first (the order of the lines of one object). */
export function userTypes(base: CompiledModel, candidate: CompiledModel): string[] {
  return [...new Set([...base.types.keys(), ...candidate.types.keys()])];
}

const isError = (v: ReadonlySet<string> | EvalError): v is EvalError => !(v instanceof Set);

/** The lines of one object for one relation, counted into `summary`; users sorted per type. */
export function objectLines(
  base: EvalContext,
  candidate: EvalContext,
  types: readonly string[],
  object: string,
  summary: RelationSummary,
): ImpactLine[] {
  const relation = summary.relation;
  const out: ImpactLine[] = [];
  for (const type of types) {
    const a = usersOf(base, object, relation, type);
    const b = usersOf(candidate, object, relation, type);
    if (isError(a) || isError(b)) {
      summary.undetermined++;
      out.push({
        kind: 'undetermined',
        object,
        relation,
        user_type: type,
        ...(isError(a) ? { base: a } : {}),
        ...(isError(b) ? { candidate: b } : {}),
      });
      continue;
    }
    for (const user of [...b].filter((u) => !a.has(u)).sort()) {
      summary.gained++;
      out.push({ kind: 'gained', object, relation, user });
    }
    for (const user of [...a].filter((u) => !b.has(u)).sort()) {
      summary.lost++;
      out.push({ kind: 'lost', object, relation, user });
    }
  }
  return out;
}
