// Deeply nested request values, sent to a real server in JSON, in msgpack and on the channel: each
// is refused with 400 validation_error (a recursive walk of them once answered 500), and the
// server keeps answering afterwards.

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MiniWebSocket } from '../../src/client/ws.js';
import { MAX_VALUE_DEPTH } from '../../src/domain/depth.js';
import { openLatch } from '../../src/engine/service.js';
import { decodeMsgpack, encodeMsgpack } from '../../src/domain/msgpack.js';
import { MODEL, call, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;
let store = '';

const DEEP = 100_000;
const KEY = { user: 'user:anne', relation: 'viewer', object: 'doc:1' };
/** JSON arrays nested `n` deep: `[[[…]]]`. */
const arrays = (n: number): string => '['.repeat(n) + ']'.repeat(n);
/** A JSON value nested exactly `n` deep (objects), as a value. */
function nested(n: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 1; i < n; i++) v = { a: v };
  return v;
}

beforeAll(async () => {
  server = await start();
  store = await storeWithModel(server.base, 'nesting');
});

afterAll(async () => {
  await server.close();
});

async function post(path: string, body: string | Uint8Array, headers: Record<string, string> = {}) {
  return call(server.base, 'POST', `/stores/${store}${path}`, body, headers);
}

function expectRefused(r: { status: number; json: unknown }): void {
  expect(r.status).toBe(400);
  expect((r.json as { code: string }).code).toBe('validation_error');
}

