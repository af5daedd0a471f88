// A slow, obviously correct reference for Check, ListObjects and ListUsers, transcribed directly
// from docs/reference/semantics.md §5.2-5.10 and §6.1/§6.3 over a plain tuple array. It shares nothing with
// src/engine/evaluation/semantics: no indexes, no memo tables, no short-circuits. Contextual tuples go first.

import type { JsonObject, TupleKey } from '../../src/domain/types.js';
import type { CompiledModel, Rewrite } from '../../src/model/types.js';

/** T, F, C (false with the cycle flag) or an error code (2000 condition, 2002 depth). */
export type O = 'T' | 'F' | 'C' | 2000 | 2002;

export interface OracleInput {
  model: CompiledModel;
  tuples: readonly TupleKey[];
  context?: JsonObject | undefined;
  depthLimit?: number;
  /** Skip §5.2 step 4 (the type-graph shortcut); only to classify known differences of other implementations. */
  noPathShortcut?: boolean;
}

const typeOf = (s: string): string => s.slice(0, s.indexOf(':'));
const isErr = (o: O): o is 2000 | 2002 => typeof o === 'number';

function or(xs: O[]): O {
  if (xs.includes('T')) return 'T';
  const e = xs.find(isErr);
  if (e !== undefined) return e;
  return xs.includes('C') ? 'C' : 'F';
}

/** The first falsey operand in order decides (flag included); then errors; then TRUE. */
function and(xs: O[]): O {
  const f = xs.find((x) => x === 'F' || x === 'C');
  if (f !== undefined) return f;
  const e = xs.find(isErr);
  return e ?? 'T';
}

function butNot(b: O, s: O): O {
  if (b === 'F' || b === 'C') return b;
  if (s === 'T') return 'F';
  if (s === 'C') return 'C';
  if (isErr(b)) return b;
  if (isErr(s)) return s;
  return 'T';
}

/** A tuple hop: its condition must hold (F and errors stand as they are) before recursing. */
const then = (c: O, next: () => O): O => (c === 'T' ? next() : c);

/** §4.5: the tuple still fits the model (rules 5-7 of §4.2 and the relation exists). */
export function oracleValid(m: CompiledModel, t: TupleKey): boolean {
  const rel = m.types.get(typeOf(t.object))?.relations.get(t.relation);
  if (!rel || t.object.endsWith(':*')) return false;
  const [uobj, urel] = t.user.split('#') as [string, string | undefined];
  const utype = typeOf(uobj);
  if (!m.types.has(utype)) return false;
  if (urel !== undefined && !m.types.get(utype)?.relations.has(urel)) return false;
  const wild = uobj.endsWith(':*');
  if (rel.isTupleset && (wild || urel !== undefined)) return false;
  const forms = rel.directTypes.filter(
    (d) => d.type === utype && d.wildcard === wild && d.relation === (wild ? undefined : urel),
  );
  if (forms.length === 0) return false;
  const c = t.condition?.name;
  if (!c) return forms.some((d) => d.condition === undefined);
  return m.conditions.has(c) && rel.directTypes.some((d) => d.type === utype && d.condition === c);
}

/** §5.2 step 4: can `T#r` reach the subject's type (`U`, `U:*`) or userset form (`U#S`) in the type graph? */
export function oracleReaches(m: CompiledModel, start: string, user: string): boolean {
  const labels = reachableLabels(m, start);
  const [uobj, urel] = user.split('#') as [string, string | undefined];
  if (urel !== undefined) return labels.has(`${typeOf(uobj)}#${urel}`);
  return labels.has(typeOf(uobj)) || labels.has(`${typeOf(uobj)}:*`);
}

/**
 * The type graph's labels reachable from `start` (`T#r`): types, `T:*` and `T#r` forms. A function
 * of the model alone, so kept per model and start (every Check step asks it again; walking the
 * graph each time was a fifth of the differential test's CPU).
 */
const reachable = new WeakMap<CompiledModel, Map<string, ReadonlySet<string>>>();

