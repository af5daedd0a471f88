// The part of uWS's chunked-write contract latch's stream writers rely on (src/http/exchange.ts,
// STREAM_SLICE_BYTES): a write of at most STREAM_SLICE_BYTES, in a cork of its own, is never lost.
// It is delivered byte for byte while the socket refuses writes, when written again before
// `onWritable` (uWS appends it to its backpressure buffer), and from one buffer refilled right
// after each write (uWS copies the bytes before `write` returns). The consumer here stops reading
// until the server's writes are refused, reads until uWS calls `onWritable`, stops again, and so
// on: the socket fills and drains many times under the writes.
//
// What this guards against: uWS v20.30 (`AsyncSocket::uncork`) drops a write that does not fit
// its 16 KB cork buffer when the socket refuses the flush of that buffer; several such slices in
// one cork lose bytes under this very consumer ("no CRLF after chunk N": bench/http/uws-cork.ts
// shows it). If a uWS upgrade changes either, this file says which.

import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { STREAM_SLICE_BYTES } from '../../src/http/exchange.js';
import { loadUws, type TemplatedApp, type us_listen_socket } from '../../src/http/uws.js';

/** Slices per response: 64 MB, many times what the loopback socket buffers hold. */
const SLICES = 4096;
/** Slices written, after a refused one, before waiting for `onWritable`. */
const AFTER_REFUSAL = 3;

/** Slice `n`'s bytes: a pattern that differs from slice to slice and within one. */
function fill(n: number, into: Buffer): void {
  for (let i = 0; i < into.length; i++) into[i] = 0x61 + ((n * 7 + i) % 26);
}

/** Signals from the server to the consumer, in the same process. */
class Signals {
  refused = 0;
  writable = 0;
  done = false;
  #waiters: (() => void)[] = [];
  emit(): void {
    for (const w of this.#waiters.splice(0)) w();
  }
  /** Resolves once `until` holds (checked at each signal). */
  async wait(until: () => boolean): Promise<void> {
    while (!until()) await new Promise<void>((resolve) => this.#waiters.push(resolve));
  }
}

let app: TemplatedApp;
let listen: us_listen_socket;
let port = 0;
let signals = new Signals();
const uws = loadUws();

beforeAll(async () => {
  app = uws.App();
  app.get('/*', (res) => {
    let aborted = false;
    res.onAborted(() => (aborted = true));
    const s = signals;
    const slice = Buffer.allocUnsafe(STREAM_SLICE_BYTES); // one buffer, refilled for every write
    let n = 0;
    const step = (): void => {
      let extra = -1; // slices still to write after a refusal before waiting
      while (!aborted && n < SLICES) {
        fill(n, slice);
        let ok = true;
        res.cork(() => (ok = res.write(slice)));
        n++;
        if (!ok && extra === -1) extra = AFTER_REFUSAL;
        if (extra === 0) break;
        if (extra > 0) extra--;
      }
      if (aborted) return;
      if (n === SLICES) {
        s.done = true;
        s.emit();
        res.cork(() => res.end());
        return;
      }
      s.refused++;
      s.emit();
      res.onWritable(() => {
        s.writable++;
        s.emit();
        setImmediate(step);
        // Called again while the response lasts; only the first call of each refusal counts.
        res.onWritable(() => true);
        return true;
      });
    };
    res.cork(() => res.writeStatus('200 OK'));
    setImmediate(step);
  });
  await new Promise<void>((resolve) =>
    app.listen('127.0.0.1', 0, (socket) => {
      listen = socket as us_listen_socket;
      port = uws.us_socket_local_port(listen);
      resolve();
    }),
  );
});

afterAll(() => {
  if (listen) uws.us_listen_socket_close(listen);
});

/** The data of each chunk of a raw chunked response; throws where the framing does not parse. */
function chunksOf(raw: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let at = raw.indexOf('\r\n\r\n') + 4;
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    const head = raw.toString('latin1', at, eol);
    if (eol === -1 || !/^[0-9a-f]+$/i.test(head)) throw new Error(`chunk ${parts.length}: header ${head.slice(0, 16)}`);
    const size = parseInt(head, 16);
    if (size === 0) return parts;
    if (raw.toString('latin1', eol + 2 + size, eol + 4 + size) !== '\r\n')
      throw new Error(`chunk ${parts.length} (${size} bytes): no CRLF after its data`);
    parts.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 4 + size;
  }
}

describe('uWS chunked writes that fit the cork buffer', () => {
  test('reach a consumer that stops and starts reading, byte for byte', async () => {
    signals = new Signals();
    const s = signals;
    const socket = connect(port, '127.0.0.1');
    const received: Buffer[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      socket.on('data', (c: Buffer) => received.push(c));
      socket.once('end', () => resolve());
      socket.once('error', reject);
    });
    socket.pause();
    socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    // Read only between a refusal and the server's next onWritable, until it is done.
    for (let cycle = 1; ; cycle++) {
      await s.wait(() => s.done || s.refused >= cycle);
      if (s.done) break;
      socket.resume();
      await s.wait(() => s.done || s.writable >= cycle);
      socket.pause();
    }
    socket.resume();
    await ended;
    socket.destroy();
    // The socket filled and drained under the writes several times.
    expect(s.refused).toBeGreaterThan(3);
    const chunks = chunksOf(Buffer.concat(received));
    expect(chunks.length).toBe(SLICES);
    const want = Buffer.allocUnsafe(STREAM_SLICE_BYTES);
    for (let n = 0; n < SLICES; n++) {
      fill(n, want);
      if (!(chunks[n] as Buffer).equals(want)) expect.fail(`chunk ${n} differs from what was written`);
    }
  }, 60_000);
});
