// The msgpack batch channel: a WebSocket on /stream carrying binary frames, each a msgpack array
// of requests `{id, op, store_id, body, min_revision?}` answered by frames of `{id, status, body}`
// (a write's also `revision`) / `{id, status, error:{code, message}}` (any order). Requests go
// through the same endpoint table and parsers as JSON; the checks of one frame, parsed by the
// Check endpoint's parser, go to the service as BatchCheck calls (one per store/model/consistency
// group, not capped at the HTTP API's 50), which answers each with Check's own result-cache decision.
// Backpressure: a connection stops dispatching while too many of its requests are in flight or
// too many answer bytes are unsent; frames received meanwhile queue up to a bound, beyond which
// the connection is dropped. Dispatch resumes on drain. See docs/msgpack.md.

import type { ChannelLog } from '../api/auth/channel-log.js';
import { authenticateUpgrade, refuseUpgrade } from './channel-upgrade.js';
import { peerOf } from './peer.js';
import { crossOriginRefused } from './cors.js';
import { admit } from '../api/auth/gate.js';
import type { CallContext } from '../api/endpoint.js';
import { ENDPOINTS_BY_OP } from '../api/endpoints.js';
import { ChannelDictionary, checkIdsOut, parseCheckIds } from '../api/bulk.js';
import { isObj } from '../api/validate.js';
import type { CheckInput } from '../engine/contract.js';
import { AppError } from '../errors.js';
import { RECORDS_PROTOCOL, decodeMsgpack, encodeMsgpack, encodeMsgpackRecords } from '../domain/msgpack.js';
import type { ServerShared } from './exchange.js';
import type { TemplatedApp, WebSocket } from './uws.js';
import { MAX_GROUP, runCheckGroup, type CheckGroup } from './channel-checks.js';
import { pumpLive, type LiveSink, type StopReason } from './channel-watch.js';
import { errorAnswer, type Answer, type RequestId } from './channel-answer.js';
import { logger } from '../log.js';

export interface ChannelOptions {
  /** Largest frame accepted (bytes); a larger one closes the connection (uWS rule). */
  readonly maxFrameBytes: number;
  /** Requests of one connection dispatched and not yet answered before dispatch pauses. */
  readonly maxInFlight: number;
  /** Unsent answer bytes of one connection before dispatch pauses. */
  readonly maxBuffered: number;
  /** Bytes of frames queued while paused before the connection is dropped. */
  readonly maxQueuedBytes: number;
}

const DEFAULT_CHANNEL_OPTIONS: ChannelOptions = {
  maxFrameBytes: 16 * 1024 * 1024,
  maxInFlight: 16_384,
  maxBuffered: 4 * 1024 * 1024,
  maxQueuedBytes: 64 * 1024 * 1024,
};

/** Per-connection state (uWS user data). */
class Connection {
  ws: WebSocket<Connection> | undefined;
  /** The client negotiated RECORDS_PROTOCOL: answers are encoded with msgpackr records. */
  records = false;
  /** The upgrade request's Authorization header: every request of the connection is admitted with it. */
  authorization: string | undefined = undefined;
  /** The connection's store-log recorder (undefined: nothing is recorded). */
  log: ChannelLog | undefined = undefined;
  /** The upgrade credential's client id ('' without authentication): live streams are counted per client. */
  clientId = '';
  /** Strings declared with define-strings (created on first use). */
  dict: ChannelDictionary | undefined = undefined;
  inFlight = 0;
  closed = false;
  queue: Buffer[] = [];
  queuedBytes = 0;
  outbox: Answer[] = [];
  flushScheduled = false;
  readonly controller = new AbortController();
  /** The connection's live streams by request id: each function cancels one (`cancel` op). */
  readonly live = new Map<RequestId, () => void>();
  /** Live streams waiting for the socket to drain. */
  drainWaiters: (() => void)[] = [];
}

/** The Check endpoint: the channel parses checks with it and answers them through the service's BatchCheck. */
const CHECK = ENDPOINTS_BY_OP.get('check') as NonNullable<ReturnType<typeof ENDPOINTS_BY_OP.get>>;

export class Channel {
  readonly #options: ChannelOptions;
  readonly #open = new Set<Connection>();

  constructor(
    readonly shared: ServerShared,
    options: Partial<ChannelOptions> | undefined,
  ) {
    this.#options = { ...DEFAULT_CHANNEL_OPTIONS, ...options };
  }

