// A minimal RFC 6455 WebSocket client over node:net, for Node versions without a global
// WebSocket (Node 20): handshake, masked binary frames out, fragmented frames in, ping/pong,
// close. No extensions, no TLS (the channel is served on loopback or behind a proxy).

import { createHash, randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** The transport the channel client needs; implemented by this class and by a global WebSocket wrapper. */
export interface FrameSocket {
  /** The subprotocol the server accepted ('' when none). */
  readonly protocol: string;
  send(data: Uint8Array): void;
  close(code?: number): void;
  onMessage: (data: Buffer) => void;
  onClose: (code: number, reason: string) => void;
}

export class MiniWebSocket implements FrameSocket {
  onMessage: (data: Buffer) => void = () => undefined;
  onClose: (code: number, reason: string) => void = () => undefined;
  #chunks: Buffer[] = [];
  #buffered = 0;
  /** Bytes needed before the next frame can be parsed. */
  #need = 2;
  #fragments: Buffer[] = [];
  #closed = false;

  private constructor(
    private readonly socket: Socket,
    readonly protocol: string,
  ) {}

  /**
   * Opens `ws://host:port/path`, offering `protocols` and sending `headers` with the upgrade
   * (e.g. `Authorization`); rejects when the server does not switch protocols.
   */
  static connect(
    url: string,
    protocols: readonly string[] = [],
    headers: Readonly<Record<string, string>> = {},
  ): Promise<MiniWebSocket> {
    const u = new URL(url);
    if (u.protocol !== 'ws:') return Promise.reject(new Error(`unsupported URL scheme ${u.protocol} (only ws:)`));
    let extra = '';
    for (const [name, value] of Object.entries(headers)) {
      // No CR/LF or colon in a name, no CR/LF in a value: a header must not split the request.
      if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\r\n]/.test(value))
        return Promise.reject(new Error(`invalid header ${JSON.stringify(name)}`));
      extra += `${name}: ${value}\r\n`;
    }
    const key = randomBytes(16).toString('base64');
    const expected = createHash('sha1')
      .update(key + GUID)
      .digest('base64');
    return new Promise((resolve, reject) => {
      const socket = connect({ host: u.hostname, port: Number(u.port || 80), noDelay: true });
      let head = Buffer.alloc(0);
      const onData = (chunk: Buffer): void => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end === -1) return;
        socket.off('data', onData);
        socket.off('error', reject);
        const lines = head.subarray(0, end).toString('latin1').split('\r\n');
        const accept = lines
          .find((l) => l.toLowerCase().startsWith('sec-websocket-accept:'))
          ?.slice(21)
          .trim();
        if (!/^HTTP\/1\.1 101/.test(lines[0] ?? '') || accept !== expected) {
          socket.destroy();
          return reject(new Error(`WebSocket handshake failed: ${lines[0] ?? 'no status line'}`));
        }
        const protocol =
          lines
            .find((l) => l.toLowerCase().startsWith('sec-websocket-protocol:'))
            ?.slice(23)
            .trim() ?? '';
        const ws = new MiniWebSocket(socket, protocol);
        socket.on('data', (c: Buffer) => ws.#receive(c));
        socket.on('close', () => ws.#closedBy(1006, 'connection lost'));
        socket.on('error', () => ws.#closedBy(1006, 'connection error'));
        resolve(ws);
        const rest = head.subarray(end + 4);
        if (rest.length > 0) ws.#receive(rest);
      };
      socket.on('data', onData);
      socket.on('error', reject);
      socket.write(
        `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n` +
          (protocols.length > 0 ? `Sec-WebSocket-Protocol: ${protocols.join(', ')}\r\n` : '') +
          extra +
          '\r\n',
      );
    });
  }

  send(data: Uint8Array): void {
    this.#frame(0x2, data);
  }

  close(code = 1000): void {
    if (this.#closed) return;
    const payload = Buffer.alloc(2);
    payload.writeUInt16BE(code);
    this.#frame(0x8, payload);
    this.socket.end();
  }

  /** Writes one masked frame. The payload is copied once and masked 32 bits at a time. */
  #frame(opcode: number, data: Uint8Array): void {
    if (this.#closed) return;
    const n = data.length;
    const lenBytes = n < 126 ? 0 : n < 65536 ? 2 : 8;
    const header = 2 + lenBytes + 4;
    const pad = (4 - (header % 4)) % 4; // align the payload so it can be masked as Uint32s
    const out = Buffer.allocUnsafeSlow(pad + header + n);
    out[pad] = 0x80 | opcode;
    out[pad + 1] = 0x80 | (lenBytes === 0 ? n : lenBytes === 2 ? 126 : 127);
    if (lenBytes === 2) out.writeUInt16BE(n, pad + 2);
    if (lenBytes === 8) out.writeBigUInt64BE(BigInt(n), pad + 2);
    const maskAt = pad + header - 4; // 4-aligned: `out` owns its ArrayBuffer (byteOffset 0)
    randomBytes(4).copy(out, maskAt);
    out.set(data, pad + header);
    const word = new Uint32Array(out.buffer, maskAt, 1)[0] ?? 0;
    const words = n >>> 2;
    const body32 = new Uint32Array(out.buffer, pad + header, words);
    for (let i = 0; i < words; i++) body32[i] = (body32[i] ?? 0) ^ word;
    for (let i = words * 4; i < n; i++)
      out[pad + header + i] = (out[pad + header + i] ?? 0) ^ (out[maskAt + (i & 3)] ?? 0);
    this.socket.write(pad === 0 ? out : out.subarray(pad));
  }

  /** Buffers input until a whole frame is there; concatenates only when a frame is complete. */
  #receive(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    while (this.#buffered >= this.#need) {
      const buf = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks, this.#buffered);
      this.#chunks = [buf];
      const b1 = buf[1] ?? 0;
      let len = b1 & 0x7f;
      let offset = 2;
      if (len === 126) {
        if (buf.length < 4) return void (this.#need = 4);
        len = buf.readUInt16BE(2);
        offset = 4;
      } else if (len === 127) {
        if (buf.length < 10) return void (this.#need = 10);
        len = Number(buf.readBigUInt64BE(2));
        offset = 10;
      }
      if (b1 & 0x80) offset += 4; // servers never mask; skip a key anyway
      if (buf.length < offset + len) return void (this.#need = offset + len);
      const rest = buf.subarray(offset + len);
      this.#chunks = rest.length > 0 ? [rest] : [];
      this.#buffered = rest.length;
      this.#need = 2;
      this.#handle(buf[0] ?? 0, buf.subarray(offset, offset + len));
    }
  }

  #handle(b0: number, payload: Buffer): void {
    const fin = (b0 & 0x80) !== 0;
    const opcode = b0 & 0x0f;
    if (opcode === 0x9) return this.#frame(0xa, payload);
    if (opcode === 0xa) return;
    if (opcode === 0x8) {
      const code = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
      this.#closedBy(code, payload.subarray(2).toString('utf8'));
      this.socket.end();
      return;
    }
    if (!fin) return void this.#fragments.push(Buffer.from(payload));
    if (opcode === 0x0 && this.#fragments.length > 0) {
      this.#fragments.push(payload);
      const whole = Buffer.concat(this.#fragments);
      this.#fragments = [];
      return this.onMessage(whole);
    }
    this.onMessage(payload);
  }

  #closedBy(code: number, reason: string): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onClose(code, reason);
  }
}

/** The subset of the WHATWG WebSocket used here (Node ≥ 22 has it as a global). */
interface StandardWebSocket {
  binaryType: string;
  readonly protocol: string;
  onopen: (() => void) | null;
  onerror: ((e: unknown) => void) | null;
  onmessage: ((e: { data: unknown }) => void) | null;
  onclose: ((e: { code: number; reason: string }) => void) | null;
  send(data: Uint8Array): void;
  close(code?: number): void;
}

/**
 * The global WebSocket when the runtime has one and no `headers` are asked for (the WHATWG
 * WebSocket cannot send request headers), else MiniWebSocket.
 */
export function openFrameSocket(
  url: string,
  protocols: readonly string[] = [],
  headers: Readonly<Record<string, string>> = {},
): Promise<FrameSocket> {
  const Standard = (globalThis as { WebSocket?: new (url: string, protocols: string[]) => StandardWebSocket })
    .WebSocket;
  if (typeof Standard !== 'function' || Object.keys(headers).length > 0)
    return MiniWebSocket.connect(url, protocols, headers);
  return new Promise((resolve, reject) => {
    const ws = new Standard(url, [...protocols]);
    ws.binaryType = 'arraybuffer';
    const socket: FrameSocket = {
      get protocol() {
        return ws.protocol;
      },
      send: (data) => ws.send(data),
      close: (code) => ws.close(code),
      onMessage: () => undefined,
      onClose: () => undefined,
    };
    ws.onopen = () => resolve(socket);
    ws.onerror = (e) => reject(new Error(`WebSocket error: ${String(e)}`));
    ws.onmessage = (e) => socket.onMessage(Buffer.from(e.data as ArrayBuffer));
    ws.onclose = (e) => socket.onClose(e.code, e.reason);
  });
}
