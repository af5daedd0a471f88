// cleanPart (the scan behind parseObject/parseUser) against the two regexes it replaced, on every
// BMP code unit alone and inside ids, and on random strings mixing the borders of each class; and
// scanCheckKey (Check's one-scan proof of a well-formed key) against parseObject/parseUser; and
// TupleIdentitySet against a Set of joined identity strings.

import { describe, expect, it } from 'vitest';
import {
  checkKeyParts,
  cleanPart,
  parseObject,
  parseUser,
  scanCheckKey,
  TupleIdentitySet,
  type CheckKeyParts,
  type CheckKeyScan,
} from '../../src/domain/tuple.js';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const SPACE = /\s/;
const byRegex = (s: string): boolean => s.length > 0 && !SPACE.test(s) && !CONTROL.test(s);

describe('cleanPart = non-empty, no control character, no JS \\s', () => {
  it('agrees with the regexes on every UTF-16 code unit, alone and between letters', () => {
    const differ: number[] = [];
    for (let c = 0; c <= 0xffff; c++) {
      const ch = String.fromCharCode(c);
      if (cleanPart(ch) !== byRegex(ch) || cleanPart(`ab${ch}cd`) !== byRegex(`ab${ch}cd`)) differ.push(c);
    }
    expect(differ).toEqual([]);
  });

  it('agrees on 20k random strings drawn from the class borders', () => {
    const borders = [
      0x00, 0x09, 0x0a, 0x1f, 0x20, 0x21, 0x7e, 0x7f, 0x80, 0x85, 0x9f, 0xa0, 0xa1, 0x1680, 0x1fff, 0x2000, 0x200a,
      0x200b, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xd83d, 0xde00, 0xfeff, 0xffff,
    ];
    let seed = 7;
    const next = (n: number): number => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
    let agreed = 0;
    for (let i = 0; i < 20_000; i++) {
      let s = '';
      const len = next(6);
      for (let k = 0; k < len; k++)
        s += next(3) === 0 ? String.fromCharCode(borders[next(borders.length)] as number) : 'x';
      expect(cleanPart(s), JSON.stringify(s)).toBe(byRegex(s));
      agreed++;
    }
    expect(agreed).toBe(20_000);
  });

  it('document:1 parses; "document:a b", "document:\\u00a0", "user:\\u0001#member" do not', () => {
    expect(parseObject('document:1')).toEqual({ type: 'document', id: '1' });
    expect(parseObject('document:a b')).toBeUndefined();
    expect(parseObject('document:\u00a0')).toBeUndefined();
    expect(parseUser('group:\u0001#member')).toBeUndefined();
    expect(parseUser('group:eng#mem\u2028ber')).toBeUndefined();
    expect(parseUser('group:eng#member')).toEqual({ kind: 'userset', type: 'group', id: 'eng', relation: 'member' });
  });
});

/** The parts the scan proves, sliced at its positions; undefined where it refuses the key. */
function splitCheckKey(object: string, user: string): CheckKeyParts | undefined {
  const at: CheckKeyScan = { objectColon: 0, userColon: 0, userHash: -1, userWildcard: false };
  if (!scanCheckKey(object, user, at)) return undefined;
  const hash = at.userHash;
  return {
    objectType: object.slice(0, at.objectColon),
    userBase: hash === -1 ? user : user.slice(0, hash),
    userType: user.slice(0, at.userColon),
    userRelation: hash === -1 ? undefined : user.slice(hash + 1),
    userWildcard: at.userWildcard,
  };
}

describe('scanCheckKey = parseObject + parseUser, the object no typed wildcard', () => {
  /** The parts the two parsers give, or undefined where Check validation refuses the key's form. */
  const byParsers = (object: string, user: string): CheckKeyParts | undefined => {
    const o = parseObject(object);
    const u = parseUser(user);
    return !o || o.id === '*' || !u ? undefined : checkKeyParts(o, u);
  };

  it('agrees on every string of up to 5 units over the delimiters and class borders', () => {
    const units = ['a', ':', '#', '*', ' ', '\u0001', '\u00a0'];
    const all: string[] = [''];
    for (let len = 1, layer = ['']; len <= 5; len++) {
      layer = layer.flatMap((s) => units.map((u) => s + u));
      all.push(...layer);
    }
    let compared = 0;
    for (const s of all) {
      expect(splitCheckKey(s, 'user:1'), JSON.stringify(s)).toEqual(byParsers(s, 'user:1'));
      expect(splitCheckKey('doc:1', s), JSON.stringify(s)).toEqual(byParsers('doc:1', s));
      compared += 2;
    }
    expect(compared).toBe(2 * all.length);
  });

  it('agrees on 20k random keys built from typed parts', () => {
    const parts = ['doc', 'user', '1', '*', 'a*b', '', 'x y', 'mem\u2028ber', 'g\u007f'];
    const seps = [':', '#', ':*', '', '::', '##'];
    let seed = 11;
    const next = (n: number): number => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
    const pick = (xs: readonly string[]): string => xs[next(xs.length)] as string;
    for (let i = 0; i < 20_000; i++) {
      const object = pick(parts) + pick(seps) + pick(parts);
      const user = pick(parts) + pick(seps) + pick(parts) + (next(2) === 0 ? '' : pick(seps) + pick(parts));
      expect(splitCheckKey(object, user), `${object} ${user}`).toEqual(byParsers(object, user));
    }
  });

  it('doc:1 with group:eng#member, user:*, user:a*b; not doc:*, group:e*g#member, group:eng#a:b', () => {
    expect(splitCheckKey('doc:1', 'group:eng#member')).toEqual({
      objectType: 'doc',
      userBase: 'group:eng',
      userType: 'group',
      userRelation: 'member',
      userWildcard: false,
    });
    expect(splitCheckKey('doc:1', 'user:*')?.userWildcard).toBe(true);
    expect(splitCheckKey('doc:1', 'user:a*b')?.userWildcard).toBe(false);
    expect(splitCheckKey('doc:*', 'user:1')).toBeUndefined();
    expect(splitCheckKey('doc:1', 'group:e*g#member')).toBeUndefined();
    expect(splitCheckKey('doc:1', 'group:eng#a:b')).toBeUndefined();
  });
});

describe('TupleIdentitySet', () => {
  // Sized for no tuples, for fewer than are added (it grows past the size given), and for all.
  it.each([0, 16, 5000])(
    'expecting %i tuples, finds exactly the tuples a Set of their joined strings finds again',
    (expected) => {
      // Parts drawn from few short strings (splits like "ab"+"c" / "a"+"bc" included), so that
      // repeats, hash collisions and table growth all happen.
      const parts = ['a', 'b', 'ab', 'c', 'bc', 'doc:1', 'user:x', ''];
      let seed = 7;
      const pick = (): string => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return parts[(seed >>> 16) % parts.length] as string;
      };
      const set = new TupleIdentitySet(expected);
      const strings = new Set<string>();
      let repeats = 0;
      for (let i = 0; i < 5000; i++) {
        const t = { object: pick() + pick(), relation: pick(), user: pick() + pick() };
        const id = `${t.object}\u0000${t.relation}\u0000${t.user}`;
        const fresh = !strings.has(id);
        strings.add(id);
        if (!fresh) repeats++;
        expect(set.add(t)).toBe(fresh);
      }
      expect(repeats).toBeGreaterThan(1000);
      expect(strings.size).toBeGreaterThan(100);
    },
  );
});
