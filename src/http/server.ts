// The uWS application: one route per endpoint of the API table, the routing fallbacks
// (404 undefined_endpoint / unimplemented), the msgpack channel on /stream, listen and a
// graceful close (stop accepting, let in-flight requests finish, then close every socket).

import { statusLine } from './status-line.js';
import { admitted, routeGate, type Admission } from '../api/auth/gate.js';
import { clientEndpoints } from '../api/auth/clients-endpoint.js';
import { logsEndpoint } from '../api/auth/logs-endpoint.js';
import { decisionEndpoints } from '../api/decisions/endpoints.js';
import type { DecisionLog } from '../api/decisions/log.js';
import type { AuthService } from '../api/auth/service.js';
import { ENDPOINTS, paramNames } from '../api/endpoints.js';
import type { ApiRequest, Endpoint, Reply } from '../api/endpoint.js';
import { TokenCodec } from '../api/tokens.js';
import type { Latch } from '../engine/contract.js';
import { AppError } from '../errors.js';
import {
  DEFAULT_BODY_LIMIT,
  DEFAULT_DISCARD,
  decodeBody,
  dropBody,
  type BodyFormat,
  readBody,
  tooLarge,
  type DiscardBound,
} from './body.js';
import { mountAuthRoutes } from './auth-routes.js';
import { peerOf, trustedProxies } from './peer.js';
import { Channel, type ChannelOptions } from './channel.js';
import { CorsPolicy, crossOriginRefused } from './cors.js';
import { LiveStreams, type LiveStreamLimits } from './live-streams.js';
import { isMsgpackType } from '../domain/msgpack.js';
import { Exchange, type ServerShared } from './exchange.js';
import { FORWARDED_FROM, Forwarder, type PlacementEdge } from './forward.js';
import { nextRequestId } from './reply-head.js';
import {
  listenExclusive,
  listenShared,
  metricsApp,
  metricsRoute,
  boundedRender,
  type Address,
  type Listening,
} from './listen.js';
import { Metrics } from './metrics.js';
import { EXTRA_IN_FLIGHT, MetricsShare, type MetricsShareData } from './metrics-share.js';
import { defaultPlaygroundDir, loadStaticFiles, mountPlayground } from './static.js';
import { openTracing } from './tracing.js';
import { loadUws, type HttpRequest, type HttpResponse, type TemplatedApp } from './uws.js';
import { REQ, wireBytes } from './wire-strings.js';
import { logger } from '../log.js';

