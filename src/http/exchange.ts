// One HTTP request/response on uWS: abort tracking (→ AbortSignal), the docs/reference/decisions.md D11 headers, corked
// replies in JSON or msgpack, and the chunked NDJSON stream of StreamedListObjects.
// Contract: after `aborted` is set nothing touches `res` again; every reply is written in one cork,
// but a whole body larger than the cork buffer holds, which follows its headers' cork (./whole-reply.ts).

import { nextTurn } from '../domain/turn.js';
import { performance } from 'node:perf_hooks';
import type { Principal } from '../api/auth/principal.js';
import { retryAfterOf } from '../api/auth/ratelimit.js';
import type { AuthService } from '../api/auth/service.js';
import type { DecisionLog } from '../api/decisions/log.js';
import type { CallContext, Reply } from '../api/endpoint.js';
import type { LineSource } from '../api/listing-lines.js';
import type { TokenCodec } from '../api/tokens.js';
import type { Latch } from '../engine/contract.js';
import type { Route } from '../cluster/node.js';
import { AppError, toAppError } from '../errors.js';
import { MSGPACK_TYPE, encodeMsgpack } from '../domain/msgpack.js';
import { logFailure } from './log.js';
import { logger, logRequest } from '../log.js';
import type { CorsPolicy } from './cors.js';
import type { LiveStreams } from './live-streams.js';
import type { Metrics } from './metrics.js';
import type { Span, Tracing } from './tracing.js';
import type { HttpResponse } from './uws.js';
import { statusLine } from './status-line.js';
import { wireBytes } from './wire-strings.js';
import { endLarge, largeBodySize } from './whole-reply.js';
import { assignRequestId, idLines, jsonHeadBlock, requestIdText, type RequestIdParts } from './reply-head.js';

// Reply header names as ArrayBuffers: uWS converts a string argument to UTF-8 in a fresh buffer
// on every call (./wire-strings.ts).
const CONTENT_TYPE = wireBytes('Content-Type');
const X_REQUEST_ID = wireBytes('X-Request-Id');
const JSON_TYPE = 'application/json';
const SERVED_BY = wireBytes('Latch-Served-By');

/** gRPC code carried in stream error chunks: by HTTP status (§4.18), and RESOURCE_EXHAUSTED (8) by name. */
function grpcCode(e: AppError): number {
  if (e.code === 'resource_exhausted') return 8;
  const status = e.status;
  if (status === 400) return 3;
  if (status === 401 || status === 403) return 16;
  if (status === 404) return 5;
  if (status === 409) return 10;
  if (status === 422 || status === 429) return 8;
  if (status === 503) return 14;
  return 13;
}

export interface ServerShared {
  readonly latch: Latch;
  readonly tokens: TokenCodec;
  readonly ready: () => boolean;
  /** Requests started and not yet finished (body read, handler run, reply sent or aborted). */
  inFlight: number;
  /** Authentication, rate limits and the store-log recorder (absent: embedded use). */
  readonly auth?: AuthService | undefined;
  /** The decision log (absent: not served). */
  readonly decisions?: DecisionLog | undefined;
  /** Request counts and latency per (endpoint, status), served at /metrics (absent: off). */
  readonly metrics?: Metrics | undefined;
  /** Set at shutdown: new requests on kept-alive connections get `unavailable` and a closed connection. */
  draining?: boolean;
  /** Live streams (Watch, ReadExpansions) running now, with their caps and lifetime (./live-streams.ts). */
  readonly live: LiveStreams;
  /** A live stream's consumer that reads nothing for this long is told why and disconnected (ms). */
  readonly liveStallMs: number;
  /** `--authzen-base-url` (see CallContext). */
  readonly authzenBaseUrl?: string | undefined;
  /** OpenTelemetry spans (absent unless an SDK was installed before the server started). */
  readonly tracing?: Tracing | undefined;
  /** Which browser origins may call (./cors.ts). */
  readonly cors: CorsPolicy;
  /**
   * Under placement: this node, named in `Latch-Served-By` on every reply it answers, and where a
   * store's requests go (./forward.ts; the msgpack channel refuses those it does not serve).
   */
  readonly servedBy?: { readonly nodeId: string; route(storeId: string, forwarded: boolean): Route } | undefined;
  /** `--trusted-proxy` addresses whose X-Forwarded-For names the caller (./peer.ts). */
  readonly trusted?: ReadonlySet<string> | undefined;
}

