// A whole reply larger than uWS's cork buffer (src/http/whole-reply.ts) that begins when the
// kernel's send buffer has less room left than the reply's headers, while uWS holds nothing back
// itself: the replies before it filled the kernel exactly. Before, uWS flushed the corked headers
// on the way to the body, the socket took part of them, and the body was never written (the
// client held a Content-Length and waited). Here a client pipelines ListObjects replies (each one
// answered as its request is read, as a warm store does) and reads nothing until all are
// answered; the sizes before the last reply are chosen from a ruler of listings so that their sum
// lands a few bytes apart at each step across the kernel's capacity, which this connection shape
// measures first (/proc/net/tcp). Every reply must arrive whole and byte-identical. The window is
// not hit at every step (the kernel may still take the headers into its last unsent segment, and
// the capacity moves between a few values): ROUNDS sweeps make the code before fail in each run
// seen (bench/http/uws-end.ts --mode scan shows the same window deterministically on bare uWS).

import { existsSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { call, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;
let store = '';

/** The plain listing: user:anne's 200 documents, ~40 KB. */
const PLAIN = 200;
/** Coarse steps: user:b<x> owns 20·x documents (~4 KB each step). */
const COARSE = 12;
/** Fine steps: user:c<y> owns y documents of ~50 bytes each. */
const FINE = 100;
/** The byte steps of the scan below the kernel's capacity: under the headers' size (~330). */
const STEP = 40;
/** How far below and above the measured capacity the scan goes. */
const BELOW = 360;
const ABOVE = 40;
/** Times the steps are taken. */
const ROUNDS = 16;

const long = (p: string, i: number): string => `doc:${p}${String(i).padStart(6, '0')}-${'x'.repeat(190)}`;
const short = (p: string, i: number): string => `doc:${p}${String(i).padStart(6, '0')}-${'y'.repeat(33)}`;

function tuples(): string {
  const lines: string[] = [];
  const own = (user: string, object: string): number => lines.push(JSON.stringify({ user, relation: 'owner', object }));
  for (let i = 0; i < PLAIN; i++) own('user:anne', long('a', i));
  for (let x = 1; x <= COARSE; x++) for (let i = 0; i < 20 * x; i++) own(`user:b${x}`, long(`b${x}-`, i));
  for (let y = 1; y <= FINE; y++) for (let i = 0; i < y; i++) own(`user:c${y}`, short(`c${y}-`, i));
  return lines.join('\n') + '\n';
}

beforeAll(async () => {
  server = await start();
  store = await storeWithModel(server.base, 'whole-replies');
  const r = await call(server.base, 'POST', `/stores/${store}/tuples/import`, tuples(), {
    'content-type': 'application/x-ndjson',
  });
  expect(r.status, r.text).toBe(200);
}, 60_000);

afterAll(async () => {
  await server?.close();
});

/** The raw ListObjects request for `user`'s documents. */
function request(user: string): string {
  const json = JSON.stringify({ type: 'doc', relation: 'owner', user });
  return (
    `POST /stores/${store}/list-objects HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`
  );
}

/** The replies in `raw`, in order: each one's head and body; throws where one is cut short. */
function replies(raw: Buffer, count: number): { head: string; body: Buffer }[] {
  const out: { head: string; body: Buffer }[] = [];
  let at = 0;
  for (let n = 0; n < count; n++) {
    const end = raw.indexOf('\r\n\r\n', at);
    if (end === -1) throw new Error(`reply ${n} of ${count}: no header block`);
    const head = raw.toString('latin1', at, end + 4);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!head.startsWith('HTTP/1.1 200') || !length) throw new Error(`reply ${n}: ${head.slice(0, 200)}`);
    const body = raw.subarray(end + 4, end + 4 + Number(length[1]));
    if (body.length !== Number(length[1]))
      throw new Error(`reply ${n} of ${count}: ${body.length} of ${length[1]} body bytes`);
    out.push({ head, body });
    at = end + 4 + body.length;
  }
  if (at !== raw.length) throw new Error(`${raw.length - at} bytes after the last reply`);
  return out;
}

/** A connection whose client reads nothing until `resume`. */
async function paused(): Promise<{ socket: Socket; received: Buffer[] }> {
  const socket = connect(server.port, '127.0.0.1');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  socket.pause();
  const received: Buffer[] = [];
  socket.on('data', (c: Buffer) => received.push(c));
  return { socket, received };
}

/** This connection's kernel queues (/proc/net/tcp): each side's unacknowledged and unread bytes. */
function queues(clientPort: number): { serverTx: number; serverRx: number; clientTx: number; clientRx: number } {
  const hex = (n: number): string => n.toString(16).toUpperCase().padStart(4, '0');
  const serverSide = `0100007F:${hex(server.port)} 0100007F:${hex(clientPort)}`;
  const clientSide = `0100007F:${hex(clientPort)} 0100007F:${hex(server.port)}`;
  const q = { serverTx: 0, serverRx: 0, clientTx: 0, clientRx: 0 };
  for (const line of readFileSync('/proc/net/tcp', 'latin1').split('\n')) {
    const f = line.trim().split(/\s+/);
    const [tx, rx] = (f[4] ?? '0:0').split(':').map((h) => parseInt(h, 16)) as [number, number];
    if (`${f[1]} ${f[2]}` === serverSide) [q.serverTx, q.serverRx] = [tx, rx];
    if (`${f[1]} ${f[2]}` === clientSide) [q.clientTx, q.clientRx] = [tx, rx];
  }
  return q;
}

/**
 * Pipelines `users`' requests on a paused connection; once the server has read them all (each is
 * answered in the same read: the listings are warm) and none is in flight, `measure` runs and the
 * client reads every reply.
 */
async function pipeline(users: readonly string[], measure?: (port: number) => void): Promise<Buffer> {
  const { socket, received } = await paused();
  socket.write(users.map(request).join(''));
  const port = socket.localPort as number;
  await vi.waitFor(
    () => {
      expect(socket.writableLength).toBe(0);
      const q = queues(port);
      expect([q.clientTx, q.serverRx]).toEqual([0, 0]);
      expect(server.inFlight()).toBe(0);
    },
    { timeout: 30_000, interval: 5 },
  );
  measure?.(port);
  socket.resume();
  try {
    await vi.waitFor(() => replies(Buffer.concat(received), users.length), { timeout: 5_000, interval: 10 });
  } finally {
    socket.destroy();
  }
  return Buffer.concat(received);
}

// Linux: the kernel's queues are read from /proc/net/tcp.
describe.runIf(existsSync('/proc/net/tcp'))(
  'a whole reply that begins when the kernel has less room than its headers',
  () => {
    test('arrives whole, at every step across the send buffer capacity', async () => {
      // Each listing once on its own (so it is warm), then all in one pipeline: each one's body, and
      // its size on the wire (the head varies by a digit or two).
      const users = ['user:anne', ...Array.from({ length: COARSE }, (_, x) => `user:b${x + 1}`)];
      for (let y = 1; y <= FINE; y++) users.push(`user:c${y}`);
      for (const u of users) {
        const r = await call(server.base, 'POST', `/stores/${store}/list-objects`, {
          type: 'doc',
          relation: 'owner',
          user: u,
        });
        expect(r.status, r.text).toBe(200);
      }
      const alone = replies(await pipeline(users), users.length);
      const want = new Map(users.map((u, i) => [u, (alone[i] as { body: Buffer }).body]));
      const size = new Map(
        users.map((u, i) => [u, (alone[i] as { head: string }).head.length + (want.get(u) as Buffer).length]),
      );
      const plain = size.get('user:anne') as number;
      expect(plain).toBeGreaterThan(16 * 1024 * 2);

      // The capacity: plain replies past it; what the kernel took is what it holds once all are answered.
      let probed = 0;
      const over = Array.from({ length: Math.ceil((16 << 20) / plain) }, () => 'user:anne');
      await pipeline(over, (port) => {
        const q = queues(port);
        probed = q.serverTx + q.clientRx;
      });
      expect(probed).toBeGreaterThan(plain * 4);
      expect(probed).toBeLessThan(plain * over.length);

      /** Users whose replies add up to `total` bytes, less at most one fine step. */
      const b = (x: number): number => size.get(`user:b${x}`) as number;
      const c = (y: number): number => size.get(`user:c${y}`) as number;
      const fill = (total: number): string[] => {
        const count = Math.floor((total - b(1) - c(1)) / plain);
        let rest = total - count * plain; // from b(1) + c(1) to that plus one plain reply
        let x = COARSE;
        while (x > 1 && b(x) > rest - c(1)) x--;
        rest -= b(x);
        let y = FINE;
        while (y > 1 && c(y) > rest) y--;
        return [...Array.from({ length: count }, () => 'user:anne'), `user:b${x}`, `user:c${y}`];
      };
      /**
       * One connection: replies adding up to `total`, then a plain one; each must arrive as it was
       * alone. Returns what the kernel held once all were answered, when the replies were more than
       * it takes (the connection's capacity), else undefined.
       */
      const once = async (total: number): Promise<number | undefined> => {
        const sequence = [...fill(total), 'user:anne'];
        let held = 0;
        const raw = await pipeline(sequence, (port) => {
          const q = queues(port);
          held = q.serverTx + q.clientRx;
        });
        replies(raw, sequence.length).forEach((r, i) => {
          if (!r.body.equals(want.get(sequence[i] as string) as Buffer)) expect.fail(`reply ${i} differs`);
        });
        return held < raw.length ? held : undefined;
      };
      // The capacity differs a little with the sizes written, and from one connection to the next it
      // takes one of a few values, mostly the one before: each step aims below what the last
      // connection held, by less than the headers of the last reply, a few times over.
      let capacity = (await once(probed + 3 * plain)) ?? probed;
      let filled = 0;
      for (let round = 0; round < ROUNDS; round++)
        for (let below = BELOW; below >= -ABOVE; below -= STEP) {
          const held = await once(capacity - below);
          if (held !== undefined) [capacity, filled] = [held, filled + 1];
        }
      // The steps reached the kernel's capacity: some connections' replies filled it (the others
      // had one of its larger values).
      expect(filled).toBeGreaterThan(0);
    }, 240_000);
  },
);
