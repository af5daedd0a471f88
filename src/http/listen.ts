// Binding a uWS app to host:port: exclusively (uWS sets SO_REUSEPORT by default, so a second latch
// on the same port would start and the kernel would split the connections between the two), with
// the system's reason when the bind fails, and the separate metrics listener (`--metrics-addr`).

import { statusLine } from './status-line.js';
import { endWhole } from './whole-reply.js';
import { createServer } from 'node:net';
import type { HttpResponse, TemplatedApp, Uws, us_listen_socket, us_socket } from './uws.js';

/** An address of the form `host:port` (`[::1]:9090` for IPv6). */
export interface Address {
  readonly host: string;
  readonly port: number;
}

export interface Listening {
  readonly port: number;
  close(): void;
}

/**
 * Binds `app` with SO_REUSEPORT, for the HTTP threads of one process (`--http-threads`): the
 * kernel spreads connections across the apps bound to the port, which `reservePort` chose.
 */
export function listenShared(uws: Uws, app: TemplatedApp, host: string, port: number): Promise<Listening> {
  return listenOn(uws, app, host, port, 0);
}

/**
 * The port the HTTP threads will share: `port` once no other process listens there (as an
 * exclusive bind would check), or for port 0 a free one. uSockets sets SO_REUSEPORT only on a bind
 * to a given port, so port 0 is resolved here first.
 */
export async function reservePort(host: string, port: number): Promise<number> {
  if (port === 0) return freePort(host);
  const code = await probe(host, port);
  if (code !== '') throw bindError(host, port, code);
  return port;
}

/** Binds `app` exclusively; resolves with the bound port (port 0 → a free one) and a closer. */
export function listenExclusive(uws: Uws, app: TemplatedApp, host: string, port: number): Promise<Listening> {
  return listenOn(
    uws,
    app,
    host,
    port,
    (uws as Uws & { LIBUS_LISTEN_EXCLUSIVE_PORT?: number }).LIBUS_LISTEN_EXCLUSIVE_PORT ?? 1,
  );
}

function listenOn(uws: Uws, app: TemplatedApp, host: string, port: number, options: number): Promise<Listening> {
  return new Promise((resolve, reject) => {
    // The binary takes (host, port, options, cb); its typings name only (port, options, cb).
    const listen = app.listen.bind(app) as unknown as (
      h: string,
      p: number,
      o: number,
      cb: (s: us_listen_socket | false) => void,
    ) => void;
    listen(host, port, options, (socket) => {
      if (!socket) return void listenFailure(host, port).then(reject);
      let open = true;
      resolve({
        port: uws.us_socket_local_port(socket as unknown as us_socket),
        close: () => {
          if (open) uws.us_listen_socket_close(socket);
          open = false;
        },
      });
    });
  });
}

/**
 * Why `host:port` cannot be bound: uWS reports only failure, so the bind is tried once more with
 * node:net for the system's reason (off the hot path: start-up only).
 */
async function listenFailure(host: string, port: number): Promise<Error> {
  return bindError(host, port, await probe(host, port));
}

function bindError(host: string, port: number, code: string): Error {
  if (code === 'EADDRINUSE')
    return new Error(
      `cannot listen on ${host}:${port}: the address is already in use (another latch or another program listens there)`,
    );
  return new Error(`cannot listen on ${host}:${port}${code ? `: ${code}` : ''}`);
}

/** A port free on `host` now (the system's choice for port 0). */
function freePort(host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const a = server.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** The system's error code of an exclusive bind of `host:port` ('' when it binds). */
function probe(host: string, port: number): Promise<string> {
  return new Promise<string>((resolve) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve('')));
  });
}

/** GET /metrics: the Prometheus text exposition, `render` read now. */
export function metricsRoute(render: () => string) {
  return (res: HttpResponse): void => {
    const body = render();
    const head = (): void =>
      void res.writeStatus(statusLine(200)).writeHeader('Content-Type', 'text/plain; version=0.0.4; charset=utf-8');
    endWhole(res, head, body);
  };
}

/**
 * `render` for the API port, where anyone who reaches the port may ask for `/metrics` (an
 * unauthenticated flood rendering on every request took Check's p50 from 2.6 to 54 ms). Fresh
 * renders come from a bucket (`burst`, refilled at `perSecond`); past it the last text is served
 * again, so a flood costs one render per 1/`perSecond` s and never locks a scraper out, while a
 * scraper asking every few seconds always sees fresh figures. `--metrics-addr` renders every
 * scrape, on an address the operator keeps private.
 */
export function boundedRender(
  render: () => string,
  { burst = 10, perSecond = 2 } = {},
  now: () => number = Date.now,
): () => string {
  let body = '';
  let tokens = burst;
  let last = now();
  return () => {
    const t = now();
    tokens = Math.min(burst, tokens + ((t - last) / 1000) * perSecond);
    last = t;
    if (tokens >= 1 || body === '') {
      tokens -= 1;
      body = render();
    }
    return body;
  };
}

/** A second app serving only GET /metrics (everything else 404), for `--metrics-addr`. */
export function metricsApp(uws: Uws, render: () => string): TemplatedApp {
  const app = uws.App();
  app.get('/metrics', metricsRoute(render));
  app.any('/*', (res) => {
    res.cork(() =>
      res
        .writeStatus(statusLine(404))
        .writeHeader('Content-Type', 'text/plain; charset=utf-8')
        .end('Not Found: this address serves GET /metrics only\n'),
    );
  });
  return app;
}
