// The one JSON client (src/client/json.ts) that the `latch` command and the playground share:
// its fallback codes, streamed replies and the sharing and renewal of a client-credentials token,
// against a real HTTP server on 127.0.0.1.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, Credentials, FallbackCode, JsonClient, tokenUrlOf } from '../../src/client/json.js';
import { FgaHttpClient } from '../../src/cli/http-client.js';

type Route = (req: IncomingMessage, res: ServerResponse, body: string) => void;
const routes = new Map<string, Route>();
let tokenRequests = 0;
let lastAuthorization: string | undefined;
let server: Server;
let base: string;

function route(path: string, r: Route): void {
  routes.set(path, r);
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      lastAuthorization = req.headers.authorization;
      const r = routes.get(req.url ?? '');
      if (r) r(req, res, body);
      else res.writeHead(404).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  route('/json-error', (_q, res) =>
    res.writeHead(400).end(JSON.stringify({ code: 'validation_error', message: 'bad' })),
  );
  route('/html-error', (_q, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>'));
  route('/not-json', (_q, res) => res.writeHead(200).end('hello'));
  route('/empty', (_q, res) => res.writeHead(204).end());
  route('/echo', (_q, res, body) => res.writeHead(200, { 'x-seen': 'yes' }).end(body));
  route('/stream-ok', (_q, res) => {
    res.writeHead(200);
    res.write('{"result":{"n":1}}\n{"result"');
    res.end(':{"n":2}}\n');
  });
  route('/stream-reason', (_q, res) => {
    res.writeHead(200);
    res.end(
      '{"result":{"n":1}}\n' +
        JSON.stringify({
          error: {
            code: 14,
            message: 'shutting down',
            details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'unavailable', domain: 'latch' }],
          },
        }) +
        '\n',
    );
  });
  route('/stream-bare-error', (_q, res) => res.writeHead(200).end('{"error":{"code":2,"message":"x"}}\n'));
  route('/stream-refused', (_q, res) =>
    res.writeHead(404).end(JSON.stringify({ code: 'store_id_not_found', message: 'no store' })),
  );
  route('/oauth/token', (_q, res, body) => {
    tokenRequests++;
    const form = new URLSearchParams(body);
    if (form.get('client_secret') === 'wrong')
      return void res.writeHead(401).end(JSON.stringify({ error: 'invalid_client', error_description: 'no' }));
    if (form.get('client_secret') === 'silent') return void res.writeHead(200).end('{}');
    res.writeHead(200).end(JSON.stringify({ access_token: `t${tokenRequests}`, expires_in: 60 }));
  });
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function failure(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

async function collect(it: AsyncIterable<Record<string, unknown>>): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  for await (const r of it) out.push(r);
  return out;
}

describe('JsonClient calls', () => {
  it('sends JSON and returns the parsed answer, its headers to onHeaders', async () => {
    const c = new JsonClient({ baseUrl: base + '/' });
    let seen: string | null = null;
    const got = await c.call<{ a: number }>('POST', '/echo', { a: 1 }, (h) => (seen = h.get('x-seen')));
    expect(got).toEqual({ a: 1 });
    expect(seen).toBe('yes');
    expect(await c.call('DELETE', '/empty')).toEqual({});
  });

  it('gives the server code, else one fallback code per kind of failure', async () => {
    const c = new JsonClient({ baseUrl: base });
    const e1 = await failure(c.call('GET', '/json-error'));
    expect([e1.status, e1.code, e1.reason]).toEqual([400, 'validation_error', 'bad']);
    const e2 = await failure(c.call('GET', '/html-error'));
    expect([e2.status, e2.code]).toEqual([502, FallbackCode.httpError]);
    const e3 = await failure(c.call('GET', '/not-json'));
    expect([e3.status, e3.code]).toEqual([200, FallbackCode.invalidResponse]);

    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const e4 = await failure(new JsonClient({ baseUrl: `http://127.0.0.1:${port}` }).call('GET', '/'));
    expect([e4.status, e4.code]).toEqual([0, FallbackCode.unreachable]);
  });

  it('the command-line client reports the same codes', async () => {
    const cli = new FgaHttpClient({ apiUrl: base });
    const e = await failure(cli.getStore('x'));
    expect([e.status, e.code]).toEqual([404, FallbackCode.httpError]);
  });
});

describe('JsonClient streams', () => {
  it('yields each result line, also across chunk boundaries', async () => {
    const c = new JsonClient({ baseUrl: base });
    expect(await collect(c.stream('GET', '/stream-ok'))).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('an error line throws its catalog code (ErrorInfo reason), else stream_error', async () => {
    const c = new JsonClient({ baseUrl: base });
    const seen: Record<string, unknown>[] = [];
    const e = await failure(
      (async () => {
        for await (const r of c.stream('GET', '/stream-reason')) seen.push(r);
      })(),
    );
    expect(seen).toEqual([{ n: 1 }]);
    expect(e.code).toBe('unavailable');
    expect((await failure(collect(c.stream('GET', '/stream-bare-error')))).code).toBe(FallbackCode.streamError);
  });

  it('a refused stream throws the error reply code', async () => {
    const e = await failure(collect(new JsonClient({ baseUrl: base }).stream('POST', '/stream-refused', {})));
    expect([e.status, e.code]).toEqual([404, 'store_id_not_found']);
  });
});

describe('Credentials', () => {
  const client = (secret: string, now: () => number): Credentials =>
    new Credentials(
      { kind: 'client', clientId: 'c', clientSecret: secret, tokenUrl: `${base}/oauth/token` },
      undefined,
      now,
    );

  it('a static token is sent as a bearer token', async () => {
    const c = new JsonClient({ baseUrl: base, credentials: new Credentials({ kind: 'token', token: 'k' }) });
    await c.call('POST', '/echo', {});
    expect(lastAuthorization).toBe('Bearer k');
  });

  it('concurrent calls share one token request; the token is renewed 30 s before it expires', async () => {
    let now = 1_000_000;
    const creds = client('s', () => now);
    const c = new JsonClient({ baseUrl: base, credentials: creds });
    const before = tokenRequests;
    await Promise.all([c.call('POST', '/echo', {}), c.call('POST', '/echo', {}), c.call('POST', '/echo', {})]);
    expect(tokenRequests - before).toBe(1);
    const first = lastAuthorization;
    now += 29_000; // expires_in 60: still good until 30 s before
    await c.call('POST', '/echo', {});
    expect(tokenRequests - before).toBe(1);
    expect(lastAuthorization).toBe(first);
    now += 2_000;
    await c.call('POST', '/echo', {});
    expect(tokenRequests - before).toBe(2);
    expect(lastAuthorization).not.toBe(first);
  });

  it('a refused client gives the OAuth2 error code, else token_request_failed', async () => {
    const refused = await failure(client('wrong', Date.now).authorization());
    expect([refused.status, refused.code]).toEqual([401, 'invalid_client']);
    const silent = await failure(client('silent', Date.now).authorization());
    expect(silent.code).toBe(FallbackCode.tokenRequestFailed);
  });

  it('an issuer host becomes its https token endpoint', () => {
    expect(tokenUrlOf('auth.fga.dev')).toBe('https://auth.fga.dev/oauth/token');
    expect(tokenUrlOf('http://127.0.0.1:9/token')).toBe('http://127.0.0.1:9/token');
  });
});
