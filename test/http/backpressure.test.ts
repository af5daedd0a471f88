// Channel backpressure: a client that sends frame after frame but never reads its answers. The
// server must stop dispatching (in-flight stays under its bound), queue a bounded amount, then
// close the connection with 1008 — and keep serving everyone else.

import { createHash, randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { encodeMsgpack } from '../../src/domain/msgpack.js';
import { call, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;
let store = '';
const MAX_IN_FLIGHT = 1000;

beforeAll(async () => {
  server = await start({
    channel: { maxInFlight: MAX_IN_FLIGHT, maxBuffered: 64 * 1024, maxQueuedBytes: 1024 * 1024 },
  });
  store = await storeWithModel(server.base, 'backpressure');
  for (let b = 0; b < 10; b++) {
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

/** A WebSocket upgrade by hand, so the test controls reading (it never reads past the 101). */
async function upgrade(): Promise<Socket> {
  const socket = connect({ host: '127.0.0.1', port: server.port });
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  const key = randomBytes(16).toString('base64');
  socket.write(
    `GET /stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  const head = await new Promise<string>((resolve) =>
    socket.once('data', (d: Buffer) => resolve(d.toString('latin1'))),
  );
  expect(head).toContain(
    createHash('sha1')
      .update(key + '258EAFA5-E914-47DA-95CA-C5AB0DC85B11')
      .digest('base64'),
  );
  socket.pause();
  return socket;
}

/** A masked binary frame (key 0: masking is then the identity, which RFC 6455 permits). */
function frame(payload: Buffer): Buffer {
  const n = payload.length;
  const head = n < 65536 ? Buffer.from([0x82, 0x80 | 126, n >> 8, n & 0xff, 0, 0, 0, 0]) : Buffer.alloc(14);
  if (n >= 65536) {
    head[0] = 0x82;
    head[1] = 0x80 | 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  return Buffer.concat([head, payload]);
}

describe('channel backpressure', () => {
  test('a client that never reads is bounded, then disconnected; others are unaffected', async () => {
    const socket = await upgrade();
    let closed = false;
    socket.on('close', () => void (closed = true));
    socket.on('error', () => void (closed = true));
    // Each answer lists 1,000 objects (~12 KB); each frame carries 20 requests padded to ~1 MB
    // (unknown fields are ignored), so both the answer buffer and the frame queue fill quickly.
    const requests = Array.from({ length: 20 }, (_, i) => ({
      id: i,
      op: 'list-objects',
      store_id: store,
      body: { type: 'doc', relation: 'viewer', user: 'user:anne', pad: 'x'.repeat(50_000) },
    }));
    const bytes = frame(encodeMsgpack(requests));
    let peak = 0;
    for (let i = 0; i < 100 && !closed; i++) {
      if (!socket.write(bytes)) await new Promise((r) => setTimeout(r, 20));
      peak = Math.max(peak, server.inFlight());
      await new Promise((r) => setImmediate(r));
    }
    // Until the server closes the connection, sampling what it holds in flight meanwhile.
    await vi.waitFor(
      () => {
        peak = Math.max(peak, server.inFlight());
        expect(closed).toBe(true);
      },
      { timeout: 60_000, interval: 10 },
    );
    expect(peak).toBeLessThanOrEqual(MAX_IN_FLIGHT + requests.length);
    await vi.waitFor(() => expect(server.inFlight()).toBe(0), { timeout: 30_000, interval: 10 });
    const ok = await call(server.base, 'POST', `/stores/${store}/check`, {
      tuple_key: { user: 'user:a', relation: 'viewer', object: 'doc:1' },
    });
    expect(ok.status).toBe(200);
  });
});
