// Clients that go away mid-request, mid-body, mid-stream or mid-frame: the server keeps serving,
// every in-flight request is accounted for (counter back to 0) and nothing crashes.

import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { MiniWebSocket } from '../../src/client/ws.js';
import { encodeMsgpack } from '../../src/domain/msgpack.js';
import { call, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;
let store = '';
const OBJECTS = 3000;

beforeAll(async () => {
  server = await start();
  store = await storeWithModel(server.base, 'disconnect');
  for (let b = 0; b < OBJECTS / 100; b++) {
    const writes = Array.from({ length: 100 }, (_, i) => ({
      user: 'user:anne',
      relation: 'owner',
      object: `doc:${b * 100 + i}`,
    }));
    expect((await call(server.base, 'POST', `/stores/${store}/write`, { writes: { tuple_keys: writes } })).status).toBe(
      200,
    );
  }
});

afterAll(async () => {
  await server.close();
});

function raw(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port: server.port }, () => resolve(s));
    s.on('error', reject);
  });
}

function post(path: string, body: string, contentLength = Buffer.byteLength(body)): string {
  return `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${contentLength}\r\n\r\n${body}`;
}

async function settled(): Promise<void> {
  await vi.waitFor(() => expect(server.inFlight()).toBe(0), { timeout: 30_000, interval: 10 });
  expect((await call(server.base, 'GET', '/healthz')).status).toBe(200);
}

describe('client disconnects', () => {
  test('mid-body: half a body, then gone', async () => {
    for (let i = 0; i < 20; i++) {
      const s = await raw();
      s.write(post(`/stores/${store}/check`, '{"tuple_key":{"user":', 500));
      s.destroy();
    }
    await settled();
  });

  test('mid-request: full request, gone before the answer', async () => {
    const body = JSON.stringify({ type: 'doc', relation: 'viewer', user: 'user:anne' });
    for (let i = 0; i < 20; i++) {
      const s = await raw();
      s.write(post(`/stores/${store}/list-objects`, body));
      s.destroy();
    }
    await settled();
  });

  test('mid-stream: streamed list objects, reader gone after the first chunk', async () => {
    const body = JSON.stringify({ type: 'doc', relation: 'viewer', user: 'user:anne' });
    for (let i = 0; i < 5; i++) {
      const s = await raw();
      s.write(post(`/stores/${store}/streamed-list-objects`, body));
      await new Promise<void>((resolve) => s.once('data', () => resolve()));
      s.pause();
      s.destroy();
    }
    await settled();
    // And a full stream still works afterwards.
    const full = await call(
      server.base,
      'POST',
      `/stores/${store}/streamed-list-objects`,
      JSON.parse(body) as Record<string, unknown>,
    );
    expect(full.text.trim().split('\n')).toHaveLength(OBJECTS);
  });

  test('mid-frame: channel closed with thousands of checks in flight', async () => {
    for (let i = 0; i < 5; i++) {
      const ws = await MiniWebSocket.connect(`ws://127.0.0.1:${server.port}/stream`);
      const frame = Array.from({ length: 5000 }, (_, j) => ({
        id: j,
        op: 'check',
        store_id: store,
        body: { tuple_key: { user: 'user:anne', relation: 'viewer', object: `doc:${j}` } },
      }));
      ws.send(encodeMsgpack(frame));
      ws.close();
    }
    await settled();
  });
});
