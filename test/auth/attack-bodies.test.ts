// Unauthenticated bodies are never decoded (D1): a server in client-credentials mode answers 401
// to a deeply nested 1 MB JSON body without decoding or parsing it. The server runs in-process,
// so the test counts what it decodes: every JSON body goes through a TextDecoder and then
// JSON.parse, and both are watched for inputs the size of the attack body. One authenticated body
// shows the watch sees a decode when there is one.

import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ALL_SCOPES, bearer, call, startAuthServer, type AuthServer } from './fixtures.js';

const STORE = '01JAAAAAAAAAAAAAAAAAAAAAAA';
const DEPTH = 499_000; // `[` × DEPTH + `]` × DEPTH: just under the 1 MiB body limit
const body = '['.repeat(DEPTH) + ']'.repeat(DEPTH);

let s: AuthServer;
beforeAll(async () => {
  s = await startAuthServer();
});
afterAll(() => s.close());
afterEach(() => vi.restoreAllMocks());

type Decoder = InstanceType<typeof TextDecoder>;
type DecodeArgs = Parameters<Decoder['decode']>;

/** Counts the byte decodes and JSON parses of inputs at least as large as the attack body. */
function watchDecodes(): { readonly decodes: () => number; readonly parses: () => number } {
  let decodes = 0;
  let parses = 0;
  const decode = TextDecoder.prototype.decode;
  vi.spyOn(TextDecoder.prototype, 'decode').mockImplementation(function (this: Decoder, ...args: DecodeArgs) {
    const [input] = args;
    if (input && input.byteLength >= 2 * DEPTH) decodes++;
    return decode.apply(this, args);
  });
  const parse = JSON.parse;
  vi.spyOn(JSON, 'parse').mockImplementation((text: string, reviver?: Parameters<typeof JSON.parse>[1]) => {
    if (typeof text === 'string' && text.length >= 2 * DEPTH) parses++;
    return parse(text, reviver) as unknown;
  });
  return { decodes: () => decodes, parses: () => parses };
}

describe('unauthenticated bodies', () => {
  it('attack: 20 unauthenticated 1 MB nested bodies are refused without decoding them', async () => {
    const watch = watchDecodes();
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(s.base, 'POST', `/stores/${STORE}/check`, body, {
          'content-type': 'application/json',
          ...(i % 2 === 0 ? {} : { authorization: 'Bearer not.a.token' }),
        }),
      ),
    );
    for (const r of replies) expect({ status: r.status, code: r.json?.code }).toMatchObject({ status: 401 });
    expect({ decodes: watch.decodes(), parses: watch.parses() }).toEqual({ decodes: 0, parses: 0 });
    // The server still answers.
    expect((await call(s.base, 'GET', '/healthz')).status).toBe(200);
  });

  it('the watch sees the one decode of the same body sent with a valid token', async () => {
    const token = await s.mint(STORE, ALL_SCOPES);
    const watch = watchDecodes();
    const r = await call(s.base, 'POST', `/stores/${STORE}/check`, body, {
      'content-type': 'application/json',
      ...bearer(token),
    });
    expect(r.status).toBe(400);
    expect({ decodes: watch.decodes(), parses: watch.parses() }).toEqual({ decodes: 1, parses: 1 });
  });
});
