// Tuple validation against a compiled model (docs/reference/semantics.md §4.2–§4.5).
// `findTupleProblem` returns the first failure of checks 1–7 (plus the write-only rules) as the wire
// message `Invalid tuple '<object>#<relation>@<user>'. Reason: <cause>` and says whether it is a
// condition problem (rule 7 / context size): contextual tuples map those to 2000 in ListObjects,
// ListUsers and Expand, everything else to 2027 (appendix A.3).
// `isValidAtRead` is the read-time filter for stale stored tuples (rules 5–7 + relation exists).

import { MAX_VALUE_DEPTH, deeperThan } from '../domain/depth.js';
import type { JsonObject, JsonValue, TupleKey } from '../domain/types.js';
import {
  parseObject,
  parseUser,
  scanCheckKey,
  tupleString,
  type CheckKeyScan,
  type ParsedUser,
} from '../domain/tuple.js';
import type { CompiledModel, CompiledRelation, CompiledType, DirectType } from './types.js';

export interface TupleProblem {
  /** Wire message: `Invalid tuple '…'. Reason: …`. */
  readonly message: string;
  /** True for condition problems (§4.2 rule 7); the write-only context size limit is not one. */
  readonly conditionProblem: boolean;
}

export const MAX_CONDITION_CONTEXT_BYTES = 32_768;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const RELATION = /^[^:#@\s]+$/;

/** First failure of `t` against `model`, or undefined when valid. 'write' adds the write-only rules (§4.4). */
export function findTupleProblem(
  model: CompiledModel,
  t: TupleKey,
  mode: 'write' | 'contextual',
): TupleProblem | undefined {
  // Condition problems print the tuple with its condition, like the reference's InvalidConditionalTupleError.
  const cond = t.condition?.name ? ` (condition ${t.condition.name})` : '';
  const problem = (cause: string, conditionProblem = false): TupleProblem => ({
    message: `Invalid tuple '${tupleString(t)}${conditionProblem ? cond : ''}'. Reason: ${cause}`,
    conditionProblem,
  });
  const user = parseUser(t.user);
  if (!user) return problem(userFormCause(t.user));
  const userCause = userTypeCause(model, user);
  if (userCause) return problem(userCause);
  const object = parseObject(t.object);
  if (!object) return problem(`invalid 'object' field format`);
  if (object.id === '*') return problem(`the 'object' field cannot reference a typed wildcard`);
  const type = model.types.get(object.type);
  if (!type) return problem(`type '${object.type}' not found`);
  if (!RELATION.test(t.relation)) return problem(`the 'relation' field is malformed`);
  const relation = type.relations.get(t.relation);
  if (!relation) return problem(`relation '${object.type}#${t.relation}' not found`);
  const restrictionCause = restrictionProblem(object.type, relation, user);
  if (restrictionCause) return problem(restrictionCause);
  const conditionCause = conditionProblem(model, relation, user, t);
  if (conditionCause) return problem(conditionCause, true);
  if (mode === 'write') return writeProblem(t, user, object.type, object.id, problem);
  return undefined;
}

/**
 * `findTupleProblem(model, t, 'write')` for the many tuples of one bulk write (an import chunk),
 * with the model lookups done once per shape. A tuple without condition is decided by its shape
 * (object type, relation, user type and user form: object, wildcard or `#relation`) once its ids
 * are well formed and it is not the userset of its own object and relation: every rule then
 * depends on the shape alone. Only shapes found valid are remembered; the first tuple of each
 * shape, a tuple with a condition and any malformed one go through `findTupleProblem`, so every
 * problem is reported with its exact message.
 */
export class BulkTupleValidator {
  /** The valid shapes as (object type, relation, user type, user form) parts, compared in place. */
  private readonly recent: Shape[] = [];
  /** Past RECENT_SHAPES shapes: their shape strings. */
  private readonly valid = new Set<string>();
  /** Where `plainShape` found the current tuple's separators. */
  private readonly at = new Positions();

  constructor(private readonly model: CompiledModel) {}

  problem(t: TupleKey): TupleProblem | undefined {
    const plain = t.condition === undefined && plainShape(this.at, t);
    if (plain) {
      for (let i = 0; i < this.recent.length; i++) if (sameShape(this.at, this.recent[i] as Shape, t)) return undefined;
      if (this.recent.length === RECENT_SHAPES && this.valid.has(shapeKey(this.at, t))) return undefined;
    }
    const problem = findTupleProblem(this.model, t, 'write');
    if (problem === undefined && plain) {
      if (this.recent.length < RECENT_SHAPES) this.recent.push(shapeOf(this.at, t));
      else this.valid.add(shapeKey(this.at, t));
    }
    return problem;
  }
}

/** Shapes compared in place before a shape string is built (a model has a few dozen per store). */
const RECENT_SHAPES = 32;

/** The parts of a plain tuple's shape: `doc:1#viewer@group:g#member` → doc, viewer, group, #member. */
interface Shape {
  readonly objectType: string;
  readonly relation: string;
  readonly userType: string;
  /** '' (an object), ':*' (a wildcard) or '#relation' (a userset). */
  readonly form: string;
}

/**
 * Positions `plainShape` found in the tuple it last accepted (`scanCheckKey`'s), read by the shape
 * readers below for that same tuple; one per validator, reused, so a shape test allocates nothing.
 */
class Positions implements CheckKeyScan {
  objectColon = 0;
  userColon = 0;
  userHash = -1;
  userWildcard = false;
}

function formOf(p: Positions, u: string): string {
  if (p.userHash !== -1) return u.slice(p.userHash);
  return p.userWildcard ? ':*' : '';
}

function shapeOf(p: Positions, t: TupleKey): Shape {
  return {
    objectType: t.object.slice(0, p.objectColon),
    relation: t.relation,
    userType: t.user.slice(0, p.userColon),
    form: formOf(p, t.user),
  };
}

function shapeKey(p: Positions, t: TupleKey): string {
  return `${t.object.slice(0, p.objectColon)}\u0000${t.relation}\u0000${t.user.slice(0, p.userColon)}${formOf(p, t.user)}`;
}

/** True when the tuple `plainShape` last accepted has shape `s`; allocates nothing. */
function sameShape(p: Positions, s: Shape, t: TupleKey): boolean {
  const o = t.object;
  const u = t.user;
  if (p.objectColon !== s.objectType.length || p.userColon !== s.userType.length || t.relation !== s.relation)
    return false;
  if (!o.startsWith(s.objectType) || !u.startsWith(s.userType)) return false;
  if (p.userHash !== -1) return s.form.length === u.length - p.userHash && u.endsWith(s.form);
  return s.form === (p.userWildcard ? ':*' : '');
}

/**
 * True for a tuple whose object and user parse (`parseObject`, `parseUser`) with ids that need no
 * rule of their own (no object wildcard, no `*` in a userset id: `scanCheckKey`, one scan of each
 * string), and that is not the userset of its own object and relation; it leaves the positions
 * of the object's colon and the user's colon and `#` for the shape readers above.
 * Example: `doc:1#viewer@group:g#member` has the shape doc, viewer, group, #member.
 */
function plainShape(p: Positions, t: TupleKey): boolean {
  const o = t.object;
  const u = t.user;
  if (!scanCheckKey(o, u, p)) return false;
  const hash = p.userHash;
  // The userset of the tuple's own object and relation: `cannot write a tuple that is implicit`.
  return !(hash === o.length && u.startsWith(o) && u.length - hash - 1 === t.relation.length && u.endsWith(t.relation));
}

/** The wire message of `findTupleProblem`, or undefined when valid. */
export function validateTuple(model: CompiledModel, t: TupleKey, mode: 'write' | 'contextual'): string | undefined {
  return findTupleProblem(model, t, mode)?.message;
}

/** Cause for a user that does not parse (§4.2 rule 1). */
export function userFormCause(user: string): string {
  if (/^[^\s:#]+$/.test(user)) {
    return `the 'user' field must be an object (e.g. document:1) or an 'object#relation' or a typed wildcard (e.g. group:*)`;
  }
  if (/^[^\s:#]+:\*#[^\s:#]+$/.test(user))
    return `the 'user' field cannot reference a typed wildcard in a userset value`;
  return `the 'user' field is malformed`;
}

/** Cause when the user's type or userset relation is not in the model (§4.2 rule 2). */
export function userTypeCause(model: CompiledModel, user: ParsedUser): string | undefined {
  const type = model.types.get(user.type);
  if (!type) return `type '${user.type}' not found`;
  if (user.kind === 'userset' && !type.relations.has(user.relation))
    return `relation '${user.type}#${user.relation}' not found`;
  return undefined;
}

/** Rules 5 (tupleset) and 6 (type restriction). */
function restrictionProblem(objectType: string, relation: CompiledRelation, user: ParsedUser): string | undefined {
  const target = `'${objectType}#${relation.name}'`;
  if (relation.isTupleset && user.kind !== 'object') {
    return user.kind === 'wildcard'
      ? `unexpected wildcard relationship with tupleset relation ${target}`
      : `unexpected user '${user.type}:${user.id}#${user.relation}' with tupleset relation ${target}`;
  }
  if (relation.directTypes.some((d) => sameForm(d, user))) return undefined;
  if (user.kind === 'wildcard')
    return `the typed wildcard '${user.type}:*' is not an allowed type restriction for ${target}`;
  if (user.kind === 'userset')
    return `'${user.type}#${user.relation}' is not an allowed type restriction for ${target}`;
  return `type '${user.type}' is not an allowed type restriction for ${target}`;
}

function sameForm(d: DirectType, user: ParsedUser): boolean {
  if (d.type !== user.type) return false;
  if (user.kind === 'wildcard') return d.wildcard;
  if (user.kind === 'userset') return d.relation === user.relation;
  return !d.wildcard && d.relation === undefined;
}

/** Rule 7. */
function conditionProblem(
  model: CompiledModel,
  relation: CompiledRelation,
  user: ParsedUser,
  t: TupleKey,
): string | undefined {
  const name = t.condition?.name;
  if (!name)
    return relation.directTypes.some((d) => sameForm(d, user) && !d.condition) ? undefined : 'condition is missing';
  if (CONTROL.test(name)) return 'condition name contains forbidden characters';
  const condition = model.conditions.get(name);
  if (!condition) return 'undefined condition';
  if (!relation.directTypes.some((d) => d.type === user.type && d.condition === name))
    return 'invalid condition for type restriction';
  const context = t.condition?.context;
  if (!context) return undefined;
  // The HTTP edge refuses deeper contexts already; embedded callers reach this first.
  if (deeperThan(context, MAX_VALUE_DEPTH)) return `context nested more than ${MAX_VALUE_DEPTH} levels deep`;
  if (hasControl(context)) return 'context contains forbidden characters';
  return condition.checkContext(context);
}

function hasControl(v: JsonValue): boolean {
  if (typeof v === 'string') return CONTROL.test(v);
  if (Array.isArray(v)) return v.some(hasControl);
  if (v !== null && typeof v === 'object') return Object.entries(v).some(([k, x]) => CONTROL.test(k) || hasControl(x));
  return false;
}

/** §4.4: no self-defining tuple; stored context at most 32 KiB. */
function writeProblem(
  t: TupleKey,
  user: ParsedUser,
  objectType: string,
  objectId: string,
  problem: (cause: string, conditionProblem?: boolean) => TupleProblem,
): TupleProblem | undefined {
  if (user.kind === 'userset' && user.type === objectType && user.id === objectId && user.relation === t.relation) {
    return problem('cannot write a tuple that is implicit');
  }
  const context: JsonObject | undefined = t.condition?.context;
  const size = context ? Buffer.byteLength(JSON.stringify(context), 'utf8') : 0;
  if (size > MAX_CONDITION_CONTEXT_BYTES) {
    return problem(`condition context size limit exceeded: ${size} bytes exceeds ${MAX_CONDITION_CONTEXT_BYTES} bytes`);
  }
  return undefined;
}

/** Per-model cache of the last object type looked up, so the hot path slices no strings. */
const lastType = new WeakMap<CompiledModel, { name: string; type: CompiledType }>();

function typeOfObject(model: CompiledModel, object: string): CompiledType | undefined {
  const hit = lastType.get(model);
  if (
    hit &&
    object.length > hit.name.length &&
    object.charCodeAt(hit.name.length) === 58 &&
    object.startsWith(hit.name)
  )
    return hit.type;
  const colon = object.indexOf(':');
  const name = colon === -1 ? object : object.slice(0, colon);
  const type = model.types.get(name);
  if (type) lastType.set(model, { name, type });
  return type;
}

/**
 * Read-time validity of a stored tuple under `model` (§4.5): the relation exists; a tupleset relation
 * takes only plain objects; a restriction of the user's form exists; no condition ⇒ such a restriction
 * is unconditioned; a condition ⇒ it exists in the model and a restriction of the user's type names it.
 * Scans the relation's (short) restriction list comparing in place: no allocation per call.
 */
export function isValidAtRead(
  model: CompiledModel,
  object: string,
  relation: string,
  user: string,
  conditionName: string | undefined,
): boolean {
  const rel = typeOfObject(model, object)?.relations.get(relation);
  if (!rel) return false;
  const colon = user.indexOf(':');
  const hash = user.lastIndexOf('#');
  const kind = hash > colon ? 2 : user.length === colon + 2 && user.charCodeAt(colon + 1) === 42 ? 1 : 0; // 0 object, 1 wildcard, 2 userset
  if (colon <= 0 || (rel.isTupleset && kind !== 0)) return false;
  if (conditionName && !model.conditions.has(conditionName)) return false;
  let formOk = false;
  let conditionOk = false;
  for (const d of rel.directTypes) {
    if (d.type.length !== colon || !user.startsWith(d.type)) continue;
    if (conditionName && d.condition === conditionName) conditionOk = true;
    const form =
      kind === 1 ? d.wildcard : kind === 2 ? relationMatches(d, user, hash) : !d.wildcard && d.relation === undefined;
    if (!form) continue;
    formOk = true;
    if (!conditionName && !d.condition) conditionOk = true;
  }
  return formOk && conditionOk;
}

function relationMatches(d: DirectType, user: string, hash: number): boolean {
  return d.relation !== undefined && d.relation.length === user.length - hash - 1 && user.endsWith(d.relation);
}