function reachableLabels(m: CompiledModel, start: string): ReadonlySet<string> {
  let byStart = reachable.get(m);
  if (!byStart) reachable.set(m, (byStart = new Map()));
  let labels = byStart.get(start);
  if (!labels) byStart.set(start, (labels = walkTypeGraph(m, start)));
  return labels;
}

function walkTypeGraph(m: CompiledModel, start: string): Set<string> {
  const seen = new Set<string>();
  const labels = new Set<string>();
  const walk = (label: string): void => {
    if (seen.has(label)) return;
    seen.add(label);
    labels.add(label);
    const [t, r] = label.split('#') as [string, string];
    const rel = m.types.get(t)?.relations.get(r);
    const leaves = (rw: Rewrite): Rewrite[] =>
      rw.kind === 'union' || rw.kind === 'intersection'
        ? rw.children.flatMap(leaves)
        : rw.kind === 'difference'
          ? [...leaves(rw.base), ...leaves(rw.subtract)]
          : [rw];
    for (const leaf of rel ? leaves(rel.rewrite) : []) {
      if (leaf.kind === 'computed') walk(`${t}#${leaf.relation}`);
      if (leaf.kind === 'ttu') {
        for (const d of m.types.get(t)?.relations.get(leaf.tupleset)?.directTypes ?? [])
          if (m.types.get(d.type)?.relations.has(leaf.computed)) walk(`${d.type}#${leaf.computed}`);
      }
      if (leaf.kind === 'this') {
        for (const d of rel?.directTypes ?? []) {
          if (d.wildcard) labels.add(`${d.type}:*`);
          else if (d.relation) walk(`${d.type}#${d.relation}`);
          else labels.add(d.type);
        }
      }
    }
  };
  walk(start);
  return labels;
}
const reaches = oracleReaches;

/**
 * Check(user, relation, object): the literal recursion eval(o, r, s, path, depth). `named`: the
 * ListUsers rule instead (§6.3 set operators) — the subject must be granted by name, so a typed
 * wildcard tuple grants nothing, an intersection holds when every operand Checks TRUE and one
 * names the subject, and a difference needs the base to name the subject and the subtract (a
 * full Check) not to hold.
 */
export function oracleCheck(inp: OracleInput, object: string, relation: string, user: string, named = false): O {
  const m = inp.model;
  const limit = inp.depthLimit ?? 25;
  const valid = inp.tuples.filter((t) => oracleValid(m, t));
  const cond = (t: TupleKey): O => {
    if (!t.condition?.name) return 'T';
    const c = m.conditions.get(t.condition.name);
    const r = c?.evaluate(t.condition.context, inp.context, `${t.object}#${t.relation}@${t.user}`);
    return !r || !r.ok ? 2000 : r.value ? 'T' : 'F';
  };
  const evalNode = (o: string, r: string, path: string[], depth: number, naming = false): O => {
    if (depth >= limit) return 2002;
    if (path.includes(`${o}#${r}`)) return 'C';
    if (user === `${o}#${r}`) return 'T';
    if (!inp.noPathShortcut && !reaches(m, `${typeOf(o)}#${r}`, user)) return 'F';
    const rel = m.types.get(typeOf(o))?.relations.get(r);
    if (!rel) return 'F';
    return rewrite(o, r, rel.rewrite, [...path, `${o}#${r}`], depth, naming);
  };
  const rewrite = (o: string, r: string, rw: Rewrite, path: string[], depth: number, naming: boolean): O => {
    switch (rw.kind) {
      case 'this': {
        const here = valid.filter((t) => t.object === o && t.relation === r);
        const exact = here.find((t) => t.user === user);
        const wild =
          naming || user.includes('#') || user.endsWith(':*')
            ? undefined
            : here.find((t) => t.user === `${typeOf(user)}:*`);
        const viaUsersets = here
          .filter((t) => t.user.includes('#'))
          .map((t) =>
            then(cond(t), () =>
              evalNode(t.user.split('#')[0] as string, t.user.split('#')[1] as string, path, depth + 1, naming),
            ),
          );
        return or([exact ? cond(exact) : 'F', wild ? cond(wild) : 'F', ...viaUsersets]);
      }
      case 'computed':
        return evalNode(o, rw.relation, path, depth, naming);
      case 'ttu':
        return or(
          valid
            .filter((t) => t.object === o && t.relation === rw.tupleset)
            .map((t) =>
              then(cond(t), () =>
                m.types.get(typeOf(t.user))?.relations.has(rw.computed)
                  ? evalNode(t.user, rw.computed, path, depth + 1, naming)
                  : 'F',
              ),
            ),
        );
      case 'union':
        return or(rw.children.map((c) => rewrite(o, r, c, path, depth, naming)));
      case 'intersection': {
        const all = and(rw.children.map((c) => rewrite(o, r, c, path, depth, false)));
        if (!naming || all !== 'T') return all;
        return rw.children.some((c) => rewrite(o, r, c, path, depth, true) === 'T') ? 'T' : 'F';
      }
      case 'difference':
        return butNot(rewrite(o, r, rw.base, path, depth, naming), rewrite(o, r, rw.subtract, path, depth, false));
    }
  };
  return evalNode(object, relation, [], 0, named);
}

