// Reproduces the uWS behaviour that bounds latch's stream writes (src/http/exchange.ts,
// STREAM_SLICE_BYTES) on bare uWebSockets.js, the build latch loads (src/http/uws.ts): a chunked
// response of `--mb` MB written to a consumer that reads in bursts (`slow`), not at all for a while
// (`stall`) or at once (`fast`), each way written
//
//   one-per-cork   one write of `--slice` bytes per cork (latch: STREAM_SLICE_BYTES)
//   many-per-cork  `--per-cork` such writes in one cork (latch's #writeBytes before: 5 × 12 KB)
//   big-per-cork   one write of `--big` bytes per cork (64 KB: more than the 16 KB cork buffer)
//
// waiting for `onWritable` after a refused write. Each response's chunked framing is parsed and
// its bytes compared with what was written. uWS v20.30 loses a write that does not fit what is
// left of its cork buffer when the socket refuses the flush of that buffer (AsyncSocket::uncork
// returns before writing it): many-per-cork breaks under the `slow` consumer ("no CRLF after its
// data", a chunk header whose bytes never came). big-per-cork reaches the same code with only the
// 8-byte chunk header in the cork buffer: it breaks only when the socket refuses those 8 bytes,
// rarely, so it is not safe either; one-per-cork never reaches it.
//
//   npx tsx bench/http/uws-cork.ts [--mb 32] [--rounds 3] [--slice 16128] [--per-cork 5] [--big 65536]

import { connect } from 'node:net';
import { parseArgs } from 'node:util';
import { loadUws } from '../../src/http/uws.js';

const { values } = parseArgs({
  options: {
    mb: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '3' },
    slice: { type: 'string', default: String(16 * 1024 - 256) },
    'per-cork': { type: 'string', default: '5' },
    big: { type: 'string', default: '65536' },
  },
});
const TOTAL = Number(values.mb) * 1024 * 1024;
const uws = loadUws();

interface Way {
  readonly name: string;
  readonly size: number;
  readonly perCork: number;
}
const ways: Way[] = [
  { name: 'one-per-cork', size: Number(values.slice), perCork: 1 },
  { name: 'many-per-cork', size: 12 * 1024, perCork: Number(values['per-cork']) },
  { name: 'big-per-cork', size: Number(values.big), perCork: 1 },
];
let way = ways[0] as Way;

function fill(n: number, into: Buffer): void {
  for (let i = 0; i < into.length; i++) into[i] = 0x61 + ((n * 7 + i) % 26);
}

const app = uws.App();
app.get('/*', (res) => {
  const { size, perCork } = way;
  const count = Math.ceil(TOTAL / size);
  let aborted = false;
  res.onAborted(() => (aborted = true));
  let n = 0;
  const step = (): void => {
    while (!aborted && n < count) {
      let ok = true;
      res.cork(() => {
        for (let k = 0; k < perCork && n < count; k++, n++) {
          const buf = Buffer.allocUnsafe(size);
          fill(n, buf);
          ok = res.write(buf) && ok;
        }
      });
      if (!ok) {
        res.onWritable(() => (setImmediate(step), true));
        return;
      }
      if (n % 8 === 0) return void setImmediate(step);
    }
    if (!aborted) res.cork(() => res.end());
  };
  res.cork(() => res.writeStatus('200 OK'));
  step();
});
const port = await new Promise<number>((resolve) =>
  app.listen('127.0.0.1', 0, (t) => resolve(uws.us_socket_local_port(t as never))),
);

/** What the response's framing and bytes say: 'ok' or where they broke. */
function check(raw: Buffer): string {
  const want = Buffer.allocUnsafe(way.size);
  let at = raw.indexOf('\r\n\r\n') + 4;
  for (let k = 0; ; k++) {
    const eol = raw.indexOf('\r\n', at);
    if (eol === -1) return `cut after ${k} chunks (never reached the terminator)`;
    const head = raw.toString('latin1', at, eol);
    if (!/^[0-9a-f]+$/i.test(head)) return `chunk ${k}: header ${JSON.stringify(head.slice(0, 12))} does not parse`;
    const size = parseInt(head, 16);
    if (size === 0) return k === Math.ceil(TOTAL / way.size) ? 'ok' : `ended after ${k} chunks`;
    if (raw.toString('latin1', eol + 2 + size, eol + 4 + size) !== '\r\n')
      return `chunk ${k} (${size} bytes): no CRLF after its data`;
    fill(k, want);
    if (!raw.subarray(eol + 2, eol + 2 + size).equals(want)) return `chunk ${k}: other bytes than written`;
    at = eol + 4 + size;
  }
}

async function response(reader: string): Promise<Buffer> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve) => {
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      // Bursts: a third of the reads pause the socket for 2 ms.
      if (reader === 'slow' && Math.random() < 0.3) {
        socket.pause();
        setTimeout(() => socket.resume(), 2);
      }
      if (Buffer.concat(chunks.slice(-2)).toString('latin1').endsWith('\r\n0\r\n\r\n')) resolve();
    });
    socket.on('close', () => resolve());
  });
  socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  if (reader === 'stall') {
    socket.pause();
    setTimeout(() => socket.resume(), 500);
  }
  // A response that lost bytes never ends: the framing waits for them.
  const cut = setTimeout(() => socket.destroy(), 15_000);
  await done;
  clearTimeout(cut);
  socket.destroy();
  return Buffer.concat(chunks);
}

for (const w of ways) {
  way = w;
  for (const reader of ['fast', 'slow', 'stall']) {
    const results: string[] = [];
    for (let r = 0; r < Number(values.rounds); r++) results.push(check(await response(reader)));
    const broken = results.filter((x) => x !== 'ok');
    console.log(
      `${w.name} (${w.perCork} × ${w.size} B), ${reader} consumer: ` +
        (broken.length === 0
          ? `ok ×${results.length}`
          : `BROKEN ${broken.length}/${results.length}: ${broken.join('; ')}`),
    );
  }
}
process.exit(0);
