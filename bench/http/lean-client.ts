// A lean HTTP/1.1 client for load generators written in TypeScript: keep-alive connections over
// `node:net`, one request in flight per connection, JSON bodies with a Content-Length. The
// replication scenario offers 1,000 writes/s and polls a replica while both nodes and PostgreSQL
// share the machine's 2 cores; undici's `fetch` costs the benchmark process several times the
// CPU per request of this client (bench/README.md, "Load generators"), CPU the servers under test
// then do not get. Only what latch's answers use is parsed: the status line, Content-Length and
// the body; a chunked answer or a closed connection fails the request.

import { connect, type Socket } from 'node:net';

export interface LeanResponse {
  readonly status: number;
  /** Response header lines, lower-cased names. */
  readonly headers: ReadonlyMap<string, string>;
  readonly text: string;
}

interface Pending {
  readonly resolve: (r: LeanResponse) => void;
  readonly reject: (e: Error) => void;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/** One keep-alive connection; requests sent while one is in flight wait in order. */
class Connection {
  private readonly socket: Socket;
  private buf: Buffer = Buffer.alloc(0);
  private readonly queue: { payload: Buffer; pending: Pending }[] = [];
  private inFlight: Pending | undefined;
  private failed: Error | undefined;

  constructor(host: string, port: number) {
    this.socket = connect({ host, port, noDelay: true });
    this.socket.on('data', (d: Buffer) => this.onData(d));
    const fail = (e: Error): void => this.fail(e);
    this.socket.on('error', fail);
    this.socket.on('close', () => fail(new Error('lean-client: connection closed')));
  }

  get load(): number {
    return this.queue.length + (this.inFlight ? 1 : 0);
  }

  send(payload: Buffer): Promise<LeanResponse> {
    return new Promise((resolve, reject) => {
      if (this.failed) return reject(this.failed);
      this.queue.push({ payload, pending: { resolve, reject } });
      this.next();
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private next(): void {
    if (this.inFlight || this.queue.length === 0) return;
    const item = this.queue.shift() as { payload: Buffer; pending: Pending };
    this.inFlight = item.pending;
    this.socket.write(item.payload);
  }

  private onData(d: Buffer): void {
    this.buf = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
    for (;;) {
      const end = this.buf.indexOf(HEADER_END);
      if (end < 0) return;
      const head = this.buf.toString('latin1', 0, end).split('\r\n');
      const status = Number((head[0] ?? '').split(' ')[1]);
      const headers = new Map<string, string>();
      for (let i = 1; i < head.length; i++) {
        const line = head[i] as string;
        const colon = line.indexOf(':');
        headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
      if (headers.has('transfer-encoding')) return this.fail(new Error('lean-client: chunked answers are not read'));
      const length = Number(headers.get('content-length') ?? 0);
      if (this.buf.length < end + 4 + length) return;
      const text = this.buf.toString('utf8', end + 4, end + 4 + length);
      this.buf = this.buf.subarray(end + 4 + length);
      const done = this.inFlight;
      this.inFlight = undefined;
      done?.resolve({ status, headers, text });
      this.next();
    }
  }

  private fail(e: Error): void {
    if (this.failed) return;
    this.failed = e;
    this.inFlight?.reject(e);
    this.inFlight = undefined;
    for (const q of this.queue.splice(0)) q.pending.reject(e);
  }
}

/** Up to `connections` keep-alive connections to one origin; each request goes to the least loaded. */
export class LeanClient {
  private readonly conns: Connection[] = [];
  private readonly host: string;
  private readonly port: number;

  constructor(
    origin: string,
    private readonly connections: number,
  ) {
    const u = new URL(origin);
    this.host = u.hostname;
    this.port = Number(u.port);
  }

  /** POST of a JSON body; resolves with the status, headers and body text. */
  post(path: string, body: unknown, headers: Readonly<Record<string, string>> = {}): Promise<LeanResponse> {
    const json = Buffer.from(JSON.stringify(body));
    let extra = '';
    for (const [k, v] of Object.entries(headers)) extra += `${k}: ${v}\r\n`;
    const head = `POST ${path} HTTP/1.1\r\nHost: ${this.host}\r\nContent-Type: application/json\r\nContent-Length: ${json.length}\r\n${extra}\r\n`;
    return this.pick().send(Buffer.concat([Buffer.from(head, 'latin1'), json]));
  }

  close(): void {
    for (const c of this.conns.splice(0)) c.close();
  }

  private pick(): Connection {
    let best: Connection | undefined;
    for (const c of this.conns) if (!best || c.load < best.load) best = c;
    if (best && (best.load === 0 || this.conns.length >= this.connections)) return best;
    const c = new Connection(this.host, this.port);
    this.conns.push(c);
    return c;
  }
}
