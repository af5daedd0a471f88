// The bytes of the replies sent most often (Check allowed / denied, /healthz), which are encoded
// once and handed to the socket as they are, and the docs/reference/decisions.md D11 headers that come with a Check reply.

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, start, storeWithModel } from './helpers.js';

let server: Awaited<ReturnType<typeof start>>;
let store: string;

beforeAll(async () => {
  server = await start();
  store = await storeWithModel(server.base, 'replies');
  const w = await call(server.base, 'POST', `/stores/${store}/write`, {
    writes: { tuple_keys: [{ user: 'user:ann', relation: 'owner', object: 'doc:1' }] },
  });
  expect(w.status).toBe(200);
});

afterAll(() => server.close());

describe('constant replies', () => {
  test.each([
    ['allowed', 'user:ann', '{"allowed":true,"resolution":""}'],
    ['denied', 'user:bob', '{"allowed":false,"resolution":""}'],
  ])('Check %s: the exact JSON text, its length, and the D11 headers', async (_, user, text) => {
    // Twice: the second answer comes from the result cache, through the same reply.
    for (let i = 0; i < 2; i++) {
      const r = await call(server.base, 'POST', `/stores/${store}/check`, {
        tuple_key: { user, relation: 'owner', object: 'doc:1' },
      });
      expect({ status: r.status, text: r.text }).toEqual({ status: 200, text });
      expect(Object.fromEntries([...r.headers].filter(([k]) => k !== 'date' && k !== 'uwebsockets'))).toEqual({
        'content-type': 'application/json',
        'content-length': String(text.length),
        'x-request-id': expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/),
        'fga-query-duration-ms': expect.stringMatching(/^\d+$/),
        'openfga-store-id': store,
        'openfga-authorization-model-id': expect.stringMatching(/^[0-9A-HJKMNP-TV-Z]{26}$/),
      });
    }
  });

  test('/healthz answers SERVING', async () => {
    const r = await call(server.base, 'GET', '/healthz');
    expect({ status: r.status, text: r.text, type: r.headers.get('content-type') }).toEqual({
      status: 200,
      text: '{"status":"SERVING"}',
      type: 'application/json',
    });
  });
});