export interface HttpServerOptions {
  /** Largest accepted request body in bytes (default 1 MiB); larger → 400 validation_error. */
  readonly bodyLimit?: number | undefined;
  /** How much of a body past the limit is read and dropped before the 400 and the close (default 64 MiB, 10 s). */
  readonly bodyDiscard?: DiscardBound | undefined;
  /** Secret the continuation-token MAC key is derived from; omitted → random per process. */
  readonly tokenSecret?: string | undefined;
  readonly channel?: Partial<ChannelOptions> | undefined;
  /** Authentication, rate limits and store logs; omitted → every call passes (embedded use). */
  readonly auth?: AuthService | undefined;
  /** The decision log (docs/audit.md): its endpoints are served and queries record into it. */
  readonly decisions?: DecisionLog | undefined;
  /** Serve Prometheus metrics at GET /metrics (default true; unauthenticated, see docs/operations.md). */
  readonly metrics?: boolean | undefined;
  /** A Watch consumer that reads nothing for this long is told why and disconnected (default 30 s). */
  readonly watchStallMs?: number | undefined;
  /** Caps, lifetime and credential re-check of live streams (Watch, ReadExpansions; ./live-streams.ts). */
  readonly liveStreams?: { readonly [K in keyof LiveStreamLimits]?: number | undefined } | undefined;
  /** Serve /metrics on this address instead of the API port (which then has no /metrics). */
  readonly metricsAddress?: Address | undefined;
  /**
   * Browser origins allowed to call the API (`--cors-origin`; `*` for any). Unset: any origin when
   * requests are authenticated, none in auth mode `none` (./cors.ts).
   */
  readonly corsOrigins?: readonly string[] | undefined;
  /**
   * Reverse proxies (`--trusted-proxy`) whose X-Forwarded-For names the caller for the
   * failed-credential budgets (./peer.ts). Unset: the socket's peer is the caller.
   */
  readonly trustedProxies?: readonly string[] | undefined;
  /** Origin named by the AuthZEN metadata (`https://authz.example.com`); unset → `http://<Host>`. */
  readonly authzenBaseUrl?: string | undefined;
  /**
   * Serve the built playground at /playground (docs/playground.md). `dir` defaults to the
   * package's dist/playground; when it is missing, `required` fails the start, else a warning is logged.
   */
  readonly playground?: { readonly dir?: string | undefined; readonly required: boolean } | undefined;
  /**
   * OpenTelemetry spans when an SDK's tracer provider is registered before the server starts
   * (default true: a no-op without one); false turns them off even then.
   */
  readonly tracing?: boolean | undefined;
  /**
   * Stores placed across nodes (`--placement`): requests for a store this node does not serve are
   * forwarded (./forward.ts), replies carry `Latch-Served-By`, and /readyz follows `ready`.
   */
  readonly placement?: (PlacementEdge & { ready(): boolean }) | undefined;
  /**
   * The API port is shared by this process's HTTP threads (`--http-threads`, a port `reservePort`
   * chose): `'bind'` binds it with SO_REUSEPORT, `'none'` leaves it to the other threads (this app
   * then serves only the metrics address, if any). Unset: an exclusive bind.
   */
  readonly sharedPort?: 'bind' | 'none' | undefined;
  /**
   * `--http-threads`: the HTTP threads this process runs beside this (the main thread's) server;
   * its metrics share gets a segment for each (`LatchHttpServer.metricsShare`).
   */
  readonly metricsThreads?: number | undefined;
  /**
   * This server is HTTP thread `thread` of a process (`--http-threads`): its requests are counted
   * in the main thread's `share`, and every thread's are served. `route`: /metrics on the API
   * port (false when the main thread serves it on `--metrics-addr`).
   */
  readonly threadMetrics?:
    { readonly share: MetricsShareData; readonly thread: number; readonly route: boolean } | undefined;
}

export interface LatchHttpServer {
  /** Starts listening; resolves with the bound port (port 0 → a free one), and the metrics port when it has its own address. */
  listen(host: string, port: number): Promise<number>;
  /** The bound port of the metrics address (`metricsAddress`), once listening. */
  metricsPort(): number | undefined;
  /** Stop accepting, wait up to `graceMs` for in-flight requests, then close every connection. */
  close(graceMs?: number): Promise<void>;
  /** Requests being processed now on this server (HTTP requests plus channel requests). */
  inFlight(): number;
  /** The share HTTP threads count their requests in (`metricsThreads`), undefined without metrics. */
  readonly metricsShare: MetricsShareData | undefined;
  /** Whether the playground's files are served at /playground/. */
  readonly playground: boolean;
}

const NO_QUERY = (): undefined => undefined;

function queryReader(raw: string): (name: string) => string | undefined {
  if (raw === '') return NO_QUERY;
  let parsed: URLSearchParams | undefined;
  return (name) => (parsed ??= new URLSearchParams(raw)).get(name) ?? undefined;
}

/**
 * An endpoint's members read per request, in one shape for every route. The endpoint table's
 * literals differ in their optional fields, so the request code shared by all routes saw many
 * shapes at each of these reads (megamorphic property loads); a class gives them one.
 */
class Route {
  readonly name: string;
  readonly streaming: boolean;
  readonly minRevision: boolean;
  readonly echoRequestId: boolean;
  readonly parse: (req: ApiRequest) => unknown;
  readonly handle: (input: unknown, ctx: Exchange) => ReturnType<Endpoint['handle']>;
  readonly handleSync: ((input: unknown, ctx: Exchange) => Reply | undefined) | undefined;

  constructor(e: Endpoint) {
    this.name = e.name;
    this.streaming = e.streaming === true && e.plainErrors !== true;
    this.minRevision = e.minRevision === true;
    this.echoRequestId = e.echoRequestId === true;
    this.parse = e.parse.bind(e);
    this.handle = e.handle.bind(e);
    this.handleSync = e.handleSync?.bind(e);
  }
}

