// Reproduces, on bare uWebSockets.js (the build latch loads, src/http/uws.ts), the loss of a whole
// reply's body larger than uWS's 16 KB cork buffer (src/http/whole-reply.ts says why), and
// compares ways of writing such a reply:
//
//   end     headers and end(body) in one cork (latch's Exchange.send before)
//   split   headers and tryEnd(no bytes, size) in one cork, end(body) in the next (latch now)
//   sliced  headers and tryEnd(slice, size) per cork, each next slice a turn later or on
//           onWritable, resuming from getWriteOffset() (no write larger than the cork buffer)
//
// `--mode scan` (deterministic): a client reads nothing; the first reply's body takes each size in
// steps of `--step` bytes across what the kernel takes of one write on such a connection (found
// first with tryEnd, which writes only what the socket takes), and a second reply of 100 KB
// follows at once. When the first leaves the kernel less room than the second's headers, `end`
// flushes those headers, the socket takes part, and uWS drops the body: the client waits on a
// Content-Length forever, and the server's response stays pending (its onAborted runs at close).
//
// `--mode bursts`: a client keeps `--window` requests in flight, written `--group` at a time (the
// last of each group asks for 50–300 KB, the others for Check-sized replies), and reads in bursts
// with pauses. The window is narrow here: it reproduced in none of the runs, the kernel took the
// headers each time (it appends a small write to the last unsent segment even when full). And
// uWS v20.30 closes a connection whose next request arrives while a reply is pending, so `sliced`
// (a reply over several turns) is cut off under a pipelining client.
//
//   npx tsx bench/http/uws-end.ts [--mode scan] [--step 20] [--span 800] [--way end,split,sliced]
//   npx tsx bench/http/uws-end.ts --mode bursts [--requests 200] [--rounds 5] [--burst-ms 2]
//     [--stall-ms 3000] [--window 16] [--group 1] [--answer micro|turn]

import { connect } from 'node:net';
import { parseArgs } from 'node:util';
import { loadUws, type HttpResponse } from '../../src/http/uws.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '5' },
    'burst-ms': { type: 'string', default: '2' },
    'stall-ms': { type: 'string', default: '3000' },
    way: { type: 'string', default: 'end,split,sliced' },
    mode: { type: 'string', default: 'scan' },
    step: { type: 'string', default: '20' },
    span: { type: 'string', default: '800' },
    window: { type: 'string', default: '16' },
    answer: { type: 'string', default: 'micro' },
    group: { type: 'string', default: '1' },
  },
});
const REQUESTS = Number(values.requests);
const BURST_MS = Number(values['burst-ms']);
const STALL_MS = Number(values['stall-ms']);
/** Requests in flight: more go out as the replies' heads arrive. */
const WINDOW = Number(values.window);
/** Requests written in one go by the client (the last one's reply large). */
const GROUP = Number(values.group);
/**
 * When the server answers: `micro` in the handler's own microtasks (a promise that settles without
 * I/O, as latch's cached replies: uWS.js drains microtasks before it parses the next request, so
 * pipelining works); `turn` a turn later (setImmediate). uWS v20.30 closes a connection whose next
 * request arrives while a reply is pending, so `turn` needs `--window 1`: each request goes out
 * once the previous reply's head arrived, its body still on the way.
 */
const ANSWER = String(values.answer);
/** A slice that fits an empty cork buffer beside its chunk-less tryEnd framing. */
const SLICE = 16 * 1024 - 256;
const uws = loadUws();

/**
 * Reply n's body size: the last of each group of `--group` requests is large (50–300 KB), the
 * others small (200–1,700 bytes, as Check replies), so that the small ones before a large one in
 * one read of the server sit in its cork buffer when the large one is written.
 */
const sizeOf = (n: number): number =>
  n % GROUP === GROUP - 1 ? 50 * 1024 + ((n * 7919) % (250 * 1024)) : 200 + ((n * 131) % 1500);
function bodyOf(n: number): Buffer {
  const b = Buffer.allocUnsafe(sizeOf(n));
  for (let i = 0; i < b.length; i++) b[i] = 0x61 + ((n * 7 + i) % 26);
  return b;
}

let way = 'end';

/** Headers as latch writes them: a few, a couple hundred bytes. */
function headers(res: HttpResponse, n: number): void {
  res.writeHeader('Content-Type', 'application/json');
  res.writeHeader('X-Request-Id', `01JBENCH${String(n).padStart(18, '0')}`);
  res.writeHeader('fga-query-duration-ms', '1');
  res.writeHeader('Openfga-Store-Id', '01JBENCHSTORE0000000000000');
}

