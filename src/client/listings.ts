// Readers of listing replies (docs/reference/http-api.md §4.17–4.19), faster than JSON.parse and
// exactly as strict: a ListUsers or ListObjects page body, and the NDJSON lines of
// StreamedListObjects. Each reader first scans the bytes latch writes (src/api/listing-lines.ts:
// no whitespace, fields in one order, ids without escapes); a body that differs in any way (other
// whitespace or key order, an escape, another server's rendering) is parsed by JSON.parse instead
// and its shape checked, so both paths give the same answer, and anything that is not the
// documented shape (invalid JSON, a wrong or missing field, an unknown key, a truncated body) is
// an ApiError `invalid_response`, never a partial or different result. Imports nothing but the
// JSON client's error type (it runs in Node and in the browser).

import { ApiError, FallbackCode } from './json.js';

/** A user of a ListUsers answer (§3.5): exactly one of the three forms. */
export type ListedUser =
  | { readonly object: { readonly type: string; readonly id: string } }
  | { readonly userset: { readonly type: string; readonly id: string; readonly relation: string } }
  | { readonly wildcard: { readonly type: string } };

/** A ListUsers answer: its users in order and the token of the next page ('' after the last, or unpaged). */
export interface UsersPage {
  readonly users: ListedUser[];
  readonly continuation_token: string;
}

/** A ListObjects answer: its objects in order and the token of the next page ('' after the last, or unpaged). */
export interface ObjectsPage {
  readonly objects: string[];
  readonly continuation_token: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const CLOSE_ARRAY = 0x5d;

/**
 * The index of the `"` ending the JSON string whose characters start at `from`, when none of them
 * needs JSON.parse (an escape, or a control character JSON.parse refuses); -1 otherwise (and at
 * the text's end). Up to that quote, JSON.parse reads the characters as they are.
 */
export function plainEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i;
    if (c < 0x20 || c === BACKSLASH) return -1;
  }
  return -1;
}

function invalid(status: number, what: string): ApiError {
  return new ApiError(status, FallbackCode.invalidResponse, what);
}

const PAGE_TOKEN = '],"continuation_token":"';
const PAGE_END = '"}';

/**
 * The continuation token of a page whose list ended at `at` (its `]`) as latch writes it, or
 * undefined: `],"continuation_token":"T"}` up to the text's end, or `]}` (an unpaged answer).
 */
function fastTail(text: string, at: number): string | undefined {
  if (at === text.length - 2 && text.charCodeAt(at + 1) === 0x7d) return '';
  if (!text.startsWith(PAGE_TOKEN, at)) return undefined;
  const from = at + PAGE_TOKEN.length;
  const end = plainEnd(text, from);
  if (end === -1 || end + PAGE_END.length !== text.length || !text.endsWith(PAGE_END)) return undefined;
  return text.slice(from, end);
}

const USERS_HEAD = '{"users":[';
const OBJECT = '{"object":{"type":"';
const USERSET = '{"userset":{"type":"';
const WILDCARD = '{"wildcard":{"type":"';
const ID = '","id":"';
const RELATION = '","relation":"';
const USER_END = '"}}';

/**
 * A ListUsers answer's body (`{"users": [...], "continuation_token": "…"}`) as JSON.parse would
 * read it, its shape checked (see the head of this file); `status` goes into the error.
 * A missing `continuation_token` (an unpaged answer, or OpenFGA's) reads as ''.
 *
 *   decodeUsersPage('{"users":[{"object":{"type":"user","id":"anne"}}],"continuation_token":""}')
 *     → {users: [{object: {type: 'user', id: 'anne'}}], continuation_token: ''}
 */
export function decodeUsersPage(text: string, status = 200): UsersPage {
  return fastUsers(text) ?? usersOf(parse(text, status), status);
}

/**
 * The users page as latch writes it, or undefined for any other text. No allocation but the
 * answer: a type equal to the previous user's is that same string (one slice per page's type).
 */
