// The field patterns' scanners answer exactly as their regexes: every pattern, on strings drawn
// around each length bound from an alphabet of the characters that matter (excluded ASCII, RE2
// whitespace, Unicode spaces RE2 does not count, NUL, surrogate pairs, lone surrogates).
import { expect, test } from 'vitest';
import { P, storeId } from '../../src/api/validate.js';

const ALPHABET = [
  'a',
  'Z',
  '0',
  '9',
  '_',
  '-',
  ':',
  '#',
  '@',
  '*',
  '.',
  '/',
  '=',
  '\t',
  '\n',
  '\f',
  '\r',
  ' ',
  '\v',
  '\u0000',
  '\u00a0',
  '\u2028',
  'é',
  '\u{1F600}',
  '\ud83d',
  '\ude00',
  'A',
  'H',
  'I',
  'L',
  'O',
  'U',
];

/** A deterministic generator (mulberry32): the same strings on every run. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('every pattern: the scanner and the regex agree on generated strings', () => {
  const next = rng(20261123);
  const pick = (xs: readonly string[]): string => xs[Math.floor(next() * xs.length)] as string;
  let accepted = 0;
  let checked = 0;
  for (const [name, p] of Object.entries(P)) {
    const bounds = [...p.re.source.matchAll(/\{(\d+)(?:,(\d+))?\}/g)].flatMap((m) => [
      Number(m[1]),
      Number(m[2] ?? m[1]),
    ]);
    const lengths = [0, 1, 2, 3, 26, ...bounds.flatMap((b) => [b - 1, b, b + 1, 2 * b - 1, 2 * b, 2 * b + 1])].filter(
      (n) => n >= 0,
    );
    for (let i = 0; i < 4000; i++) {
      const length = i % 2 === 0 ? (lengths[i % lengths.length] as number) : Math.floor(next() * 60);
      // Mostly one repeated "clean" character with a few others mixed in, so that lengths near
      // the bounds are reached by strings that are otherwise valid.
      const base = pick(['a', 'Z', '9', '\u{1F600}', 'é']);
      let s = '';
      while (s.length < length) s += next() < 0.9 ? base : pick(ALPHABET);
      const want = p.re.test(s);
      expect([name, JSON.stringify(s), p.test(s)]).toEqual([name, JSON.stringify(s), want]);
      if (want) accepted++;
      checked++;
    }
  }
  // Both answers were exercised, not only rejections.
  expect(accepted).toBeGreaterThan(checked / 10);
  expect(checked - accepted).toBeGreaterThan(checked / 10);
});

test('an empty or missing store id is refused, also as the first id the process sees', () => {
  for (const id of ['', undefined])
    expect(() => storeId(id, 'CheckRequest')).toThrow(
      /invalid CheckRequest.StoreId: value does not match regex pattern/,
    );
});
