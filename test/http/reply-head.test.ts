// The JSON reply head block: byte for byte the text the string path would write (the same headers,
// the duration last), rebuilt when the id block, the store or the model changes, and declined
// (undefined) when it cannot hold the reply's headers.
import { expect, test } from 'vitest';
import { idLines, jsonHeadBlock, nextRequestId, type RequestIdParts } from '../../src/http/reply-head.js';

const STORE = '01HZX3Y4K5M6N7P8Q9R0STVWXY';
const MODEL = '01HZX3Y4K5M6N7P8Q9R0ABCDEF';

/** The parts of a request id given as text (the first 33 characters, the last three digits). */
function parts(id: string): RequestIdParts {
  return { idHigh: id.slice(0, 33), idLow: Number(id.slice(33)) };
}

/** What the block must hold: the text the header value would have been. */
function expected(id: string, store: string | undefined, model: string | undefined, ms: number): string {
  return `application/json\r\nX-Request-Id: ${id}${idLines(store, model)}\r\nfga-query-duration-ms: ${ms}`;
}

function text(block: Uint8Array | undefined): string | undefined {
  return block === undefined ? undefined : Buffer.from(block).toString('utf8');
}

test('the block is the header text, for every id digit, duration length, store and model', () => {
  const cases: [string | undefined, string | undefined][] = [
    [STORE, MODEL],
    [STORE, undefined],
    [undefined, undefined],
    ['not-a-ülid-☃', MODEL],
    [STORE, MODEL],
  ];
  const durations = [0, 7, 10, 99, 100, 4321, 99_999, 999_999];
  for (const [store, model] of cases) {
    // 1,000 ids: every value of the last three digits, and a rollover of the shared first part.
    for (let i = 0; i < 1000; i++) {
      const id = nextRequestId();
      const ms = durations[i % durations.length] as number;
      const got = text(jsonHeadBlock(parts(id), store, model, ms));
      if (got !== expected(id, store, model, ms)) expect(got).toBe(expected(id, store, model, ms));
    }
  }
});

test('a store or model id with CR or LF is left out, as on the text path', () => {
  const id = nextRequestId();
  const got = text(jsonHeadBlock(parts(id), 'a\r\nInjected: 1', MODEL, 3));
  expect(got).toBe(
    `application/json\r\nX-Request-Id: ${id}\r\nOpenfga-Authorization-Model-Id: ${MODEL}\r\nfga-query-duration-ms: 3`,
  );
});

test('declined when the duration has more than six digits or the headers do not fit the block', () => {
  const id = parts(nextRequestId());
  expect(jsonHeadBlock(id, STORE, MODEL, 1_000_000)).toBeUndefined();
  expect(jsonHeadBlock(id, 'x'.repeat(2000), MODEL, 1)).toBeUndefined();
  // And serves again once the head fits.
  expect(text(jsonHeadBlock(id, STORE, MODEL, 1))).toBe(
    expected(id.idHigh + String(id.idLow).padStart(3, '0'), STORE, MODEL, 1),
  );
});