function fastUsers(text: string): UsersPage | undefined {
  if (!text.startsWith(USERS_HEAD)) return undefined;
  const users: ListedUser[] = [];
  let at = USERS_HEAD.length;
  let type = '';
  if (text.charCodeAt(at) !== CLOSE_ARRAY)
    for (;;) {
      const form = text.startsWith(OBJECT, at) ? 0 : text.startsWith(USERSET, at) ? 1 : 2;
      if (form === 2 && !text.startsWith(WILDCARD, at)) return undefined;
      at += form === 0 ? OBJECT.length : form === 1 ? USERSET.length : WILDCARD.length;
      let end = plainEnd(text, at);
      if (end === -1) return undefined;
      if (end - at !== type.length || !text.startsWith(type, at)) type = text.slice(at, end);
      if (form === 2) users.push({ wildcard: { type } });
      else {
        if (!text.startsWith(ID, end)) return undefined;
        at = end + ID.length;
        end = plainEnd(text, at);
        if (end === -1) return undefined;
        const id = text.slice(at, end);
        if (form === 0) users.push({ object: { type, id } });
        else {
          if (!text.startsWith(RELATION, end)) return undefined;
          at = end + RELATION.length;
          end = plainEnd(text, at);
          if (end === -1) return undefined;
          users.push({ userset: { type, id, relation: text.slice(at, end) } });
        }
      }
      if (!text.startsWith(USER_END, end)) return undefined;
      at = end + USER_END.length;
      const c = text.charCodeAt(at);
      if (c === CLOSE_ARRAY) break;
      if (c !== COMMA) return undefined;
      at++;
    }
  const token = fastTail(text, at);
  return token === undefined ? undefined : { users, continuation_token: token };
}

function parse(text: string, status: number): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalid(status, `not JSON: ${text.slice(0, 200)}`);
  }
}

type Fields = Record<string, unknown>;

/** True for a JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value` as an object whose keys are all in `allowed` and whose `required` ones are strings. */
function record(value: unknown, allowed: readonly string[], required: readonly string[]): Fields | undefined {
  if (!isRecord(value)) return undefined;
  const o = value;
  for (const k of Object.keys(o)) if (!allowed.includes(k)) return undefined;
  for (const k of required) if (typeof o[k] !== 'string') return undefined;
  return o;
}

/** The page's list under `key` and its token ('' when absent), or an error naming the fault. */
function pageOf(json: unknown, key: string, status: number): { list: unknown[]; token: string } {
  const o = record(json, [key, 'continuation_token'], []);
  const list = o?.[key];
  if (!o || !Array.isArray(list)) throw invalid(status, `not a page of ${key}`);
  const token = o.continuation_token ?? '';
  if (typeof token !== 'string') throw invalid(status, 'continuation_token is not a string');
  return { list, token };
}

const USER_FORMS: readonly (readonly [string, readonly string[]])[] = [
  ['object', ['type', 'id']],
  ['userset', ['type', 'id', 'relation']],
  ['wildcard', ['type']],
];

/** A parsed ListUsers answer whose shape is checked; its objects are returned as they are. */
function usersOf(json: unknown, status: number): UsersPage {
  const { list, token } = pageOf(json, 'users', status);
  for (let i = 0; i < list.length; i++) {
    const u = list[i];
    const keys = isRecord(u) ? Object.keys(u) : [];
    const form = keys.length === 1 ? USER_FORMS.find(([name]) => name === keys[0]) : undefined;
    if (!form || !record((u as Fields)[form[0]], form[1], form[1]))
      throw invalid(status, `users[${i}] is not one of {object}, {userset}, {wildcard}`);
  }
  return { users: list as ListedUser[], continuation_token: token };
}

const OBJECTS_HEAD = '{"objects":[';

/**
 * A ListObjects answer's body (`{"objects": [...], "continuation_token": "…"}`) as JSON.parse
 * would read it, its shape checked (see the head of this file); `status` goes into the error.
 * A missing `continuation_token` (an unpaged answer) reads as ''.
 */
export function decodeObjectsPage(text: string, status = 200): ObjectsPage {
  return fastObjects(text) ?? objectsOf(parse(text, status), status);
}

/** The objects page as latch writes it, or undefined for any other text. */
function fastObjects(text: string): ObjectsPage | undefined {
  if (!text.startsWith(OBJECTS_HEAD)) return undefined;
  const objects: string[] = [];
  let at = OBJECTS_HEAD.length;
  if (text.charCodeAt(at) !== CLOSE_ARRAY)
    for (;;) {
      if (text.charCodeAt(at) !== QUOTE) return undefined;
      const end = plainEnd(text, at + 1);
      if (end === -1) return undefined;
      objects.push(text.slice(at + 1, end));
      at = end + 1;
      const c = text.charCodeAt(at);
      if (c === CLOSE_ARRAY) break;
      if (c !== COMMA) return undefined;
      at++;
    }
  const token = fastTail(text, at);
  return token === undefined ? undefined : { objects, continuation_token: token };
}

function objectsOf(json: unknown, status: number): ObjectsPage {
  const { list, token } = pageOf(json, 'objects', status);
  for (let i = 0; i < list.length; i++)
    if (typeof list[i] !== 'string') throw invalid(status, `objects[${i}] is not a string`);
  return { objects: list as string[], continuation_token: token };
}