/**
 * docs/reference/decisions.md D1: the credential is decided before the body is looked at (`bodyError` included). An endpoint
 * with `handleSync` (Check) whose caller is already admitted is answered right here, without a
 * promise, when the service can answer at once; everything else continues in `runAsync`.
 */
function run(x: Exchange, e: Route, req: ApiRequest, gate: Admission, bodyError?: unknown): void {
  // A traced request takes the async path: its operation span then wraps exactly one handler.
  if (e.handleSync === undefined || gate.principal === undefined || bodyError !== undefined || x.span)
    return void runAsync(x, e, req, gate, bodyError);
  x.started = true;
  x.principal = gate.principal;
  let input: unknown;
  let reply: Reply | undefined;
  try {
    input = e.parse(req);
    x.input = input;
    reply = e.handleSync(input, x);
  } catch (err) {
    if (e.streaming) x.streamFail(err);
    else x.fail(err);
    return x.finish();
  }
  if (reply === undefined) return void runAsync(x, e, req, gate, undefined, input);
  x.send(reply, false, true); // still inside uWS's onData: the socket is corked
  x.finish();
}

async function runAsync(
  x: Exchange,
  e: Route,
  req: ApiRequest,
  gate: Admission,
  bodyError?: unknown,
  parsed?: unknown,
): Promise<void> {
  x.started = true;
  try {
    const p = admitted(gate);
    x.principal = p instanceof Promise ? await p : p;
    if (bodyError !== undefined) throw bodyError;
    const input = parsed ?? e.parse(req);
    x.input = input;
    const tracing = x.shared.tracing;
    const reply = tracing
      ? await tracing.operation(x.span, e.name, x.storeId, (span) =>
          e.handle(input, x).then((r) => (x.modelId && span.setAttribute('latch.model_id', x.modelId), r)),
        )
      : await e.handle(input, x);
    if ('stream' in reply) await x.stream(reply.stream, reply.live === true, reply.batched === true, reply.lines);
    else x.send(reply);
  } catch (err) {
    if (e.streaming) x.streamFail(err);
    else x.fail(err);
  } finally {
    x.finish();
  }
}

/**
 * The store id of the previous request. Traffic comes in runs on one store, and the string seen
 * before already carries its hash: every Map keyed by store id (the models, the indexes) would
 * otherwise hash each request's fresh copy again, ≈ 550 instructions for a 26-character ULID
 * (V8 also tries it as an array index, as it starts with a digit), against ≈ 60 to compare it.
 */
let lastStoreId = '';

/** `id`, or the equal string of the previous request (whose hash V8 has computed already). */
function sameStoreId(id: string): string {
  if (id === lastStoreId) return lastStoreId;
  return (lastStoreId = id);
}

/**
 * The route's path parameters read from `req`. Routes under one store (most of them) build a
 * constant-shape literal; a generic loop would give every request's object a dictionary shape.
 */
function paramReader(names: readonly string[]): (req: HttpRequest) => Record<string, string> {
  if (names.length === 1 && names[0] === 'store_id') return (req) => ({ store_id: sameStoreId(req.getParameter(0)) });
  return (req) => {
    const params: Record<string, string> = {};
    for (let i = 0; i < names.length; i++) params[names[i] as string] = req.getParameter(i);
    return params;
  };
}

/** The headers an endpoint declared, read while `req` is valid. */
function headerReader(
  names: readonly string[] | undefined,
): ((req: HttpRequest) => Record<string, string>) | undefined {
  if (names === undefined || names.length === 0) return undefined;
  const keys = names.map(wireBytes);
  return (req) => {
    const headers: Record<string, string> = {};
    for (let i = 0; i < names.length; i++) {
      const v = req.getHeader(keys[i] as ArrayBuffer);
      if (v !== '') headers[names[i] as string] = v;
    }
    return headers;
  };
}

