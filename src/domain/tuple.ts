// Parsing of the string forms of objects and users (docs/reference/semantics.md §1.2), and tuple key helpers.
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
  for (let i = 0; i < n; i++) if (!cleanUnit(s.charCodeAt(i))) return false;
  return true;
}

/** `cleanPart` of `s.slice(from, to)`, without the slice. */
export function cleanRange(s: string, from: number, to: number): boolean {
  if (to <= from) return false;
  for (let i = from; i < to; i++) if (!cleanUnit(s.charCodeAt(i))) return false;
  return true;
}

/** A UTF-16 code unit `cleanPart` allows: no control character, no JS `\s`. */
function cleanUnit(c: number): boolean {
  if (c < 0x7f) return c > 0x20;
  return c !== 0x7f && (c < 0xa0 || !isUnicodeSpace(c));
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

/**
 * A Check key's strings split once, by the validation that proves them (`scanCheckKey`), and read
 * again by the walker's request preparation instead of a second parse. Example: object `doc:1`,
 * user `group:eng#member` → {objectType: 'doc', userBase: 'group:eng', userType: 'group',
 * userRelation: 'member', userWildcard: false}.
 */
export interface CheckKeyParts {
  readonly objectType: string;
  /** The user without its `#relation`: the user itself for an object or a wildcard. */
  readonly userBase: string;
  readonly userType: string;
  /** A userset's relation; undefined for an object or a wildcard. */
  readonly userRelation: string | undefined;
  /** `T:*`. */
  readonly userWildcard: boolean;
}

/** Where a well-formed Check key's strings split (`scanCheckKey`): positions only, no strings. */
export interface CheckKeyScan {
  /** The object's `:`. */
  objectColon: number;
  /** The user's `:`. */
  userColon: number;
  /** The user's `#`, -1 for an object or a wildcard. */
  userHash: number;
  userWildcard: boolean;
}

/** The parts of a Check key from its parsed object and user. */
export function checkKeyParts(object: ParsedObject, user: ParsedUser): CheckKeyParts {
  return {
    objectType: object.type,
    userBase: user.kind === 'wildcard' ? `${user.type}:*` : `${user.type}:${user.id}`,
    userType: user.type,
    userRelation: user.kind === 'userset' ? user.relation : undefined,
    userWildcard: user.kind === 'wildcard',
  };
}

/**
 * Whether a Check key's object and user are well formed as `parseObject` and `parseUser` define
 * them, with an object that is no typed wildcard; positions into `at` (a record the caller reuses):
 * one scan per string, nothing sliced or allocated. Every Check runs this
 * (test/domain/tuple-parts.test.ts compares it with the two parsers).
 */
export function scanCheckKey(object: string, user: string, at: CheckKeyScan): boolean {
  const oc = objectColon(object);
  if (oc === -1 || (object.length === oc + 2 && object.charCodeAt(oc + 1) === STAR)) return false;
  // The user in one forward scan. Its base holds no `#`, so a valid user has at most one `#`
  // (the last, parseUser's split), the relation after it no `:`, a userset's id no `*`.
  const n = user.length;
  let colon = -1;
  let hash = -1;
  let star = false;
  for (let i = 0; i < n; i++) {
    const c = user.charCodeAt(i);
    if (c === HASH) {
      if (hash !== -1) return false;
      hash = i;
    } else if (c === COLON) {
      if (hash !== -1 || colon !== -1) return false;
      colon = i;
    } else if (!cleanUnit(c)) return false;
    else if (c === STAR && colon !== -1 && hash === -1) star = true;
  }
  const end = hash === -1 ? n : hash;
  if (colon <= 0 || colon >= end - 1) return false;
  if (hash !== -1 && (star || hash === n - 1)) return false;
  at.objectColon = oc;
  at.userColon = colon;
  at.userHash = hash;
  at.userWildcard = hash === -1 && n === colon + 2 && star;
  return true;
}

const STAR = 0x2a;
const COLON = 0x3a;
const HASH = 0x23;

/** The `:` of `s` when it is a `T:id` parseObject accepts (one `:`, no `#`, clean parts), else -1. */
function objectColon(s: string): number {
  const n = s.length;
  let colon = -1;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c === COLON) {
      if (colon !== -1) return -1;
      colon = i;
    } else if (c === HASH || !cleanUnit(c)) return -1;
  }
  return colon > 0 && colon < n - 1 ? colon : -1;
}

