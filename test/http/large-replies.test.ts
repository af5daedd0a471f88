// Whole replies larger than uWS's 16 KB cork buffer (Exchange.send: headers and body in one cork,
// then `end`) reach a client whose socket was full when they began. The client pipelines many
// requests for a ~200 KB ListObjects reply and reads nothing until the server has answered them
// all, so later replies start while the socket refuses writes and uWS holds the rest. Every reply
// must arrive whole, in order, byte-identical to the same request made alone. (Stream writes have
// their own rule, STREAM_SLICE_BYTES; a `tryEnd` variant of this path lost its tail here and was
// not kept.)

import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;
let store = '';

/** Objects in the listing (ListObjects' limit): ids of ~200 characters make a reply of ~200 KB. */
const OBJECTS = 1000;
/** Pipelined requests: several times what the loopback socket buffers hold. */
const REQUESTS = 40;

const id = (i: number): string => `doc:${String(i).padStart(8, '0')}-${'x'.repeat(190)}`;

beforeAll(async () => {
  server = await start();
  store = await storeWithModel(server.base, 'large-replies');
  const lines = Array.from({ length: OBJECTS }, (_, i) =>
    JSON.stringify({ user: 'user:anne', relation: 'owner', object: id(i) }),
  ).join('\n');
  const r = await call(server.base, 'POST', `/stores/${store}/tuples/import`, lines + '\n', {
    'content-type': 'application/x-ndjson',
  });
  expect(r.status, r.text).toBe(200);
});

afterAll(async () => {
  await server.close();
});

/** The bodies of `count` Content-Length replies in `raw`, in order; throws where one is cut short. */
function bodiesOf(raw: Buffer, count: number): Buffer[] {
  const bodies: Buffer[] = [];
  let at = 0;
  for (let n = 0; n < count; n++) {
    const end = raw.indexOf('\r\n\r\n', at);
    if (end === -1) throw new Error(`reply ${n}: no header block`);
    const head = raw.toString('latin1', at, end);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!head.startsWith('HTTP/1.1 200') || !length) throw new Error(`reply ${n}: ${head.slice(0, 200)}`);
    const body = raw.subarray(end + 4, end + 4 + Number(length[1]));
    if (body.length !== Number(length[1])) throw new Error(`reply ${n}: ${body.length} of ${length[1]} bytes`);
    bodies.push(body);
    at = end + 4 + body.length;
  }
  if (at !== raw.length) throw new Error(`${raw.length - at} bytes after the last reply`);
  return bodies;
}

describe('a whole reply larger than the cork buffer', () => {
  test('arrives intact on a socket that was full when it began', async () => {
    const json = JSON.stringify({ type: 'doc', relation: 'owner', user: 'user:anne' });
    const alone = await call(server.base, 'POST', `/stores/${store}/list-objects`, json);
    expect(alone.status).toBe(200);
    expect((alone.json as { objects: string[] }).objects).toHaveLength(OBJECTS);
    expect(Buffer.byteLength(alone.text)).toBeGreaterThan(16 * 1024 * 10);

    const request =
      `POST /stores/${store}/list-objects HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`;
    const socket = connect(server.port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.pause(); // reads nothing until every request has been answered
    const received: Buffer[] = [];
    socket.on('data', (c: Buffer) => received.push(c));
    socket.write(request.repeat(REQUESTS));
    // Each request is answered in turn once its predecessor's reply is written (or queued).
    await vi.waitFor(() => expect(server.inFlight()).toBe(0), { timeout: 60_000, interval: 5 });
    socket.resume();
    const size = (Buffer.byteLength(alone.text) + 200) * REQUESTS;
    await vi.waitFor(
      () => {
        const got = received.reduce((n, c) => n + c.length, 0);
        expect(got).toBeGreaterThan(size - 200 * REQUESTS);
        bodiesOf(Buffer.concat(received), REQUESTS);
      },
      { timeout: 60_000, interval: 20 },
    );
    socket.destroy();
    for (const body of bodiesOf(Buffer.concat(received), REQUESTS)) expect(body.toString('utf8')).toBe(alone.text);
  }, 120_000);
});
