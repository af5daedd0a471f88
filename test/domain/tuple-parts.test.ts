// cleanPart (the scan behind parseObject/parseUser) against the two regexes it replaced, on every
// BMP code unit alone and inside ids, and on random strings mixing the borders of each class.

import { describe, expect, it } from 'vitest';
import { cleanPart, parseObject, parseUser } from '../../src/domain/tuple.js';

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
