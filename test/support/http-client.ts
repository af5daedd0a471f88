// A plain HTTP/1.1 client for the test harnesses that send thousands of requests (the conformance
// suites over the wire and across replicas, the replica and placement processes): node:http over
// kept-alive connections, for about a quarter of the client CPU of fetch (≈ 60-130 µs per request
// against 290-530 µs for undici's fetch on this machine, same server, same request). The server
// sees the same requests: method, path, JSON body, content-type and the caller's headers.
//
// A kept-alive connection idle for 4 s is closed by this side, as fetch (undici) does, so that a
// request is not sent on a connection the server is closing as idle (10 s).

import { Agent, request as httpRequest } from 'node:http';

const agent = new Agent({ keepAlive: true, timeout: 4_000 });

export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  /** The whole body, decoded as UTF-8. */
  readonly text: string;
}

/**
 * Sends one request and reads the whole reply. Rejects with the socket's error (its `code`, e.g.
 * ECONNRESET or ECONNREFUSED) when the connection fails before the reply starts, and with
 * `{ code: 'REPLY_BODY_FAILED' }` when it fails while the body is read.
 */
export function send(
  url: string,
  init: { method: string; body?: string | undefined; headers?: Record<string, string> },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: init.method, headers: init.headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) =>
        reject(Object.assign(new Error('reply body failed', { cause: err }), { code: 'REPLY_BODY_FAILED' })),
      );
      res.on('end', () => {
        if (!res.complete) {
          reject(Object.assign(new Error('reply body cut short'), { code: 'REPLY_BODY_FAILED' }));
          return;
        }
        const headers = new Headers();
        for (let i = 0; i + 1 < res.rawHeaders.length; i += 2)
          headers.append(res.rawHeaders[i] as string, res.rawHeaders[i + 1] as string);
        resolve({ status: res.statusCode ?? 0, headers, text: Buffer.concat(chunks).toString('utf8') });
      });
    });
    req.on('error', reject);
    req.end(init.body);
  });
}

/** The connection was reset or closed before any reply byte: nothing was answered. */
export function failedBeforeReply(e: unknown): boolean {
  const code = (e as { code?: unknown } | undefined)?.code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}
