// The AuthZEN 1.0 information model (Subject, Resource, Action, Context; spec §5) parsed from
// untyped bodies, and its mapping onto OpenFGA's terms as OpenFGA's experimental AuthZEN does:
// user = subject.type:subject.id, relation = action.name, object = resource.type:resource.id,
// properties flattened into the condition context as `subject_<key>`, `resource_<key>` and
// `action_<key>`, with the request's own context keys winning on conflicts.

import type { JsonObject } from '../../domain/types.js';
import type { CheckTupleKey } from '../../engine/contract.js';
import { AppError } from '../../errors.js';
import type { ApiRequest } from '../endpoint.js';
import { P, isObj, structValue, typeError, type Obj } from '../validate.js';

export interface Subject {
  readonly type: string;
  readonly id: string;
  readonly properties?: JsonObject | undefined;
}

export type Resource = Subject;

export interface Action {
  readonly name: string;
  readonly properties?: JsonObject | undefined;
}

/** A search's filter entity: the type only (an id, if sent, is ignored, spec §8). */
export interface TypeFilter {
  readonly type: string;
  readonly properties?: JsonObject | undefined;
}

interface Rule {
  readonly re: RegExp;
  /** The pattern as error messages quote it. */
  readonly text: string;
}

// RE2's `\s` (ASCII whitespace) spelled out, as in validate.ts; `u` counts code points.
const rule = (excluded: string, max: number): Rule => ({
  re: new RegExp(`^[^${excluded}\\t\\n\\f\\r ]{1,${max}}$`, 'u'),
  text: `^[^${excluded}\\\\s]{1,${max}}$`,
});

/** Types and action names as OpenFGA's AuthZEN proto has them. */
const NAME = rule(':#@', 50);
/**
 * Ids exclude only what would break `type:id` (and whitespace). OpenFGA's proto also excludes
 * `@` from subject ids, which refuses the spec's own e-mail-address subjects; latch takes them.
 */
const SUBJECT_ID = rule(':#', 500);
const RESOURCE_ID = rule(':#', 256);

function field(message: string, name: string, value: unknown, r: Rule): string {
  if (value === undefined || value === null || value === '')
    throw new AppError('validation_error', `invalid ${message}.${name}: value is required`);
  if (typeof value !== 'string') throw typeError(name.toLowerCase(), 'string', value);
  if (!r.re.test(value))
    throw new AppError(
      'validation_error',
      `invalid ${message}.${name}: value does not match regex pattern "${r.text}"`,
    );
  return value;
}

function properties(v: Obj): JsonObject | undefined {
  return structValue(v['properties'], 'properties');
}

/** A message field that must be present. */
function required(body: Obj, key: string, message: string, name: string): Obj {
  const v = body[key];
  if (v === undefined || v === null)
    throw new AppError('validation_error', `invalid ${message}.${name}: value is required`);
  if (!isObj(v)) throw typeError(key, 'message', v);
  return v;
}

/** A message field that may be absent. */
export function optional(body: Obj, key: string): Obj | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) throw typeError(key, 'message', v);
  return v;
}

export function subjectOf(v: Obj): Subject {
  return {
    type: field('Subject', 'Type', v['type'], NAME),
    id: field('Subject', 'Id', v['id'], SUBJECT_ID),
    properties: properties(v),
  };
}

export function resourceOf(v: Obj): Resource {
  return {
    type: field('Resource', 'Type', v['type'], NAME),
    id: field('Resource', 'Id', v['id'], RESOURCE_ID),
    properties: properties(v),
  };
}

export function actionOf(v: Obj): Action {
  return { name: field('Action', 'Name', v['name'], NAME), properties: properties(v) };
}

function subjectFilterOf(v: Obj): TypeFilter {
  return { type: field('SubjectFilter', 'Type', v['type'], NAME), properties: properties(v) };
}

function resourceFilterOf(v: Obj): TypeFilter {
  return { type: field('ResourceFilter', 'Type', v['type'], NAME), properties: properties(v) };
}

export const requiredSubject = (b: Obj, m: string): Subject => subjectOf(required(b, 'subject', m, 'Subject'));
export const requiredResource = (b: Obj, m: string): Resource => resourceOf(required(b, 'resource', m, 'Resource'));
export const requiredAction = (b: Obj, m: string): Action => actionOf(required(b, 'action', m, 'Action'));
export const requiredSubjectFilter = (b: Obj, m: string): TypeFilter =>
  subjectFilterOf(required(b, 'subject', m, 'Subject'));
export const requiredResourceFilter = (b: Obj, m: string): TypeFilter =>
  resourceFilterOf(required(b, 'resource', m, 'Resource'));

/** `context`: any JSON object, or absent. */
export function contextOf(body: Obj): JsonObject | undefined {
  return structValue(body['context'], 'context');
}

/** `page` (spec §8): accepted and not used; only its shape is checked. */
export function validatePage(body: Obj): void {
  const page = optional(body, 'page');
  if (!page) return;
  const token = page['token'] ?? page['next_token'];
  if (token !== undefined && token !== null && typeof token !== 'string') throw typeError('token', 'string', token);
  const limit = page['limit'];
  if (limit !== undefined && limit !== null && !(typeof limit === 'number' && Number.isInteger(limit) && limit >= 0))
    throw typeError('limit', 'uint32', limit);
}

/**
 * The Check context of an evaluation: the entities' properties under their prefixes, then the
 * request context (which wins). Undefined when there is nothing, so a plain evaluation is a
 * plain Check.
 */
export function mergedContext(
  context: JsonObject | undefined,
  subject: { readonly properties?: JsonObject | undefined },
  resource: { readonly properties?: JsonObject | undefined },
  action: Action | undefined,
): JsonObject | undefined {
  if (!subject.properties && !resource.properties && !action?.properties) return context;
  const out: Record<string, unknown> = {};
  for (const [prefix, props] of [
    ['subject_', subject.properties],
    ['resource_', resource.properties],
    ['action_', action?.properties],
  ] as const) {
    if (props) for (const [k, v] of Object.entries(props)) out[prefix + k] = v;
  }
  if (context) Object.assign(out, context);
  return out as JsonObject;
}

/** The subject as an OpenFGA user (`user:anne`), bounded as Check bounds its user. */
export function userOf(subject: Subject): string {
  const user = `${subject.type}:${subject.id}`;
  if (!P.checkUser.test(user))
    throw new AppError(
      'validation_error',
      `invalid CheckRequestTupleKey.User: value does not match regex pattern "${P.checkUser.text}"`,
    );
  return user;
}

/** The tuple key of an evaluation, bounded as Check bounds its own (docs/reference/http-api.md §4.14). */
export function checkKeyOf(subject: Subject, resource: Resource, action: Action): CheckTupleKey {
  const user = userOf(subject);
  const object = `${resource.type}:${resource.id}`;
  if (!P.object.test(object))
    throw new AppError(
      'validation_error',
      `invalid CheckRequestTupleKey.Object: value does not match regex pattern "${P.object.text}"`,
    );
  return { user, relation: action.name, object };
}

/**
 * The model: the `Openfga-Authorization-Model-Id` request header when it holds a ULID, else the
 * store's latest (an absent, empty or malformed header is ignored, as OpenFGA does). The msgpack
 * channel has no headers: there the request's `authorization_model_id` field plays its part.
 */
export const MODEL_HEADER = 'openfga-authorization-model-id';

export function modelFromHeader(req: ApiRequest): string | undefined {
  const v = req.headers?.[MODEL_HEADER] ?? req.params['authorization_model_id'];
  return v !== undefined && P.ulid.test(v) ? v : undefined;
}