/** The canonical string of a tuple key, used in messages: `object#relation@user`. */
export function tupleString(t: Pick<TupleKey, 'object' | 'relation' | 'user'>): string {
  return `${t.object}#${t.relation}@${t.user}`;
}

/** FNV-1a of the UTF-16 units of `s`, continuing from `h`. */
function fnv(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return Math.imul(h ^ 0, 0x01000193); // a separator: ("ab", "c") and ("a", "bc") differ
}

/**
 * A set of tuple identities (object, relation, user; the condition excluded: two keys with equal
 * identity are the same tuple) that builds no string per tuple: a hash of the three strings'
 * characters into an open-addressed table of positions, the strings compared on a hit. A chunk of
 * 50,000 tuples costs one table of Int32 slots, where a `Set` of identity strings builds,
 * flattens and hashes one string per tuple.
 */
export class TupleIdentitySet {
  private slots: Int32Array;
  private readonly items: Pick<TupleKey, 'object' | 'relation' | 'user'>[] = [];

  /**
   * `expected`: the tuples the caller will add, when known (an import chunk), so the table is
   * made once at its final size instead of rehashed at every doubling (measured on 50,000-tuple
   * chunks: ≈ 3× less time per add).
   */
  constructor(expected = 0) {
    let size = 64;
    while (size < expected * 2) size *= 2;
    this.slots = new Int32Array(size);
  }

  /** Adds `t`; false (nothing added) when a tuple with the same identity is already in. */
  add(t: Pick<TupleKey, 'object' | 'relation' | 'user'>): boolean {
    if ((this.items.length + 1) * 2 > this.slots.length) this.grow();
    const mask = this.slots.length - 1;
    let at = fnv(fnv(fnv(0x811c9dc5, t.object), t.relation), t.user) & mask;
    for (let s = this.slots[at] ?? 0; s !== 0; s = this.slots[at] ?? 0) {
      const o = this.items[s - 1] as TupleKey;
      if (o.object === t.object && o.relation === t.relation && o.user === t.user) return false;
      at = (at + 1) & mask;
    }
    this.items.push(t);
    this.slots[at] = this.items.length;
    return true;
  }

  private grow(): void {
    this.slots = new Int32Array(this.slots.length * 2);
    const mask = this.slots.length - 1;
    for (let i = 0; i < this.items.length; i++) {
      const t = this.items[i] as TupleKey;
      let at = fnv(fnv(fnv(0x811c9dc5, t.object), t.relation), t.user) & mask;
      while (this.slots[at] !== 0) at = (at + 1) & mask;
      this.slots[at] = i + 1;
    }
  }
}

/** Type part of `T:id`, `T:id#R` or `T:*` (text before the first `:`). */
export function typeOf(objectOrUser: string): string {
  const colon = objectOrUser.indexOf(':');
  return colon === -1 ? objectOrUser : objectOrUser.slice(0, colon);
}

/** True when `object` is of type `type` (`type:` starts it): no slice, for loops over runs of one type. */
export function hasType(object: string, type: string): boolean {
  return object.startsWith(type) && object.charCodeAt(type.length) === 0x3a;
}

/**
 * The tuples grouped by object type: the types in the order of their first tuple, input order
 * within a type (a bulk import logs one changelog record per type). The same array when it is
 * grouped already (one pass, no allocation per tuple then).
 */
export function groupedByType<T extends { readonly object: string }>(tuples: readonly T[]): readonly T[] {
  const seen = new Set<string>();
  let type = '';
  for (let i = 0; i < tuples.length; i++) {
    const o = (tuples[i] as T).object;
    if (i > 0 && hasType(o, type)) continue;
    type = typeOf(o);
    if (seen.has(type)) return regroup(tuples);
    seen.add(type);
  }
  return tuples;
}

function regroup<T extends { readonly object: string }>(tuples: readonly T[]): T[] {
  const groups = new Map<string, T[]>();
  for (const t of tuples) {
    const type = typeOf(t.object);
    const g = groups.get(type);
    if (g) g.push(t);
    else groups.set(type, [t]);
  }
  return [...groups.values()].flat();
}
