// Bodies over the limit, sent by clients that keep sending: Node's fetch (undici) reads the 400
// instead of failing with EPIPE, and a client that never stops is cut off at the discard bound.

import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
const LIMIT = 1024 * 1024;
const MESSAGE = `request body exceeds the limit of ${LIMIT} bytes`;

let server: Server;
let bounded: Server;
let store = '';

beforeAll(async () => {
  server = await start();
  store = await storeWithModel(server.base, 'limits');
  // Discards at most 1 MiB past the limit, or for 300 ms, before answering.
  bounded = await start({ bodyDiscard: { bytes: LIMIT, ms: 300 } });
});

afterAll(async () => {
  await server.close();
  await bounded.close();
});

function chunked(total: number, chunk = 128 * 1024): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    pull(c) {
      if (sent >= total) return c.close();
      c.enqueue(new Uint8Array(chunk).fill(0x20));
      sent += chunk;
    },
  });
}

/** A raw HTTP/1.1 request: the reply text and whether the server closed the connection. */
function raw(port: number, head: string, send: (s: Socket) => void): Promise<{ reply: string; closed: boolean }> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1', () => {
      s.write(head);
      send(s);
    });
    let reply = '';
    s.on('data', (d: Buffer) => void (reply += d.toString('latin1')));
    s.on('error', () => undefined); // our own writes after the server's close
    s.on('close', () => resolve({ reply, closed: true }));
  });
}

describe('a body over the limit is answered 400 validation_error and the client reads it', () => {
  test('fetch with a Content-Length one byte over the limit', async () => {
    for (let i = 0; i < 10; i++) {
      const r = await call(server.base, 'POST', `/stores/${store}/check`, new Uint8Array(LIMIT + 1).fill(0x20));
      expect(r.status).toBe(400);
      expect(r.json).toEqual({ code: 'validation_error', message: MESSAGE });
    }
  });

  test('fetch with a 16 MiB body of known length', async () => {
    const body = new Uint8Array(16 * LIMIT).fill(0x20);
    for (let i = 0; i < 10; i++) {
      const r = await call(server.base, 'POST', `/stores/${store}/write`, body);
      expect(r.status).toBe(400);
      expect(r.json).toEqual({ code: 'validation_error', message: MESSAGE });
    }
  });

  test('fetch with a 16 MiB chunked body', async () => {
    for (let i = 0; i < 10; i++) {
      const r = await call(server.base, 'POST', `/stores/${store}/check`, chunked(16 * LIMIT));
      expect(r.status).toBe(400);
      expect(r.json).toEqual({ code: 'validation_error', message: MESSAGE });
    }
    expect((await call(server.base, 'GET', `/stores/${store}`)).status).toBe(200);
  });

  test('the token endpoint (limit 64 KiB): fetch with a 16 MiB chunked body reads its 400', async () => {
    for (let i = 0; i < 10; i++) {
      const r = await call(server.base, 'POST', '/oauth/token', chunked(16 * LIMIT), {
        'content-type': 'application/x-www-form-urlencoded',
      });
      expect(r.status).toBe(400);
      expect(r.json).toEqual({ error: 'invalid_request', error_description: 'body too large' });
    }
  });

  test('the rest of the body is read to its end, then the answer, then the close', async () => {
    const total = LIMIT + 512 * 1024;
    const { reply, closed } = await raw(
      server.port,
      `POST /stores/${store}/check HTTP/1.1\r\nHost: x\r\nContent-Length: ${total}\r\n\r\n`,
      (s) => {
        s.end(Buffer.alloc(total, 0x20));
      },
    );
    expect(reply).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(reply).toMatch(/\r\nConnection: close\r\n/i);
    expect(reply).toContain(MESSAGE);
    expect(closed).toBe(true);
  });

  test('a client that keeps sending is cut off past the byte bound', async () => {
    let sent = 0;
    // The server closes with bytes unread, so the client's kernel may drop the 400 it had received.
    const { closed } = await raw(
      bounded.port,
      'POST /stores/01ARZ3NDEKTSV4RRFFQ69G5FAV/check HTTP/1.1\r\nHost: x\r\nContent-Length: 1073741824\r\n\r\n',
      (s) => {
        const piece = Buffer.alloc(64 * 1024, 0x20);
        const pump = (): void => {
          while (!s.destroyed && sent < 1024 * LIMIT) {
            sent += piece.length;
            if (!s.write(piece)) return void s.once('drain', pump);
          }
        };
        pump();
      },
    );
    expect(closed).toBe(true);
    expect(sent).toBeLessThan(64 * LIMIT);
  });

  test('a client that stops sending is answered and cut off at the time bound', async () => {
    const { reply } = await raw(
      bounded.port,
      `POST /stores/01ARZ3NDEKTSV4RRFFQ69G5FAV/check HTTP/1.1\r\nHost: x\r\nContent-Length: ${LIMIT + 1}\r\n\r\n`,
      (s) => {
        s.write('{"tuple_key":');
      },
    );
    expect(reply).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(reply).toContain(MESSAGE);
  });
});
