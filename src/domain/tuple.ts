// Parsing of the string forms of objects and users (semantics.md §1.2), and tuple key helpers.
// `document:1` is an object; `group:eng#member` a userset; `user:*` a typed wildcard.

import type { TupleKey } from './types.js';

export type ParsedUser =
  | { readonly kind: 'object'; readonly type: string; readonly id: string }
  | { readonly kind: 'userset'; readonly type: string; readonly id: string; readonly relation: string }
  | { readonly kind: 'wildcard'; readonly type: string };

export interface ParsedObject {
  readonly type: string;
  readonly id: string;
}

/**
 * Non-empty, with no control character (U+0000–U+001F, U+007F) and no JS `\s` character. A scan
 * rather than two regex tests: every Check parses three keys (test/domain/tuple-parts.test.ts
 * compares it with the regexes on generated strings).
 */
export function cleanPart(s: string): boolean {
  const n = s.length;
  if (n === 0) return false;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x7f) {
      if (c <= 0x20) return false;
    } else if (c === 0x7f || (c >= 0xa0 && isUnicodeSpace(c))) return false;
  }
  return true;
}

/** JS `\s` above U+007F: NBSP, the Zs spaces, the line and paragraph separators, BOM. */
function isUnicodeSpace(c: number): boolean {
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** `T:id` with exactly one `:` not at position 0, non-empty id, no `#`. Does not reject id `*`. */
export function parseObject(value: string): ParsedObject | undefined {
  const colon = value.indexOf(':');
  if (colon <= 0 || value.indexOf(':', colon + 1) !== -1 || value.includes('#')) return undefined;
  const type = value.slice(0, colon);
  const id = value.slice(colon + 1);
  if (!cleanPart(type) || !cleanPart(id)) return undefined;
  return { type, id };
}

/** An object, a userset (split on the last `#`) or a typed wildcard; bare ids are rejected. */
export function parseUser(value: string): ParsedUser | undefined {
  const hash = value.lastIndexOf('#');
  if (hash !== -1) {
    const obj = parseObject(value.slice(0, hash));
    const relation = value.slice(hash + 1);
    if (!obj || obj.id === '*' || obj.id.includes('*') || !cleanPart(relation) || relation.includes(':'))
      return undefined;
    return { kind: 'userset', type: obj.type, id: obj.id, relation };
  }
  const obj = parseObject(value);
  if (!obj) return undefined;
  if (obj.id === '*') return { kind: 'wildcard', type: obj.type };
  return { kind: 'object', type: obj.type, id: obj.id };
}

/** The canonical string of a tuple key, used in messages: `object#relation@user`. */
export function tupleString(t: Pick<TupleKey, 'object' | 'relation' | 'user'>): string {
  return `${t.object}#${t.relation}@${t.user}`;
}

/** The identity of a tuple (condition excluded): two keys with equal identity are the same tuple. */
export function tupleIdentity(t: Pick<TupleKey, 'object' | 'relation' | 'user'>): string {
  return `${t.object}\u0000${t.relation}\u0000${t.user}`;
}

/** Type part of `T:id`, `T:id#R` or `T:*` (text before the first `:`). */
export function typeOf(objectOrUser: string): string {
  const colon = objectOrUser.indexOf(':');
  return colon === -1 ? objectOrUser : objectOrUser.slice(0, colon);
}