/** Writes `body` from `res.getWriteOffset()` on, a slice per cork (the `sliced` way). */
function sliced(res: HttpResponse, body: Buffer, state: { aborted: boolean }): void {
  const step = (): void => {
    while (!state.aborted) {
      const at = res.getWriteOffset();
      if (at >= body.length) return;
      const slice = body.subarray(at, Math.min(body.length, at + SLICE));
      let ok = false;
      let done = false;
      res.cork(() => ([ok, done] = res.tryEnd(slice, body.length)));
      if (done) return;
      if (!ok) {
        res.onWritable(() => {
          setImmediate(step);
          return true;
        });
        return;
      }
      return void setImmediate(step);
    }
  };
  step();
}

/** The scan's first reply: this many bytes (set per connection); its second: 100 KB. */
let scanFirst = 0;
const SCAN_SECOND = 100 * 1024;
/** Responses whose onAborted ran after their end was called: ends that left them pending. */
let pendingAfterEnd = 0;

/** Writes reply `n` (or the scan's `path`) the current way. */
function answer(res: HttpResponse, path: string, state: { aborted: boolean; ended: boolean }): void {
  if (state.aborted) return;
  const n = Number(path.slice(path.lastIndexOf('/') + 1));
  const body = path.startsWith('/scan/') ? Buffer.alloc(n === 0 ? scanFirst : SCAN_SECOND, 0x61) : bodyOf(n);
  state.ended = true;
  if (way === 'end') {
    res.cork(() => {
      headers(res, n);
      res.end(body);
    });
    return;
  }
  if (way === 'split') {
    res.cork(() => {
      headers(res, n);
      res.tryEnd(new ArrayBuffer(0), body.length);
    });
    res.cork(() => res.end(body));
    return;
  }
  let ok = false;
  let done = false;
  res.cork(() => {
    headers(res, n);
    [ok, done] = res.tryEnd(body.subarray(0, Math.min(body.length, SLICE - 512)), body.length);
  });
  if (done) return;
  if (ok) setImmediate(() => sliced(res, body, state));
  else
    res.onWritable(() => {
      setImmediate(() => sliced(res, body, state));
      return true;
    });
}

const app = uws.App();
app.any('/*', (res, req) => {
  const path = req.getUrl();
  const state = { aborted: false, ended: false };
  res.onAborted(() => {
    state.aborted = true;
    if (state.ended && way !== 'sliced') pendingAfterEnd++;
  });
  const now = (): void => answer(res, path, state);
  if (ANSWER === 'turn') setImmediate(now);
  else void Promise.resolve().then(now);
});
// What the kernel takes of one write on a fresh connection whose client reads nothing.
app.get('/probe', (res) => {
  res.onAborted(() => undefined);
  const big = Buffer.alloc(64 << 20, 0x61);
  res.cork(() => {
    res.tryEnd(big, big.length);
    probed = res.getWriteOffset();
  });
});
let probed = 0;
const port = await new Promise<number>((resolve) =>
  app.listen('127.0.0.1', 0, (t) => resolve(uws.us_socket_local_port(t as never))),
);