  mount(app: TemplatedApp, path: string): void {
    app.ws<Connection>(path, {
      maxPayloadLength: this.#options.maxFrameBytes,
      // Never let uWS drop an answer: latch bounds the buffer itself by pausing dispatch.
      maxBackpressure: 1024 * 1024 * 1024,
      closeOnBackpressureLimit: 0,
      idleTimeout: 120,
      upgrade: (res, req, context) => {
        const conn = new Connection();
        // The one subprotocol latch knows; any other offer is declined (no protocol in the reply).
        conn.records = req
          .getHeader('sec-websocket-protocol')
          .split(',')
          .some((p) => p.trim() === RECORDS_PROTOCOL);
        // Browsers apply no CORS to WebSockets: a page of a refused origin is turned away here.
        const origin = req.getHeader('origin');
        if (origin !== '' && !this.shared.cors.admits(origin, () => req.getHeader('host')))
          return refuseUpgrade(res, crossOriginRefused(origin));
        conn.authorization = req.getHeader('authorization') || undefined;
        const key = req.getHeader('sec-websocket-key');
        const extensions = req.getHeader('sec-websocket-extensions');
        authenticateUpgrade(
          this.shared.auth,
          conn.authorization,
          peerOf(res, req, this.shared.trusted),
          res,
          (log, clientId) => {
            conn.log = log;
            conn.clientId = clientId;
            res.upgrade(conn, key, conn.records ? RECORDS_PROTOCOL : '', extensions, context);
          },
        );
      },
      open: (ws) => {
        const conn = ws.getUserData();
        conn.ws = ws;
        this.#open.add(conn);
      },
      message: (ws, message, isBinary) => this.#onFrame(ws.getUserData(), message, isBinary),
      drain: (ws) => {
        const conn = ws.getUserData();
        wakeDrainWaiters(conn);
        this.#resume(conn);
      },
      close: (ws) => {
        const conn = ws.getUserData();
        conn.closed = true;
        conn.ws = undefined;
        conn.controller.abort();
        wakeDrainWaiters(conn);
        this.#open.delete(conn);
      },
    });
  }

  closeAll(): void {
    for (const conn of this.#open) conn.ws?.end(1001, 'server shutting down');
  }

  #blocked(conn: Connection): boolean {
    return (
      conn.inFlight >= this.#options.maxInFlight || (conn.ws?.getBufferedAmount() ?? 0) > this.#options.maxBuffered
    );
  }

  #onFrame(conn: Connection, message: ArrayBuffer, isBinary: boolean): void {
    if (!isBinary) return void conn.ws?.end(1003, 'binary msgpack frames only');
    if (conn.queue.length > 0 || this.#blocked(conn)) {
      // `message` is neutered after this callback: keep a copy.
      conn.queue.push(Buffer.from(new Uint8Array(message)));
      conn.queuedBytes += message.byteLength;
      if (conn.queuedBytes > this.#options.maxQueuedBytes) this.#evict(conn);
      return;
    }
    this.#dispatch(conn, Buffer.from(message));
  }