/** Every object or user string mentioned by a tuple (users without their `#relation`). */
function mentioned(tuples: readonly TupleKey[]): Set<string> {
  const out = new Set<string>();
  for (const t of tuples) {
    out.add(t.object);
    out.add(t.user.split('#')[0] as string);
  }
  return out;
}

/** ListObjects: every mentioned object of `type` (+ a userset subject's own object) that Checks TRUE. */
export function oracleListObjects(inp: OracleInput, type: string, relation: string, user: string): Map<string, O> {
  const cands = mentioned(inp.tuples);
  if (user.includes('#')) cands.add(user.split('#')[0] as string);
  const out = new Map<string, O>();
  for (const o of cands) if (typeOf(o) === type && !o.endsWith(':*')) out.set(o, oracleCheck(inp, o, relation, user));
  return out;
}

/** ListUsers candidates of the filter form with their Check outcome (`T:*` and self usersets included). */
export function oracleListUsers(
  inp: OracleInput,
  object: string,
  relation: string,
  ftype: string,
  frel?: string,
): Map<string, O> {
  const out = new Map<string, O>();
  const users = new Set<string>();
  if (frel === undefined) {
    for (const u of mentioned(inp.tuples)) if (typeOf(u) === ftype) users.add(u);
    users.add(`${ftype}:*`);
  } else {
    for (const u of mentioned(inp.tuples)) if (typeOf(u) === ftype && !u.endsWith(':*')) users.add(`${u}#${frel}`);
    if (typeOf(object) === ftype) users.add(`${object}#${frel}`);
  }
  for (const u of users) out.set(u, oracleCheck(inp, object, relation, u));
  return out;
}

/** What the reference's ListUsers expansion reaches: users of the filter form, its cycle flag, its first error code. */
export interface Reach {
  users: Set<string>;
  flag: boolean;
  error: 2000 | 2002 | undefined;
}

/**
 * The reference ListUsers expansion, transcribed literally (§6.3; openfga listusers `expand*`):
 * path-based cycles, every relation visited is one level of depth, the cycle flag travels only
 * through userset tuples and computed usersets, a flagged subtract empties its difference (and
 * swallows its errors), any other condition or depth error fails the request.
 */