function register(
  app: TemplatedApp,
  endpoint: Endpoint,
  shared: ServerShared,
  bodyLimit: number,
  discard: DiscardBound,
  forwarder: Forwarder | undefined,
): void {
  const e = new Route(endpoint);
  const readParams = paramReader(paramNames(endpoint.path));
  const readHeaders = headerReader(endpoint.headers);
  const hasBody = endpoint.method === 'post' || endpoint.method === 'put' || endpoint.method === 'patch';
  const method = endpoint.method === 'del' ? 'DELETE' : endpoint.method.toUpperCase();
  const route = endpoint.path.replace(/:([a-z_]+)/g, '{$1}');
  const gateOf = routeGate(shared.auth, e.name);
  const limit = Math.max(bodyLimit, endpoint.bodyLimit ?? 0);
  app[endpoint.method](endpoint.path, (res: HttpResponse, req: HttpRequest) => {
    if (shared.draining) return shuttingDown(res, shared, e.name);
    if (forwarder !== undefined && endpoint.path.startsWith('/stores/:store_id')) {
      const storeId = req.getParameter(0);
      const route = forwarder.placement.route(storeId, req.getHeader(FORWARDED_FROM) !== '');
      if (route.kind !== 'local') {
        const x = new Exchange(res, shared, e.name, storeId, req.getHeader(REQ.accept).includes('msgpack'));
        return forwarder.take(x, req, route, {
          method,
          name: e.name,
          streaming: endpoint.streaming === true,
          hasBody,
          bodyLimit: limit,
          discard,
        });
      }
    }
    // Everything read from `req` must be read now: it is invalid after this callback returns.
    const params = readParams(req);
    const minRevision = e.minRevision ? req.getHeader(REQ.latchMinRevision) : undefined;
    // Latch-At-Revision (docs/audit.md) is taken by the same endpoints as Latch-Min-Revision.
    const atRevision = e.minRevision ? req.getHeader(REQ.latchAtRevision) : undefined;
    const origin = req.getHeader(REQ.origin);
    const crossRefused = origin !== '' && !shared.cors.admits(origin, () => req.getHeader('host'));
    const x = new Exchange(
      res,
      shared,
      e.name,
      params.store_id,
      req.getHeader(REQ.accept).includes('msgpack'),
      shared.cors.echoes(origin) ? origin : '',
    );
    if (e.echoRequestId) x.useRequestId(req.getHeader(REQ.xRequestId));
    const headers = readHeaders?.(req);
    if (shared.tracing)
      x.span = shared.tracing.request(method, route, {
        traceparent: req.getHeader(REQ.traceparent),
        tracestate: req.getHeader(REQ.tracestate),
      });
    // Mode `none` never reads the credential: one header lookup less per request.
    const credential =
      shared.auth && shared.auth.config.mode !== 'none' ? req.getHeader(REQ.authorization) || undefined : undefined;
    x.credential = credential;
    const gate = crossRefused
      ? { error: crossOriginRefused(origin) }
      : gateOf(credential, params.store_id, x, peerOf(res, req, shared.trusted));
    if (!hasBody)
      return void run(
        x,
        e,
        { params, query: queryReader(req.getQuery() ?? ''), body: {}, headers, minRevision, atRevision },
        gate,
      );
    if (gate.error !== undefined) {
      // Refused before the body (D1): it is read and dropped as it comes, never buffered or decoded.
      return dropBody(res, discard, (complete) => {
        x.fail(gate.error, !complete);
        x.finish();
      });
    }
    const type = req.getHeader(REQ.contentType);
    const msgpack: BodyFormat = isMsgpackType(type)
      ? 'msgpack'
      : endpoint.ndjson === true && type.includes('ndjson')
        ? 'ndjson'
        : 'json';
    const announced = Number(req.getHeader(REQ.contentLength) || 0);
    const parts: BodyRequest = { params, headers, minRevision, atRevision };
    readBody(res, announced, limit, discard, (bytes) => {
      if (bytes === undefined) {
        // Over the limit (D9): the rest was dropped as it came, never buffered; the connection closes.
        x.fail(gate.error ?? tooLarge(limit), true);
        return x.finish();
      }
      if (gate.pending === undefined) return decodeAndRun(x, e, parts, gate, bytes, msgpack);
      // The credential is still being verified: the bytes wait (within the limit, copied out of
      // uWS's memory) and are decoded only once it admits the call; a refusal never decodes them.
      const kept = bytes instanceof Buffer ? bytes : Buffer.from(new Uint8Array(bytes));
      x.started = true; // from here the admission's outcome finishes the request
      gate.pending.then(
        () => decodeAndRun(x, e, parts, gate, kept, msgpack),
        () => void run(x, e, { ...parts, query: NO_QUERY, body: {} }, gate),
      );
    });
  });
}