/** One connection: replies read in bursts, requests sent as heads arrive; 'ok' or what went wrong. */
async function round(): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  const want = Array.from({ length: REQUESTS }, (_, n) => sizeOf(n)).reduce((a, b) => a + b, 0);
  const raw = Buffer.allocUnsafe(want + 512 * REQUESTS + 1024 * 1024);
  let got = 0;
  let closed = false;
  let sent = 0;
  /** Reply `n` starts at `at`; `bodyAt`: where its body starts once its head arrived (-1: not yet). */
  let n = 0;
  let heads = 0;
  let at = 0;
  let bodyAt = -1;
  let size = 0;
  let broken: string | undefined;
  /** Keeps `--window` requests in flight, written `--group` at a time. */
  const request = (): void => {
    while (sent < REQUESTS && sent - heads < WINDOW) {
      let out = '';
      for (let k = 0; k < GROUP && sent < REQUESTS; k++) out += `GET /${sent++} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;
      socket.write(out);
    }
  };
  const parse = (): void => {
    while (broken === undefined && n < REQUESTS) {
      if (bodyAt === -1) {
        const end = raw.subarray(0, got).indexOf('\r\n\r\n', at);
        if (end === -1) return;
        const head = raw.toString('latin1', at, end);
        const length = /\r\ncontent-length: *(\d+)/i.exec(head);
        size = Number(length?.[1]);
        if (!head.startsWith('HTTP/1.1 200') || size !== sizeOf(n))
          return void (broken = `reply ${n}: head ${JSON.stringify(head.slice(0, 40))}, length ${size}`);
        bodyAt = end + 4;
        heads++;
        request();
      }
      if (got - bodyAt < size) return;
      if (!raw.subarray(bodyAt, bodyAt + size).equals(bodyOf(n)))
        return void (broken = `reply ${n}: other bytes than written (another reply's?)`);
      at = bodyAt + size;
      bodyAt = -1;
      n++;
    }
  };
  socket.on('data', (c: Buffer) => {
    if (got + c.length > raw.length) return void (broken = `more bytes than ${REQUESTS} replies`);
    c.copy(raw, got);
    got += c.length;
    parse();
    // Bursts: every read pauses the socket for `--burst-ms`.
    socket.pause();
    setTimeout(() => socket.resume(), BURST_MS);
  });
  socket.on('close', () => (closed = true));
  socket.on('error', () => undefined);
  request();
  let last = -1;
  let since = Date.now();
  while (broken === undefined && n < REQUESTS && !closed && Date.now() - since < STALL_MS) {
    await new Promise((r) => setTimeout(r, 20));
    if (got !== last) [last, since] = [got, Date.now()];
  }
  socket.destroy();
  const where = `reply ${n}: ${bodyAt === -1 ? 'head not in' : `${got - bodyAt} of ${size} body bytes`}`;
  if (broken !== undefined) return `BROKEN after ${n} whole replies: ${broken}`;
  if (n === REQUESTS) return got === at ? 'ok' : `BROKEN: ${got - at} bytes after the last reply`;
  return `${closed ? 'CLOSED by the server' : `HUNG (no byte for ${STALL_MS} ms)`} after ${n} whole replies, ${where}`;
}

/** The scan: connections across the kernel's take of one write; how many lost their second reply. */
async function scan(): Promise<string> {
  const probe = connect(port, '127.0.0.1');
  probe.pause();
  probe.write('GET /probe HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  while (probed === 0) await new Promise((r) => setTimeout(r, 10));
  probe.destroy();
  const step = Number(values.step);
  const span = Number(values.span);
  const bad: string[] = [];
  let count = 0;
  pendingAfterEnd = 0;
  for (let b = probed - span; b <= probed + span / 4; b += step) {
    scanFirst = b;
    count++;
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.pause();
    let got = 0;
    let closed = false;
    socket.on('data', (c: Buffer) => (got += c.length));
    socket.on('close', () => (closed = true));
    socket.on('error', () => undefined);
    socket.write('GET /scan/0 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nGET /scan/1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await new Promise((r) => setTimeout(r, 5)); // the server answers both (or starts to) meanwhile
    socket.resume();
    const want = b + SCAN_SECOND + 2 * 200; // the two head blocks are ~200 bytes each
    let last = -1;
    let since = Date.now();
    while (got < want && !closed && Date.now() - since < 300) {
      await new Promise((r) => setTimeout(r, 5));
      if (got !== last) [last, since] = [got, Date.now()];
    }
    if (got < want) bad.push(`${b - probed}${closed ? ' (closed)' : ''}`);
    socket.destroy();
  }
  await new Promise((r) => setTimeout(r, 50));
  return (
    `first body from ${-span} to +${span / 4} bytes around the kernel's take of one write (${probed}), ` +
    `step ${step}: ${bad.length}/${count} connections short` +
    (bad.length ? ` at ${bad.join(', ')}` : '') +
    `; responses left pending by end: ${pendingAfterEnd}`
  );
}

if (String(values.mode) === 'scan')
  for (const w of String(values.way).split(',')) {
    way = w;
    console.log(`${w}: ${await scan()}`);
  }
else
  for (const w of String(values.way).split(',')) {
    way = w;
    const results: string[] = [];
    for (let r = 0; r < Number(values.rounds); r++) results.push(await round());
    const bad = results.filter((x) => x !== 'ok');
    console.log(
      `${w}: ${REQUESTS} replies (every ${GROUP}th of 50–300 KB), answered ${ANSWER}, ${WINDOW} in flight, ` +
        `reader pausing ${BURST_MS} ms per read: ` +
        (bad.length === 0 ? `ok ×${results.length}` : `FAILED ${bad.length}/${results.length}: ${bad.join('; ')}`),
    );
  }
process.exit(0);