export function oracleListUsersReach(
  inp: OracleInput,
  object: string,
  relation: string,
  ftype: string,
  frel?: string,
): Reach {
  const m = inp.model;
  const limit = inp.depthLimit ?? 25;
  const valid = inp.tuples.filter((t) => oracleValid(m, t));
  const condErr = (t: TupleKey): boolean | 2000 => {
    if (!t.condition?.name) return true;
    const r = m.conditions.get(t.condition.name)?.evaluate(t.condition.context, inp.context, '');
    return !r || !r.ok ? 2000 : r.value;
  };
  const join = (xs: Reach[], keepFlag: boolean): Reach => ({
    users: new Set(xs.flatMap((x) => [...x.users])),
    flag: keepFlag && xs.some((x) => x.flag),
    error: xs.find((x) => x.error !== undefined)?.error,
  });
  const node = (o: string, r: string, path: string[], depth: number): Reach => {
    if (depth >= limit) return { users: new Set(), flag: false, error: 2002 };
    if (path.includes(`${o}#${r}`)) return { users: new Set(), flag: true, error: undefined };
    const self: Reach = {
      users: new Set(typeOf(o) === ftype && r === frel ? [`${o}#${r}`] : []),
      flag: false,
      error: undefined,
    };
    const rel = m.types.get(typeOf(o))?.relations.get(r);
    return rel ? join([self, rewrite(o, r, rel.rewrite, [...path, `${o}#${r}`], depth)], true) : self;
  };
  const read = (o: string, r: string): { ok: TupleKey[]; error: 2000 | undefined } => {
    const here = valid.filter((t) => t.object === o && t.relation === r);
    return {
      ok: here.filter((t) => condErr(t) === true),
      error: here.some((t) => condErr(t) === 2000) ? 2000 : undefined,
    };
  };
  const rewrite = (o: string, r: string, rw: Rewrite, path: string[], depth: number): Reach => {
    switch (rw.kind) {
      case 'this': {
        const { ok, error } = read(o, r);
        const plain = ok
          .filter((t) => !t.user.includes('#') && typeOf(t.user) === ftype && frel === undefined)
          .map((t) => t.user);
        const subs = ok
          .filter((t) => t.user.includes('#'))
          .map((t) => node(t.user.split('#')[0] as string, t.user.split('#')[1] as string, path, depth + 1));
        return join([{ users: new Set(plain), flag: false, error }, ...subs], true);
      }
      case 'computed':
        return node(o, rw.relation, path, depth + 1);
      case 'ttu': {
        const { ok, error } = read(o, rw.tupleset);
        return join(
          [{ users: new Set(), flag: false, error }, ...ok.map((t) => node(t.user, rw.computed, path, depth + 1))],
          false,
        );
      }
      case 'union':
      case 'intersection':
        return join(
          rw.children.map((c) => rewrite(o, r, c, path, depth)),
          false,
        );
      case 'difference': {
        const sub = rewrite(o, r, rw.subtract, path, depth);
        if (sub.flag) return { users: new Set(), flag: false, error: undefined };
        // Base users minus subtract users: the subtract contributes its error, never users.
        return join([rewrite(o, r, rw.base, path, depth), { ...sub, users: new Set() }], false);
      }
    }
  };
  return node(object, relation, [], 0);
}

/** Whether the filter (`U` or `U#S`) can reach `T#r` through positive rewrite positions (ListUsers' early answer). */
export function oracleFilterReachable(
  m: CompiledModel,
  type: string,
  relation: string,
  ftype: string,
  frel?: string,
): boolean {
  const seen = new Set<string>();
  const go = (t: string, r: string): boolean => {
    if (seen.has(`${t}#${r}`)) return false;
    seen.add(`${t}#${r}`);
    if (t === ftype && r === frel) return true;
    const rel = m.types.get(t)?.relations.get(r);
    const pos = (rw: Rewrite): Rewrite[] =>
      rw.kind === 'union' || rw.kind === 'intersection'
        ? rw.children.flatMap(pos)
        : rw.kind === 'difference'
          ? pos(rw.base)
          : [rw];
    return (rel ? pos(rel.rewrite) : []).some((leaf) => {
      if (leaf.kind === 'computed') return go(t, leaf.relation);
      if (leaf.kind === 'ttu') {
        return (m.types.get(t)?.relations.get(leaf.tupleset)?.directTypes ?? []).some(
          (d) =>
            !d.relation &&
            !d.wildcard &&
            m.types.get(d.type)?.relations.has(leaf.computed) &&
            go(d.type, leaf.computed),
        );
      }
      return (rel?.directTypes ?? []).some((d) =>
        d.relation === undefined ? frel === undefined && d.type === ftype : go(d.type, d.relation),
      );
    });
  };
  return go(type, relation);
}