/** What a body-carrying request keeps, read from uWS's request before the body arrives. */
type BodyRequest = Pick<ApiRequest, 'params' | 'headers' | 'minRevision' | 'atRevision'>;

/**
 * Decodes an admitted (or still pending) request's body and runs it; a malformed body runs with
 * its error so the credential's refusal, if any, still comes first (D1). A module function, not a
 * per-request closure: the common path allocates only the request object.
 */
function decodeAndRun(
  x: Exchange,
  e: Route,
  p: BodyRequest,
  gate: Admission,
  bytes: ArrayBuffer | Uint8Array,
  msgpack: BodyFormat,
): void {
  const { params, headers, minRevision, atRevision } = p;
  let body: unknown;
  try {
    body = decodeBody(bytes, msgpack);
  } catch (err) {
    return void run(x, e, { params, query: NO_QUERY, body: {}, headers, minRevision, atRevision }, gate, err);
  }
  run(x, e, { params, query: NO_QUERY, body, headers, minRevision, atRevision }, gate);
}

function fallback(shared: ServerShared, code: 'undefined_endpoint' | 'unimplemented', message: string) {
  return (res: HttpResponse, req: HttpRequest): void => {
    const origin = req.getHeader('origin');
    const x = new Exchange(
      res,
      shared,
      req.getUrl(),
      undefined,
      req.getHeader('accept').includes('msgpack'),
      shared.cors.echoes(origin) ? origin : '',
    );
    x.fail(new AppError(code, message));
    x.finish();
  };
}

/** During shutdown: refused before any work, and the connection is closed so the client reconnects elsewhere. */
function shuttingDown(res: HttpResponse, shared: ServerShared, route: string): void {
  const x = new Exchange(res, shared, route, undefined, false);
  const e = new AppError('unavailable', 'latch is shutting down');
  x.send({ status: e.status, body: e.toBody() }, true); // expected, so not logged as a failure
  x.finish();
}

/**
 * CORS preflight (§1.1): an admitted origin (./cors.ts) gets every method and header with
 * credentials allowed; any other gets no CORS headers, so the browser does not send the request.
 * An X-Request-Id like every reply (D11).
 */
function preflight(cors: CorsPolicy) {
  return (res: HttpResponse, req: HttpRequest): void => {
    const origin = req.getHeader('origin');
    const allowed = cors.echoes(origin);
    const headers = req.getHeader('access-control-request-headers') || '*';
    res.cork(() => {
      res.writeStatus(statusLine(204));
      if (allowed)
        res
          .writeHeader('Access-Control-Allow-Origin', origin)
          .writeHeader('Access-Control-Allow-Credentials', 'true')
          .writeHeader('Access-Control-Allow-Methods', 'GET, POST, HEAD, PATCH, DELETE, PUT')
          .writeHeader('Access-Control-Allow-Headers', headers);
      res.writeHeader('Vary', 'Origin').writeHeader('X-Request-Id', nextRequestId()).endWithoutBody(0);
    });
  };
}

/** Mounts the playground's files; a missing build fails only when the playground was asked for. */
function playground(app: TemplatedApp, o: NonNullable<HttpServerOptions['playground']>): boolean {
  let files;
  try {
    files = loadStaticFiles(o.dir ?? defaultPlaygroundDir());
  } catch (err) {
    if (o.required) throw err;
    logger.log('warn', 'playground not served', { cause: String(err) });
    return false;
  }
  mountPlayground(app, files);
  return true;
}