/**
 * A stream's lines are written in chunks of about this many characters (`Exchange.#stream`; a
 * chunk ends with the line that fills it), each chunk in slices of at most this many characters, a
 * cork each: at most 12 KB of UTF-8 per write, under STREAM_SLICE_BYTES (see there).
 */
const STREAM_CHUNK_CHARS = 4 * 1024;

/** A rendered stream's buffer (`Exchange.#lines`): about 650 listing lines. */
const STREAM_BUFFER_BYTES = 64 * 1024;
/**
 * The most bytes of one write of a stream, each in a cork of its own. uWS (v20.30, and upstream's
 * `AsyncSocket::uncork` as of this writing) copies a write into its 16 KB cork buffer when it
 * fits; a write that does not fit makes it flush the cork buffer first, and when the socket takes
 * only part of that flush (a consumer reading slower than the stream is written) uWS returns
 * without keeping the write: its chunk header went out with the flush, its bytes never do, and
 * the chunked framing breaks (test/http/uws-cork.test.ts; bench/http/uws-cork.ts reproduces the
 * loss). A write that fits is never lost: it goes into the cork buffer, or into uWS's own
 * backpressure buffer when the socket is full, copied before `write` returns (so a buffer may be
 * reused at once, and writing again before `onWritable` appends). So one write holds at most the
 * 16 KB less room for its chunk header (8 bytes) and, on the first write, uWS's
 * `Transfer-Encoding` header; the first slice of a stream waits a turn, so that the cork it opens
 * is empty (not the route's, which holds the reply's headers).
 */
export const STREAM_SLICE_BYTES = 16 * 1024 - 256;

export class Exchange implements CallContext, RequestIdParts {
  aborted = false;
  /** Set when the handler starts; from then on the handler's `finally` finishes the request. */
  started = false;
  /** Forwarded to another node (placement): that node answers, and records the call. */
  forwarded = false;
  modelId: string | undefined = undefined;
  /** A Write's resulting store revision: sent as `Latch-Revision`. */
  revision: number | undefined = undefined;
  /** Set once admitted (auth gate), and the parsed input: both feed the store log. */
  principal: Principal | undefined = undefined;
  input: unknown = undefined;
  /** The request's Authorization header (live streams verify it again while they run). */
  credential: string | undefined = undefined;
  /** The request's SERVER span when tracing is on. */
  span: Span | undefined = undefined;
  #status = 0;
  #errorCode = '';
  /** The caller's address, read when a call fails before authentication (store-log tally). */
  #source = '';
  #retryAfter: number | undefined;
  /** latch's own request id, in parts (reply-head.ts): its text is made only when asked for. */
  idHigh = '';
  idLow = 0;
  /** The client's request id (`useRequestId`) on endpoints that echo it. */
  #clientId: string | undefined;
  readonly #start = performance.now();
  /**
   * When a whole reply's headers were written (0: not yet, or a stream still running): the
   * duration header and the finished request's latency share one clock read.
   */
  #end = 0;
  #controller: AbortController | undefined;
  #finished = false;
  /** Pending stream writer waiting for onWritable; woken by an abort too. */
  #wake: (() => void) | undefined;

  constructor(
    readonly res: HttpResponse,
    readonly shared: ServerShared,
    readonly route: string,
    /** The store id path parameter, echoed in `Openfga-Store-Id`. */
    readonly storeId: string | undefined,
    /** Reply in msgpack (the request's Accept named it). */
    readonly msgpack: boolean,
    /** The request's Origin header when the CORS policy echoes it, else '' (./cors.ts). */
    readonly origin = '',
  ) {
    shared.inFlight++;
    assignRequestId(this);
    res.onAborted(() => {
      this.aborted = true;
      this.#controller?.abort();
      this.#wake?.();
      // Gone before the handler started (mid-body): nothing else will finish this request.
      if (!this.started) this.finish();
    });
  }