describe('request values nested too deeply answer 400 validation_error', () => {
  test('a Check whose context nests arrays 100,000 deep', async () => {
    const r = await post('/check', `{"tuple_key":${JSON.stringify(KEY)},"context":{"x":${arrays(DEEP)}}}`);
    expectRefused(r);
  });

  test('a context just inside the bound is accepted; one level more is not', async () => {
    const ok = await post('/check', JSON.stringify({ tuple_key: KEY, context: nested(MAX_VALUE_DEPTH) }));
    expect(ok.status).toBe(200);
    expectRefused(await post('/check', JSON.stringify({ tuple_key: KEY, context: nested(MAX_VALUE_DEPTH + 1) })));
  });

  test('ListObjects, StreamedListObjects, ListUsers and BatchCheck contexts', async () => {
    const ctx = `"context":{"x":${arrays(DEEP)}}`;
    expectRefused(await post('/list-objects', `{"type":"doc","relation":"viewer","user":"user:anne",${ctx}}`));
    const streamed = await post(
      '/streamed-list-objects',
      `{"type":"doc","relation":"viewer","user":"user:anne",${ctx}}`,
    );
    expect(streamed.status).toBe(400);
    expectRefused(
      await post(
        '/list-users',
        `{"object":{"type":"doc","id":"1"},"relation":"viewer","user_filters":[{"type":"user"}],${ctx}}`,
      ),
    );
    const batch = await post(
      '/batch-check',
      `{"checks":[{"tuple_key":${JSON.stringify(KEY)},"correlation_id":"a",${ctx}}]}`,
    );
    expectRefused(batch);
  });

  test('condition contexts of written and contextual tuples', async () => {
    const cond = `"condition":{"name":"office","context":{"x":${arrays(DEEP)}}}`;
    const tuple = `{"user":"user:anne","relation":"viewer","object":"doc:1",${cond}}`;
    expectRefused(await post('/write', `{"writes":{"tuple_keys":[${tuple}]}}`));
    expectRefused(
      await post('/check', `{"tuple_key":${JSON.stringify(KEY)},"contextual_tuples":{"tuple_keys":[${tuple}]}}`),
    );
  });

  test('assertions with a deep context', async () => {
    const model = (await call(server.base, 'GET', `/stores/${store}/authorization-models`)).json as {
      authorization_models: { id: string }[];
    };
    const id = model.authorization_models[0]?.id ?? '';
    const r = await call(
      server.base,
      'PUT',
      `/stores/${store}/assertions/${id}`,
      `{"assertions":[{"tuple_key":${JSON.stringify(KEY)},"expectation":true,"context":{"x":${arrays(DEEP)}}}]}`,
    );
    expectRefused(r);
  });

  test('a model whose rewrites nest 100,000 deep, and one with deep metadata', async () => {
    const rewrite = '{"union":{"child":['.repeat(DEEP) + '{"this":{}}' + ']}}'.repeat(DEEP);
    const body = `{"schema_version":"1.1","type_definitions":[{"type":"user"},{"type":"doc","relations":{"viewer":${rewrite}}}]}`;
    expectRefused(await post('/authorization-models', body));
    const meta = `{"schema_version":"1.1","type_definitions":[{"type":"user","metadata":{"x":${arrays(DEEP)}}}]}`;
    expectRefused(await post('/authorization-models', meta));
  });

  test('a field of the wrong type holding deep arrays is named without printing it', async () => {
    const r = await post('/check', `{"tuple_key":${arrays(DEEP)}}`);
    expectRefused(r);
    expect((r.json as { message: string }).message).toBe(
      'invalid value for message field tuple_key: a list nested too deeply',
    );
    expectRefused(await post('/check', `{"tuple_key":${JSON.stringify(KEY)},"consistency":${arrays(DEEP)}}`));
  });

  test('msgpack bodies: 100,000 nested arrays, and 1,000 (decodable, over the bound)', async () => {
    const headers = { 'content-type': 'application/msgpack' };
    for (const depth of [DEEP, 1000]) {
      // {tuple_key: KEY, context: {x: [[[…nil…]]]}}, spelled out: msgpackr's encoder recurses too.
      const bytes = Buffer.concat([
        Buffer.from([0x82]),
        encodeMsgpack('tuple_key'),
        encodeMsgpack(KEY),
        encodeMsgpack('context'),
        Buffer.from([0x81]),
        encodeMsgpack('x'),
        Buffer.alloc(depth, 0x91),
        Buffer.from([0xc0]),
      ]);
      expectRefused(await post('/check', bytes, headers));
    }
    const ok = await post('/check', encodeMsgpack({ tuple_key: KEY }), headers);
    expect(ok.status).toBe(200);
  });

  test('a channel frame nested 100,000 deep is answered, and the connection still serves', async () => {
    const ws = await MiniWebSocket.connect(`ws://127.0.0.1:${server.port}/stream`);
    const answers: unknown[] = [];
    let wake: () => void = () => undefined;
    ws.onMessage = (data) => {
      answers.push(decodeMsgpack(data));
      wake();
    };
    const next = (): Promise<unknown> =>
      new Promise((resolve) => {
        wake = () => resolve(answers.shift());
        if (answers.length > 0) wake();
      });
    ws.send(Buffer.concat([Buffer.from([0x91]), Buffer.alloc(DEEP, 0x91), Buffer.from([0xc0])]));
    const refused = (await next()) as { status: number; error: { code: string } }[];
    expect(refused[0]?.status).toBe(400);
    expect(refused[0]?.error.code).toBe('validation_error');
    const frame = [
      {
        id: 1,
        op: 'check',
        store_id: store,
        body: { tuple_key: KEY, context: { x: JSON.parse(arrays(1000)) as unknown } },
      },
    ];
    ws.send(encodeMsgpack(frame));
    const deepContext = (await next()) as { id: number; status: number; error: { code: string } }[];
    expect(deepContext[0]).toMatchObject({ id: 1, status: 400, error: { code: 'validation_error' } });
    ws.close();
  });

  test('the embedded API refuses a deep context and a deep condition context', async () => {
    const latch = await openLatch({});
    try {
      const s = await latch.createStore('embedded');
      await latch.writeModel(s.id, MODEL as never);
      const deep = JSON.parse(arrays(DEEP)) as unknown;
      await expect(
        latch.check({
          storeId: s.id,
          tupleKey: KEY,
          contextualTuples: [],
          context: { x: deep } as never,
          consistency: 'UNSPECIFIED',
        }),
      ).rejects.toMatchObject({ code: 'validation_error' });
      const tuple = { ...KEY, condition: { name: 'office', context: { x: deep } } };
      await expect(
        latch.write({ storeId: s.id, writes: [tuple as never], deletes: [], onDuplicate: 'error', onMissing: 'error' }),
      ).rejects.toMatchObject({
        code: 'validation_error',
        message: expect.stringContaining('nested more than') as unknown,
      });
    } finally {
      await latch.close();
    }
  });
});