  /**
   * Drops a connection that sends faster than it reads. `end()` would wait for the client's close
   * reply, which a client that does not read never sends: close the socket at once instead.
   */
  #evict(conn: Connection): void {
    const ws = conn.ws;
    conn.queue = [];
    conn.queuedBytes = 0;
    logger.log('warn', 'channel connection closed: client does not read its answers');
    ws?.close();
  }

  /** Dispatches queued frames while the connection has room. */
  #resume(conn: Connection): void {
    while (!conn.closed && conn.queue.length > 0 && !this.#blocked(conn)) {
      const frame = conn.queue.shift() as Buffer;
      conn.queuedBytes -= frame.length;
      this.#dispatch(conn, frame);
    }
  }

  /** Decodes one frame (synchronously: `bytes` may be uWS memory) and starts every request. */
  #dispatch(conn: Connection, bytes: Buffer): void {
    // Store-log latencies of this frame's requests count from here (one clock read per frame).
    const start = conn.log ? performance.now() : 0;
    let frame: unknown;
    try {
      frame = decodeMsgpack(bytes);
    } catch (err) {
      return this.#answer(
        conn,
        errorAnswer(null, new AppError('validation_error', `malformed msgpack frame: ${String(err)}`), 'channel'),
        false,
      );
    }
    if (!Array.isArray(frame)) {
      return this.#answer(
        conn,
        errorAnswer(null, new AppError('validation_error', 'a frame must be a msgpack array of requests'), 'channel'),
        false,
      );
    }
    let group: CheckGroup | undefined;
    const groups: CheckGroup[] = [];
    for (const request of frame) {
      if (!isObj(request)) {
        this.#answer(
          conn,
          errorAnswer(
            null,
            new AppError('validation_error', 'a request must be a map {id, op, store_id, body}'),
            'channel',
          ),
          false,
        );
        continue;
      }
      const id = (typeof request.id === 'string' || typeof request.id === 'number' ? request.id : null) as RequestId;
      const body = request.body === undefined || request.body === null ? {} : request.body;
      const storeId = typeof request.store_id === 'string' ? request.store_id : undefined;
      const minRevision: unknown = request.min_revision;
      this.#begin(conn);
      // Same gate as HTTP (docs/reference/decisions.md D1): authenticate, store binding, scope, rate limit — before parsing.
      const endpoint = this.shared.auth ? ENDPOINTS_BY_OP.get(String(request.op)) : undefined;
      if (endpoint) {
        const gate = admit(this.shared.auth, endpoint.name, conn.authorization, storeId);
        if (gate.error !== undefined) {
          this.#answerOne(conn, errorAnswer(id, gate.error, endpoint.name), endpoint.name, storeId, start);
          continue;
        }
        if (gate.pending) {
          gate.pending.then(
            () => this.#runOne(conn, id, String(request.op), storeId, body, start, minRevision),
            (err: unknown) => this.#answerOne(conn, errorAnswer(id, err, endpoint.name), endpoint.name, storeId, start),
          );
          continue;
        }
      }
      if (request.op === 'cancel') {
        this.#cancel(conn, id, body);
        continue;
      }
      if (request.op === 'define-strings' || request.op === 'check-ids') {
        this.#bulk(conn, id, request.op, storeId, body, start, minRevision);
        continue;
      }
      if (request.op !== 'check') {
        void this.#runOne(conn, id, String(request.op), storeId, body, start, minRevision);
        continue;
      }
      let input: CheckInput;
      try {
        this.#mustServe(storeId);
        if (!isObj(body)) throw new AppError('validation_error', 'invalid value for message field body');
        // Check's own parser from the endpoint table, as over HTTP; only the call is grouped.
        input = CHECK.parse({
          params: { store_id: storeId },
          query: (name) => body[name],
          body,
          minRevision,
        }) as CheckInput;
      } catch (err) {
        this.#answerOne(conn, errorAnswer(id, err, 'check'), 'Check', storeId, start);
        continue;
      }
      // A check at a past revision (docs/audit.md) runs on its own, like any other op.
      if (input.at !== undefined) {
        void this.#runOne(conn, id, 'check', storeId, body, start, minRevision);
        continue;
      }
      // Checks sharing store, model and consistency (the usual case: all of them) form one group.
      if (
        !group ||
        group.storeId !== input.storeId ||
        group.modelId !== input.modelId ||
        group.consistency !== input.consistency ||
        group.ids.length === MAX_GROUP
      ) {
        group = groups.find(
          (g) =>
            g.storeId === input.storeId &&
            g.modelId === input.modelId &&
            g.consistency === input.consistency &&
            g.ids.length < MAX_GROUP,
        );
        if (!group)
          groups.push(
            (group = {
              storeId: input.storeId,
              modelId: input.modelId,
              consistency: input.consistency,
              minRevision: undefined,
              ids: [],
              inputs: [],
            }),
          );
      }
      group.ids.push(id);
      group.inputs.push(input);
      // The group waits for the freshest index any of its checks asks for.
      if (input.minRevision !== undefined && (group.minRevision === undefined || input.minRevision > group.minRevision))
        group.minRevision = input.minRevision;
    }
    for (const g of groups) {
      // One store-log record per group, never one per check (docs/auth.md).
      const tally = conn.log?.group(
        g.storeId,
        g.ids.length,
        g.ids.length === 1 ? g.inputs[0]?.tupleKey : undefined,
        start,
      );
      const decisions = this.shared.decisions;
      if (!tally) void runCheckGroup(this.shared.latch, g, (a) => this.#answer(conn, a), decisions, conn.clientId);
      else {
        const see = (a: Answer): void => {
          tally.see(a.status, a.error?.code);
          this.#answer(conn, a);
        };
        void runCheckGroup(this.shared.latch, g, see, decisions, conn.clientId).then((modelId) => tally.done(modelId));
      }
    }
  }

  /**
   * The dictionary form of Check (src/api/bulk.ts). define-strings is answered at once, so a
   * check-ids later in the same frame may use its ids; check-ids is gated like `check`.
   */
  #bulk(
    conn: Connection,
    id: RequestId,
    op: 'define-strings' | 'check-ids',
    storeId: string | undefined,
    body: unknown,
    start: number,
    minRevision: unknown,
  ): void {
    const dict = (conn.dict ??= new ChannelDictionary());
    if (op === 'define-strings') {
      try {
        if (!isObj(body)) throw new AppError('validation_error', 'invalid value for message field body');
        return this.#answer(conn, { id, status: 200, body: dict.define(body) });
      } catch (err) {
        return this.#answer(conn, errorAnswer(id, err, op));
      }
    }
    const run = async (): Promise<void> => {
      try {
        this.#mustServe(storeId);
        if (!isObj(body)) throw new AppError('validation_error', 'invalid value for message field body');
        const input = parseCheckIds(storeId, body, dict, minRevision);
        const r = await this.shared.latch.checkIds(input);
        const modelId = r.modelId;
        const decisions = this.shared.decisions;
        if (decisions?.active) decisions.checkIds(conn.clientId, input, r);
        // One store-log record for the request, like a check group (docs/auth.md).
        if (conn.log) {
          const tally = conn.log.group(input.storeId, input.triples.length / 3, undefined, start);
          for (const e of input.errors.values()) tally.see(e.status, e.code);
          tally.done(modelId);
        }
        this.#answer(conn, { id, status: 200, body: checkIdsOut(input) });
      } catch (err) {
        this.#answerOne(conn, errorAnswer(id, err, op), 'Check', storeId, start);
      }
    };
    const gate = this.shared.auth ? admit(this.shared.auth, 'Check', conn.authorization, storeId) : undefined;
    if (gate?.error !== undefined)
      return this.#answerOne(conn, errorAnswer(id, gate.error, 'Check'), 'Check', storeId, start);
    if (gate?.pending)
      return void gate.pending.then(run, (err: unknown) =>
        this.#answerOne(conn, errorAnswer(id, err, 'Check'), 'Check', storeId, start),
      );
    void run();
  }

  /**
   * Under placement the channel is not forwarded: a request for a store another node serves is
   * refused with 421 `store_served_elsewhere` and that node's URL in `node_url` (the client opens
   * a channel there; the JSON API forwards instead), and with 503 `unavailable` when no live node
   * serves it. A store this node owns is answered here (loaded first when it is not yet).
   */
  #mustServe(storeId: string | undefined): void {
    const edge = this.shared.servedBy;
    if (edge === undefined || storeId === undefined) return;
    const route = edge.route(storeId, false);
    if (route.kind === 'local') return;
    const peer = route.kind === 'forward' ? route.peers[0] : undefined;
    if (peer === undefined)
      throw new AppError('unavailable', 'no node serves this store now; retry shortly', { retryAfter: 1 });
    throw new AppError(
      'store_served_elsewhere',
      `node ${edge.nodeId} does not serve this store: open the channel at ${peer.url}`,
      { fields: { node_url: peer.url, node_id: peer.nodeId } },
    );
  }

  #begin(conn: Connection): void {
    conn.inFlight++;
    this.shared.inFlight++;
  }

  /** Answers one request and records it in the store log (one record per request). */
  #answerOne(
    conn: Connection,
    answer: Answer,
    operation: string,
    storeId: string | undefined,
    start: number,
    modelId?: string,
    input?: unknown,
  ): void {
    conn.log?.request(operation, storeId, modelId, input, answer.status, answer.error?.code ?? '', start);
    this.#answer(conn, answer);
  }

  async #runOne(
    conn: Connection,
    id: RequestId,
    op: string,
    storeId: string | undefined,
    body: unknown,
    start: number,
    minRevision: unknown,
  ): Promise<void> {
    const e = ENDPOINTS_BY_OP.get(op);
    if (!e)
      return this.#answerOne(
        conn,
        errorAnswer(id, new AppError('undefined_endpoint', `unknown op: ${op}`), 'channel'),
        op,
        storeId,
        start,
      );
    try {
      this.#mustServe(storeId);
    } catch (err) {
      return this.#answerOne(conn, errorAnswer(id, err, e.name), e.name, storeId, start);
    }
    const fields = isObj(body) ? body : {};
    const params = {
      store_id: storeId,
      id: asText(fields.id),
      authorization_model_id: asText(fields.authorization_model_id),
      index_id: asText(fields.index_id),
    };
    // A streaming request can be cancelled on its own (`cancel` op), not only with its connection.
    const own = e.streaming ? new AbortController() : undefined;
    const signal = own ? AbortSignal.any([conn.controller.signal, own.signal]) : conn.controller.signal;
    const ctx: CallContext = {
      latch: this.shared.latch,
      tokens: this.shared.tokens,
      signal,
      ready: this.shared.ready,
      modelId: undefined,
      revision: undefined,
      authzenBaseUrl: this.shared.authzenBaseUrl,
      decisions: this.shared.decisions,
      clientId: conn.clientId,
    };
    let input: unknown;
    try {
      input = e.parse({
        params,
        query: (name) => fields[name],
        body,
        minRevision: e.minRevision === true ? minRevision : undefined,
      });
      const reply = await e.handle(input, ctx);
      if ('stream' in reply && reply.live && own) {
        const last = await this.#live(conn, id, reply.stream, own);
        this.#answerOne(conn, last, e.name, storeId, start, ctx.modelId, input);
      } else if ('stream' in reply) {
        const results: unknown[] = [];
        for await (const item of reply.stream)
          if (reply.batched) for (const one of item as readonly string[]) results.push(JSON.parse(one));
          else results.push(item);
        this.#answerOne(conn, { id, status: 200, body: { results } }, e.name, storeId, start, ctx.modelId, input);
      } else {
        const answer: Answer =
          reply.body === undefined ? { id, status: reply.status } : { id, status: reply.status, body: reply.body };
        if (ctx.revision !== undefined) Object.assign(answer, { revision: ctx.revision });
        this.#answerOne(conn, answer, e.name, storeId, start, ctx.modelId, input);
      }
    } catch (err) {
      this.#answerOne(conn, errorAnswer(id, err, e.name), e.name, storeId, start, ctx.modelId, input);
    }
  }

  /** Runs a live stream (Watch) until it ends or is cancelled or stopped; its last answer. */
  async #live(conn: Connection, id: RequestId, items: AsyncIterable<unknown>, own: AbortController): Promise<Answer> {
    let reason: StopReason = null;
    const stop = (why: StopReason): void => {
      reason ??= why;
      own.abort();
    };
    let close: () => void;
    try {
      close = this.shared.live.open(conn.clientId, conn.authorization, stop);
    } catch (err) {
      await (items as AsyncGenerator<unknown>).return?.(undefined);
      return errorAnswer(id, err, 'channel');
    }
    conn.live.set(id, () => stop('cancelled'));
    const sink: LiveSink = {
      send: (a) => this.#answer(conn, a, false),
      flush: () => this.#flush(conn),
      buffered: () => conn.ws?.getBufferedAmount() ?? 0,
      drained: (ms) =>
        new Promise((resolve) => {
          if (conn.closed) return resolve(true);
          const timer = setTimeout(() => resolve(false), ms);
          conn.drainWaiters.push(() => {
            clearTimeout(timer);
            resolve(true);
          });
        }),
    };
    try {
      return await pumpLive(
        sink,
        id,
        items,
        { maxBuffered: this.#options.maxBuffered, stallMs: this.shared.liveStallMs },
        () => reason,
      );
    } finally {
      conn.live.delete(id);
      close();
    }
  }

  /** `cancel {id}`: ends the connection's live stream of that request id. */
  #cancel(conn: Connection, id: RequestId, body: unknown): void {
    const target = isObj(body) ? body.id : undefined;
    const stop = typeof target === 'string' || typeof target === 'number' ? conn.live.get(target) : undefined;
    stop?.();
    this.#answer(conn, { id, status: 200, body: { cancelled: stop !== undefined } });
  }

  /** Queues an answer for the next flush; `counted` answers finish one in-flight request. */
  #answer(conn: Connection, answer: Answer, counted = true): void {
    if (counted) {
      conn.inFlight--;
      this.shared.inFlight--;
    }
    if (conn.closed) return;
    conn.outbox.push(answer);
    if (!conn.flushScheduled) {
      conn.flushScheduled = true;
      setImmediate(() => this.#flush(conn));
    }
  }

  /** Sends every queued answer as one frame, then resumes dispatch if there is room. */
  #flush(conn: Connection): void {
    conn.flushScheduled = false;
    const ws = conn.ws;
    if (conn.closed || !ws || conn.outbox.length === 0) return;
    const bytes = conn.records ? encodeMsgpackRecords(conn.outbox) : encodeMsgpack(conn.outbox);
    conn.outbox = [];
    ws.cork(() => ws.send(bytes, true));
    this.#resume(conn);
  }
}

function wakeDrainWaiters(conn: Connection): void {
  const waiters = conn.drainWaiters;
  conn.drainWaiters = [];
  for (const w of waiters) w();
}

function asText(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}
