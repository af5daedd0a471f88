// The access pairs of one object and relation that differ between two models: ListUsers for every
// user type of each model (its expansion, src/engine/list/list-users.ts, complete: no result cap,
// no deadline; each candidate confirmed by a walker Check unless the relation is a plain union),
// then the difference per user type. Usersets are expanded to their members (filters name a type
// only) and wildcards stay `type:*`.
// Example: base `viewer: [user]`, candidate `viewer: [user, user:*]`, tuple `doc:1#viewer@user:*`
//   → one line {kind:'gained', object:'doc:1', relation:'viewer', user:'user:*'}.

import { AppError } from '../../../errors.js';
import type { CompiledModel } from '../../../model/types.js';
import type { IndexSnapshot } from '../../../index/snapshot.js';
import { admitsWildcard, listedByName, listUserCandidates } from '../list/list-users.js';
import { checkStatus } from '../walker/checker.js';
import type { EvalContext } from '../semantics/context.js';
import type { EvalError, ImpactLine, RelationSummary } from '../../contract.js';
import type { MemberSets } from './members.js';

const NONE: ReadonlySet<string> = new Set();

/** One model's side of an impact: what it evaluates against, and whether a relation is a plain union. */
export interface Side {
  readonly ctx: EvalContext;
  /** `isPlainUnion` of the relation being evaluated: its expansion's candidates are the answer. */
  readonly plain: boolean;
  /**
   * Check of one candidate, as ListUsers confirms it (only TRUE keeps it): on the walker, which
   * the differential tests hold to the reference's TRUE / FALSE.
   */
  readonly confirm: (object: string, relation: string, user: string) => boolean;
}

/**
 * The side of `ctx.model` for one relation. Its confirmation is ListUsers' rule: Check accepts
 * the candidate (on the walker) and, for a plain user of a type some relation admits as a typed
 * wildcard, a path names it (`listedByName`), not only the wildcard.
 */
export function sideOf(
  ctx: EvalContext,
  snapshot: IndexSnapshot,
  now: number,
  plain: boolean,
  types: readonly string[],
): Side {
  const wildcards = new Set(types.filter((t) => admitsWildcard(ctx.model, t)));
  const confirm = (object: string, relation: string, user: string): boolean => {
    const item = { object, relation, user, contextualTuples: [] };
    const o = checkStatus(snapshot, ctx.model, item, ctx.resolveDepth, now);
    if ('error' in o || !o.allowed) return false;
    if (user.endsWith(':*') || !wildcards.has(user.slice(0, user.indexOf(':')))) return true;
    return listedByName(ctx, object, relation, user);
  };
  return { ctx, plain, confirm };
}

/** The users of `type` related to `object` by `relation` under the side's model, or its evaluation error. */
function usersOf(side: Side, object: string, relation: string, type: string): ReadonlySet<string> | EvalError {
  const { ctx } = side;
  const model = ctx.model;
  const objectType = object.slice(0, object.indexOf(':'));
  if (!model.types.get(objectType)?.relations.has(relation) || !model.types.has(type)) return NONE;
  const q = { object, relation, filter: { type } };
  try {
    const candidates = listUserCandidates(ctx, q);
    if (side.plain) return candidates;
    const out = new Set<string>();
    for (const user of candidates) if (side.confirm(object, relation, user)) out.add(user);
    return out;
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

/**
 * The lines of one object for one relation, counted into `summary`; users sorted per type. Each
 * side's users come from the member sets (`fast`) where they can be exact, else from `usersOf`.
 */
export function objectLines(
  base: Side,
  candidate: Side,
  types: readonly string[],
  object: string,
  summary: RelationSummary,
  fast: MemberSets,
): ImpactLine[] {
  const relation = summary.relation;
  const out: ImpactLine[] = [];
  for (let ti = 0; ti < types.length; ti++) {
    const type = types[ti] ?? '';
    const fa = fast.answer(0, object, relation, ti, base.plain);
    const fb = fast.answer(1, object, relation, ti, candidate.plain);
    if (fa && fb) {
      for (const user of fast.usersNotIn(fb, fa, ti)) {
        summary.gained++;
        out.push({ kind: 'gained', object, relation, user });
      }
      for (const user of fast.usersNotIn(fa, fb, ti)) {
        summary.lost++;
        out.push({ kind: 'lost', object, relation, user });
      }
      continue;
    }
    const a = fa ? fast.userSet(fa, ti) : usersOf(base, object, relation, type);
    const b = fb ? fast.userSet(fb, ti) : usersOf(candidate, object, relation, type);
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
