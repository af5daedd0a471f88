// The NDJSON body decoder (src/http/body.ts) against the line-by-line join it replaced, on
// generated bodies: blank lines (with \v and \f too), \r\n endings, a missing last newline,
// strings a line leaves open, two values on a line, escapes, non-ASCII text, a byte order mark,
// bytes that are not UTF-8. Both give the same values, or the same error (code, message and
// `tuple_index`).

import { describe, expect, test } from 'vitest';
import { decodeBody } from '../../src/http/body.js';
import { AppError } from '../../src/errors.js';
import { rng } from '../../src/cli/bench-data.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const BLANK = /^[\t\n\v\f\r ]*$/;

function blankLine(b: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = b[i] as number;
    if (c !== 0x20 && (c < 0x09 || c > 0x0d)) return false;
  }
  return true;
}

/** The decoder before: the body's non-blank lines copied one by one between `[` and `]`, joined by `,`. */
function reference(bytes: Uint8Array): unknown[] {
  const joined = new Uint8Array(bytes.length + 2);
  let o = 0;
  let lines = 0;
  joined[o++] = 0x5b;
  for (let from = 0; from < bytes.length;) {
    let nl = bytes.indexOf(0x0a, from);
    if (nl === -1) nl = bytes.length;
    if (!blankLine(bytes, from, nl)) {
      if (lines++ > 0) joined[o++] = 0x2c;
      joined.set(bytes.subarray(from, nl), o);
      o += nl - from;
    }
    from = nl + 1;
  }
  joined[o++] = 0x5d;
  let text: string;
  try {
    text = utf8.decode(joined.subarray(0, o));
  } catch {
    throw new AppError('validation_error', 'request body is not valid UTF-8');
  }
  let values: unknown[];
  try {
    values = JSON.parse(text) as unknown[];
  } catch {
    const all = utf8
      .decode(bytes)
      .split('\n')
      .filter((l) => !BLANK.test(l));
    all.forEach((line, i) => {
      try {
        JSON.parse(line);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        throw new AppError('validation_error', `line ${i + 1} of the NDJSON body is not JSON: ${message}`, {
          fields: { tuple_index: i },
        });
      }
    });
    throw new AppError('validation_error', 'malformed NDJSON: one JSON value per line');
  }
  if (values.length !== lines) throw new AppError('validation_error', 'malformed NDJSON: one JSON value per line');
  return values;
}

type Outcome = { values: unknown } | { code: string; message: string; fields: unknown };

function outcome(f: () => unknown): Outcome {
  try {
    return { values: f() };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { code: err.code, message: err.message, fields: err.fields };
  }
}

const PIECES = [
  '{"user":"user:1","relation":"viewer","object":"doc:1"}',
  '{"user":"user:\\u00e9","relation":"viewer","object":"doc:\\"2\\""}',
  '{"object":"doc:3","relation":"editor","user":"group:x#member"}',
  '{"user":"user:ü","relation":"r","object":"doc:€","condition":{"name":"c","context":{"a":[1,2]}}}',
  '{"user":"u:1","user":"u:2","relation":"r","object":"o:1"}',
  '{"user":"user:1","relation":"viewer","object":"doc:1"},{"user":"user:2"}',
  '  {"user" : "user:1" ,"relation":"viewer","object":"doc:1"}  ',
  '{"user":"user:1","relation":"viewer","obj',
  '["a',
  'b"]',
  '"open',
  'string"',
  '{"a":1}\r',
  '\ufeff{"a":1}',
  '1',
  'null',
  '[]',
  '{}',
  '{"a":"\\',
  'tru',
  '\v{"a":1}',
];
const BLANKS = ['', ' ', '\t', '\r', '\v', '\f', ' \r\t '];

function body(rand: () => number): Uint8Array {
  const parts: string[] = [];
  const n = 1 + Math.floor(rand() * 6);
  for (let i = 0; i < n; i++) {
    const p = rand();
    if (p < 0.2) parts.push(BLANKS[Math.floor(rand() * BLANKS.length)] as string);
    else if (p < 0.7) parts.push(PIECES[0] as string);
    else parts.push(PIECES[Math.floor(rand() * PIECES.length)] as string);
  }
  let text = parts.join(rand() < 0.2 ? '\r\n' : '\n');
  if (rand() < 0.6) text += '\n';
  const bytes = new TextEncoder().encode(text);
  if (rand() < 0.05 && bytes.length > 0) bytes[Math.floor(rand() * bytes.length)] = 0xff;
  return bytes;
}

describe('NDJSON body decoding', () => {
  test('gives the values or the error of the line-by-line join, on generated bodies', () => {
    const rand = rng(20261202); // seeded (mulberry32): a failure names its case
    let failures = 0;
    let successes = 0;
    for (let i = 0; i < 20_000; i++) {
      const bytes = body(rand);
      const expected = outcome(() => reference(bytes));
      const actual = outcome(() => decodeBody(bytes, 'ndjson'));
      expect(actual, JSON.stringify(new TextDecoder().decode(bytes))).toEqual(expected);
      if ('values' in expected) successes++;
      else failures++;
    }
    // Both outcomes are exercised, not just one.
    expect(successes).toBeGreaterThan(1000);
    expect(failures).toBeGreaterThan(1000);
  });

  test('edge bodies', () => {
    const cases = ['', '\n', '\n\n', ' \n', PIECES[0] as string, `${PIECES[0]}\n\n${PIECES[0]}`, '["a\n \nb"]'];
    for (const c of cases) {
      const bytes = new TextEncoder().encode(c);
      expect(
        outcome(() => decodeBody(bytes, 'ndjson')),
        JSON.stringify(c),
      ).toEqual(outcome(() => reference(bytes)));
    }
    // An ArrayBuffer (uWS's own memory) reads as its bytes do.
    const plain = new TextEncoder().encode(`${PIECES[0]}\n${PIECES[2]}\n`);
    expect(decodeBody(plain.slice().buffer, 'ndjson')).toEqual(reference(plain));
  });
});