export function createHttpServer(latch: Latch, options: HttpServerOptions = {}): LatchHttpServer {
  const uws = loadUws();
  const app = uws.App();
  let readyFlag = false;
  latch.ready().then(
    () => void (readyFlag = true),
    (err: unknown) => logger.log('error', 'index load failed', { cause: String(err) }),
  );
  const endpoints = [
    ...ENDPOINTS,
    ...(options.auth ? [logsEndpoint(options.auth.logs)] : []),
    ...(options.auth?.clients ? clientEndpoints(options.auth.clients) : []),
    ...(options.decisions ? decisionEndpoints(options.decisions) : []),
  ];
  const joined = options.threadMetrics;
  const metrics =
    options.metrics === false
      ? undefined
      : new Metrics(
          endpoints.map((e) => e.name),
          joined ? new MetricsShare(joined.share, joined.thread) : options.metricsThreads,
        );
  // Requests in flight on this server: a word of its metrics segment when there is one (a scrape sums the threads').
  const inFlight = metrics?.share.extras ?? new Float64Array(1);
  const tracing = options.tracing === false ? undefined : openTracing(latch);
  const shared: ServerShared = {
    latch: tracing ? tracing.latch : latch,
    tokens: new TokenCodec(options.tokenSecret),
    ready: options.placement ? () => readyFlag && (options.placement as { ready(): boolean }).ready() : () => readyFlag,
    get inFlight() {
      return inFlight[EXTRA_IN_FLIGHT] as number;
    },
    set inFlight(n: number) {
      inFlight[EXTRA_IN_FLIGHT] = n;
    },
    auth: options.auth,
    decisions: options.decisions,
    metrics,
    tracing,
    live: new LiveStreams(options.liveStreams, options.auth),
    liveStallMs: options.watchStallMs ?? 30_000,
    authzenBaseUrl: options.authzenBaseUrl,
    cors: new CorsPolicy(options.corsOrigins, options.auth !== undefined && options.auth.config.mode !== 'none'),
    servedBy: options.placement,
    trusted: trustedProxies(options.trustedProxies),
  };
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const channel = new Channel(shared, options.channel);

  const discard = options.bodyDiscard ?? DEFAULT_DISCARD;
  const forwarder = options.placement && new Forwarder(options.placement);
  for (const e of endpoints) register(app, e, shared, bodyLimit, discard, forwarder);
  if (options.auth) mountAuthRoutes(app, options.auth, discard, shared.trusted);
  // Known path, other method → 404 unimplemented (method-specific routes take precedence in uWS).
  for (const path of new Set(endpoints.map((e) => e.path))) {
    app.options(path, preflight(shared.cors));
    app.any(path, fallback(shared, 'unimplemented', 'Method Not Allowed'));
  }
  channel.mount(app, '/stream');
  const render = (): string =>
    (metrics as Metrics).render(shared.latch.stats(), options.decisions?.stats) + (forwarder?.metricsText() ?? '');
  if (metrics && !options.metricsAddress && joined?.route !== false)
    app.get('/metrics', metricsRoute(boundedRender(render)));
  const side =
    metrics && options.metricsAddress ? { app: metricsApp(uws, render), at: options.metricsAddress } : undefined;
  const served = options.playground ? playground(app, options.playground) : false;
  app.any('/*', fallback(shared, 'undefined_endpoint', 'Not Found'));

  let api: Listening | undefined;
  let sideListening: Listening | undefined;
  return {
    async listen(host, port) {
      if (options.sharedPort !== 'none')
        api = options.sharedPort
          ? await listenShared(uws, app, host, port)
          : await listenExclusive(uws, app, host, port);
      if (side) {
        try {
          sideListening = await listenExclusive(uws, side.app, side.at.host, side.at.port);
        } catch (err) {
          api?.close();
          throw err;
        }
      }
      return api?.port ?? port;
    },
    metricsPort: () => sideListening?.port,
    async close(graceMs = 10_000) {
      api?.close();
      shared.draining = true;
      // Live streams end at once, telling their consumers why.
      shared.live.endAll(
        new AppError('unavailable', 'the server is shutting down; resume from the last continuation_token'),
      );
      const deadline = Date.now() + graceMs;
      while (shared.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      channel.closeAll();
      forwarder?.close();
      metrics?.close();
      sideListening?.close();
      // Present in the native binary, missing from the package's typings.
      (app as TemplatedApp & { close?: () => void }).close?.();
      (side?.app as (TemplatedApp & { close?: () => void }) | undefined)?.close?.();
    },
    inFlight: () => shared.inFlight,
    metricsShare: joined ? undefined : metrics?.share.data,
    playground: served,
  };
}