  get latch(): Latch {
    return this.shared.latch;
  }

  get authzenBaseUrl(): string | undefined {
    return this.shared.authzenBaseUrl;
  }

  get decisions(): DecisionLog | undefined {
    return this.shared.decisions;
  }

  /**
   * Adopts the client's request id when it is 1–128 visible ASCII characters (so it can neither
   * split a header nor flood the log); anything else keeps latch's own id.
   */
  useRequestId(id: string): void {
    if (id.length > 0 && id.length <= 128 && /^[\x21-\x7e]+$/.test(id)) this.#clientId = id;
  }

  /** latch's own id, or the client's (`useRequestId`) on endpoints that echo it. */
  get requestId(): string {
    return this.#clientId ?? requestIdText(this);
  }

  get tokens(): TokenCodec {
    return this.shared.tokens;
  }

  get ready(): () => boolean {
    return this.shared.ready;
  }

  /** Created on first use: most requests never look at it. */
  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    if (this.aborted) this.#controller.abort();
    return this.#controller.signal;
  }

  /** Marks the request finished exactly once (the in-flight counter is exact). */
  /** The answer of the node this request was forwarded to was passed back with `status` (./forward.ts). */
  passedBack(status: number): void {
    this.forwarded = true;
    this.#status = status;
    this.#end = performance.now();
  }

  finish(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.shared.inFlight--;
    const status = this.#status || 499;
    if (this.span) this.shared.tracing?.endRequest(this.span, status, this.#status ? this.#errorCode : 'cancelled');
    // Store logs are searched per store: calls without one (ListStores, unknown routes) are not kept.
    // A forwarded request is recorded in the store log by the node that answered it.
    const storeLogs =
      this.storeId && !this.forwarded && this.shared.auth?.logs.enabled ? this.shared.auth.logs : undefined;
    if (!this.shared.metrics && !logger.requests && !storeLogs) return;
    const ms = (this.#end || performance.now()) - this.#start;
    this.shared.metrics?.observe(this.route, status, ms);
    if (logger.requests) logRequest(this.requestId, this.route, this.storeId, status, this.#errorCode, ms);
    if (storeLogs && this.principal === undefined && this.shared.auth?.config.mode !== 'none') {
      // Authentication failed (or never finished): counted, not recorded one by one.
      storeLogs.recordFailure({
        time: Date.now(),
        operation: this.route,
        storeId: this.storeId as string,
        status,
        errorCode: this.#status ? this.#errorCode : 'cancelled',
        source: this.#source,
        requestId: this.requestId,
      });
      return;
    }
    storeLogs?.recordCall({
      time: Date.now(),
      clientId: this.principal?.clientId ?? '',
      operation: this.route,
      storeId: this.storeId,
      modelId: this.modelId,
      input: this.input,
      status,
      errorCode: this.#status ? this.#errorCode : 'cancelled',
      latencyMs: ms,
      requestId: this.requestId,
    });
  }

  /** Writes the status and headers; returns the clock read the duration header was taken from. */
  #headers(status: number, contentType: string | undefined, extra?: Readonly<Record<string, string>>): number {
    const res = this.res;
    this.#status = status;
    // uWS answers "200 OK" when no status is written (one binding crossing less on the hot path),
    // and writes it implicitly before the first header: the status goes first.
    if (status !== 200) res.writeStatus(statusLine(status));
    if (extra !== undefined) for (const name in extra) res.writeHeader(name, extra[name] as string);
    if (this.#retryAfter !== undefined) res.writeHeader('Retry-After', String(this.#retryAfter));
    if (this.shared.servedBy !== undefined) res.writeHeader(SERVED_BY, this.shared.servedBy.nodeId);
    if (this.span) res.writeHeader('traceparent', this.shared.tracing?.traceparent(this.span) ?? '');
    // Content-Type and the D11 headers in one call: uWS writes `name: value\r\n` verbatim, and each
    // binding crossing costs ≈ 0.5 µs (five of them were the largest self-time item of a Check
    // under wrk in the CPU profile). Only values that cannot hold CR/LF are joined: our request id,
    // the duration, a model id the engine resolved (a ULID) and the store id path segment (uWS's
    // parser never lets CR/LF into a path; checked anyway).
    const now = performance.now();
    const ms = Math.round(now - this.#start);
    const block =
      contentType === JSON_TYPE && this.revision === undefined && this.#clientId === undefined
        ? jsonHeadBlock(this, this.storeId, this.modelId, ms)
        : undefined;
    if (block !== undefined) res.writeHeader(CONTENT_TYPE, block);
    else this.#headerText(contentType, ms);
    if (this.origin) {
      res.writeHeader('Access-Control-Allow-Origin', this.origin);
      res.writeHeader('Access-Control-Allow-Credentials', 'true');
      res.writeHeader('Vary', 'Origin');
      if (this.revision !== undefined) res.writeHeader('Access-Control-Expose-Headers', 'Latch-Revision');
    }
    return now;
  }

  /** The D11 headers as text (after `contentType` when there is one): replies the JSON head block does not serve. */
  #headerText(contentType: string | undefined, ms: number): void {
    let lines = `${this.requestId}\r\nfga-query-duration-ms: ${ms}${idLines(this.storeId, this.modelId)}`;
    if (this.revision !== undefined) lines += `\r\nLatch-Revision: ${this.revision}`;
    if (contentType) this.res.writeHeader(CONTENT_TYPE, `${contentType}\r\nX-Request-Id: ${lines}`);
    else this.res.writeHeader(X_REQUEST_ID, lines);
  }

  /**
   * Writes the whole reply. `corked`: the caller runs inside a uWS callback (the body's onData),
   * where uWS has corked the socket already, so no cork call (and closure) is needed.
   */
  send(reply: Reply, closeConnection = false, corked = false): void {
    if (this.aborted) return;
    const { status } = reply;
    let payload: string | Uint8Array | ArrayBuffer | undefined;
    // A reply with its JSON made needs no `body` here (it may build it only when asked: delete-tuples).
    if (reply.json !== undefined && !this.msgpack) payload = reply.json;
    else if (reply.body !== undefined) payload = this.msgpack ? encodeMsgpack(reply.body) : JSON.stringify(reply.body);
    const extra = reply.headers;
    // A body that may not fit uWS's cork buffer beside the headers: its own cork (./whole-reply.ts).
    const size = payload === undefined || closeConnection ? undefined : largeBodySize(payload);
    if (size !== undefined && payload !== undefined) {
      const type = this.msgpack ? MSGPACK_TYPE : JSON_TYPE;
      return endLarge(this.res, () => void (this.#end = this.#headers(status, type, extra)), payload, size);
    }
    if (corked) this.#reply(status, payload, closeConnection, extra);
    else this.res.cork(() => this.#reply(status, payload, closeConnection, extra));
  }

  #reply(
    status: number,
    payload: string | Uint8Array | ArrayBuffer | undefined,
    closeConnection: boolean,
    extra?: Readonly<Record<string, string>>,
  ): void {
    this.#end = this.#headers(
      status,
      payload === undefined ? undefined : this.msgpack ? MSGPACK_TYPE : JSON_TYPE,
      extra,
    );
    if (payload === undefined) this.res.endWithoutBody(0, closeConnection);
    else this.res.end(payload, closeConnection);
  }

  /** Replies with an error body; unknown failures are logged and sent as internal_error. */
  fail(err: unknown, closeConnection = false): void {
    const e = toAppError(err);
    this.#errorCode = e.code;
    this.#noteSource();
    this.#retryAfter = retryAfterOf(err);
    if (e.status >= 500) logFailure(this.requestId, this.route, e);
    this.send({ status: e.status, body: e.toBody() }, closeConnection);
  }

  /**
   * Streams `{"result":item}` lines; the first item (or error) decides the status. A live stream
   * is counted against the caps of ./live-streams.ts (429 stream_limit_exceeded past them) and
   * also ends with an error line naming why: shutdown (`unavailable`), its lifetime
   * (`deadline_exceeded`), its credential revoked or expired (that credential's 401/403 code), or
   * a consumer that takes nothing for `liveStallMs` (`resource_exhausted`).
   */
  async stream(
    items: AsyncIterable<unknown>,
    live = false,
    batched = false,
    lines?: AsyncIterable<LineSource>,
  ): Promise<void> {
    if (lines !== undefined) return this.#lines(lines, this.shared.liveStallMs);
    if (!live) return this.#stream(items, batched, Infinity, () => undefined);
    let reason: AppError | undefined;
    let close: () => void;
    try {
      close = this.shared.live.open(this.principal?.clientId ?? '', this.credential, (why) => {
        reason ??= why;
        this.#controller?.abort();
      });
    } catch (err) {
      await (items as AsyncGenerator<unknown>).return?.(undefined);
      return this.streamFail(err, true);
    }
    const endLine = (): string | undefined => {
      if (reason === undefined) return undefined;
      this.#errorCode = reason.code;
      return this.#errorLine(reason, true);
    };
    try {
      await this.#stream(items, batched, this.shared.liveStallMs, endLine);
    } finally {
      close();
    }
  }

  /**
   * Opens a stream: its first item, or the error in its place, decides the status. Undefined when
   * nothing more is to be written (the error answered, or the client gone: the source closed).
   */
  async #open<T>(items: AsyncIterable<T>): Promise<{ it: AsyncIterator<T>; next: IteratorResult<T> } | undefined> {
    const it = items[Symbol.asyncIterator]();
    let next: IteratorResult<T>;
    try {
      next = await it.next();
    } catch (err) {
      this.streamFail(err);
      return undefined;
    }
    if (this.aborted) {
      await it.return?.();
      return undefined;
    }
    this.#streamLine(200, undefined, false);
    return { it, next };
  }

  /**
   * `lastLine`: asked when the items end, an error line that ends the stream (a live stream stopped
   * at shutdown). Lines are gathered into chunks of `STREAM_CHUNK_CHARS`: one socket write per
   * chunk, not per line (a line per write cost a system call each, ≈ 7 µs for a 90-byte line). A
   * full chunk is written and the loop yields to the event loop before it reads on, so one stream
   * that the kernel keeps accepting cannot hold other requests up; a partial chunk is written as
   * soon as the loop yields (the items are waiting, or the turn ends). A refused write waits for the
   * socket to drain, at most `maxStallMs`. `batched`: each value is an array of items' JSON texts
   * (StreamReply), taken a line at a time under the same bounds.
   */
  async #stream(
    items: AsyncIterable<unknown>,
    batched: boolean,
    maxStallMs: number,
    lastLine: () => string | undefined,
  ): Promise<void> {
    const opened = await this.#open(items);
    if (opened === undefined) return;
    const { it } = opened;
    let { next } = opened;
    let chunk = '';
    /** Set when a write was refused: true once the socket drained, false when it stalled. */
    let waiting: Promise<boolean> | undefined;
    let deferred: ReturnType<typeof setImmediate> | undefined;
    const send = (): void => {
      if (chunk === '') return;
      const ok = this.#write(chunk);
      chunk = '';
      if (!ok) waiting = this.#writable(maxStallMs);
    };
    const later = (): void => {
      deferred = undefined;
      if (!this.aborted && waiting === undefined) send();
    };
    try {
      while (!next.done && !this.aborted) {
        const batch = batched ? (next.value as readonly string[]) : undefined;
        const count = batch === undefined ? 1 : batch.length;
        for (let i = 0; i < count && !this.aborted; i++) {
          chunk += `{"result":${batch === undefined ? JSON.stringify(next.value) : batch[i]}}\n`;
          if (waiting === undefined && chunk.length < STREAM_CHUNK_CHARS) {
            deferred ??= setImmediate(later);
            continue;
          }
          if (deferred !== undefined) clearImmediate(deferred);
          deferred = undefined;
          if (waiting === undefined) send();
          if (waiting !== undefined) {
            const drained = await waiting;
            waiting = undefined;
            if (!drained) return await this.#stalled(it, maxStallMs);
            if (chunk !== '') deferred = setImmediate(later);
          } else await nextTurn();
        }
        if (this.aborted) break;
        next = await it.next();
      }
      if (deferred !== undefined) clearImmediate(deferred);
      if (this.aborted) return void (await it.return?.());
      this.#endWith(chunk + (lastLine() ?? ''));
    } catch (err) {
      if (deferred !== undefined) clearImmediate(deferred);
      const e = toAppError(err);
      if (e.status >= 500) logFailure(this.requestId, this.route, e);
      if (!this.aborted) this.#endWith(chunk + this.#errorLine(e));
    }
  }

  /**
   * Writes the lines of `sources` (already NDJSON) through one buffer of `STREAM_BUFFER_BYTES`
   * (larger only for a line that needs it), reused for the whole stream: each source renders into
   * it, a full buffer and the end of each source go out in slices (`#writeBytes`), and the loop
   * yields to the event loop after each write, so other requests run between. The first source (or
   * error) decides the status. A refused write waits for the socket to drain; a consumer that
   * takes nothing for `maxStallMs` is cut off: the stream ends with a `resource_exhausted` line
   * (a resumable one resumes from the last token it read), holding at most one buffer more than
   * the socket's. An error mid-stream ends it with an error line after the lines rendered.
   */
  async #lines(sources: AsyncIterable<LineSource>, maxStallMs: number): Promise<void> {
    const opened = await this.#open(sources);
    if (opened === undefined) return;
    const { it } = opened;
    let { next } = opened;
    // Out of the route's cork (which may still hold the headers) before the first slice: see STREAM_SLICE_BYTES.
    await nextTurn();
    if (this.aborted) return void (await it.return?.());
    let buf = Buffer.allocUnsafe(STREAM_BUFFER_BYTES);
    let at = 0;
    /** Writes `buf[0, at)`; false when the consumer stalled (the stream was ended). */
    const flush = async (): Promise<boolean> => {
      const end = at;
      at = 0;
      if (end === 0) return true;
      if (this.#writeBytes(buf, end)) await nextTurn();
      else if (!(await this.#writable(maxStallMs))) {
        await this.#stalled(it, maxStallMs);
        return false;
      }
      return true;
    };
    try {
      while (!next.done) {
        const source = next.value;
        for (;;) {
          if (this.aborted) return void (await it.return?.());
          if (buf.length - at < source.maxLineBytes) {
            if (!(await flush())) return;
            if (buf.length < 2 * source.maxLineBytes) buf = Buffer.allocUnsafe(2 * source.maxLineBytes);
            continue;
          }
          const end = source.render(buf, at);
          if (end === at) break;
          at = end;
        }
        if (!(await flush())) return;
        if (this.aborted) return void (await it.return?.());
        next = await it.next();
      }
      if (!this.aborted) this.res.cork(() => this.res.end());
    } catch (err) {
      const e = toAppError(err);
      if (e.status >= 500) logFailure(this.requestId, this.route, e);
      if (this.aborted) return;
      if (at > 0) this.#writeBytes(buf, at);
      this.res.cork(() => this.res.end(this.#errorLine(e)));
    }
  }

  /**
   * Writes `buf[0, end)` (whole NDJSON lines) in slices of at most `STREAM_SLICE_BYTES`, each in a
   * cork of its own (several in one cork lose a write when the socket is full: see there); false
   * when a write was refused (the later slices are still written: uWS keeps them).
   * Each slice ends on a line end (only a line longer than a slice is cut), so each HTTP chunk, and
   * mostly each read of the client, holds whole lines: a client parses a read as it is instead of
   * joining its tail to the next read's text first.
   */
  #writeBytes(buf: Buffer, end: number): boolean {
    let ok = true;
    for (let at = 0; at < end;) {
      let to = Math.min(end, at + STREAM_SLICE_BYTES);
      if (to < end) {
        const nl = buf.lastIndexOf(0x0a, to - 1);
        if (nl >= at) to = nl + 1;
      }
      const slice = buf.subarray(at, to);
      this.res.cork(() => (ok = this.res.write(slice) && ok));
      at = to;
    }
    return ok;
  }

  /** An error before the first stream line: its HTTP status and one `{"error":…}` line (`why`: see #errorLine). */
  streamFail(err: unknown, why = false): void {
    const e = toAppError(err);
    this.#errorCode = e.code;
    this.#noteSource();
    this.#retryAfter = retryAfterOf(err);
    if (e.status >= 500) logFailure(this.requestId, this.route, e);
    this.#streamLine(e.status, this.#errorLine(e, why), true);
  }

  /** A failure before authentication: the address is read now, while `res` is still valid. */
  #noteSource(): void {
    const auth = this.shared.auth;
    if (this.principal !== undefined || this.aborted || !auth?.logs.enabled || auth.config.mode === 'none') return;
    this.#source = Buffer.from(this.res.getRemoteAddressAsText()).toString('latin1');
  }

  /**
   * `{"error":{code, message, details}}` as OpenFGA streams it. A live stream's last line (`why`)
   * also carries the catalog code as google.rpc.ErrorInfo's `reason` (docs/watch.md), so a
   * consumer can tell a revoked credential from a shutdown or the lifetime limit.
   */
  #errorLine(e: AppError, why = false): string {
    const details = why
      ? [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: e.code, domain: 'latch' }]
      : [];
    return JSON.stringify({ error: { code: grpcCode(e), message: e.message, details } }) + '\n';
  }

  #streamLine(status: number, line: string | undefined, end: boolean): void {
    if (this.aborted) return;
    this.res.cork(() => {
      const now = this.#headers(status, JSON_TYPE);
      // A stream's latency runs to its last line: only a reply that ends here is timed by its headers.
      if (end) {
        this.#end = now;
        this.res.end(line);
      } else if (line) this.res.write(line);
    });
  }

  /**
   * Writes `chunk` in slices of at most `STREAM_CHUNK_CHARS`, a cork each (see STREAM_SLICE_BYTES);
   * false when a write was refused (the rest is still written: uWS keeps it).
   */
  #write(chunk: string): boolean {
    let ok = true;
    for (let at = 0; at < chunk.length;) {
      let end = Math.min(at + STREAM_CHUNK_CHARS, chunk.length);
      // Never split a surrogate pair: each slice is encoded to UTF-8 on its own.
      const last = chunk.charCodeAt(end - 1);
      if (end < chunk.length && last >= 0xd800 && last <= 0xdbff) end--;
      const slice = chunk.slice(at, end);
      this.res.cork(() => (ok = this.res.write(slice) && ok));
      at = end;
    }
    return ok;
  }

  /** Writes `tail` (see #write) and ends the stream; the end's own cork holds only the terminator. */
  #endWith(tail: string): void {
    this.#write(tail);
    this.res.cork(() => this.res.end());
  }

  /** The consumer read nothing for `ms`: stop the stream and say why in its last line. */
  async #stalled(it: AsyncIterator<unknown> | undefined, ms: number): Promise<void> {
    await it?.return?.();
    const e = new AppError(
      'resource_exhausted',
      `the consumer read nothing for ${ms} ms; resume from its last continuation_token`,
    );
    this.#errorCode = e.code;
    // No closeConnection flag: after the headers went out, uWS would write its Connection header
    // into the body. The response ends properly; a consumer that never reads it is closed by
    // uWS's idle timeout (10 s), holding only what was already written.
    if (!this.aborted) this.res.cork(() => this.res.end(this.#errorLine(e)));
  }

  /**
   * Resolves true when uWS drained the socket or the client went away, false when it stayed full
   * for `timeoutMs`.
   */
  #writable(timeoutMs = Infinity): Promise<boolean> {
    return new Promise((resolve) => {
      if (this.aborted) return resolve(true);
      const timer = Number.isFinite(timeoutMs)
        ? setTimeout(() => {
            this.#wake = undefined;
            resolve(false);
          }, timeoutMs)
        : undefined;
      this.#wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      this.res.onWritable(() => {
        this.#wake?.();
        this.#wake = undefined;
        return true;
      });
    });
  }
}
