// Forwarding under placement (`latch serve --placement`): a request for a store this node does
// not serve goes to a node that does, over kept-alive connections (node:http's Agent), and that
// node's answer is passed back unchanged: status, headers (Latch-Revision, Latch-Served-By, the
// request id) and body; a streaming answer is passed on chunk by chunk, reading from the owner
// only as fast as the client takes it. Bounds: the request body as on any route (`bodyLimit`), a
// connect timeout, an idle timeout per answer, a whole non-streaming answer buffered only up to
// BUFFER_LIMIT (larger ones stream). When no node can answer — none ready, or every one refused
// the connection — the client gets 503 `unavailable` with Retry-After.

import http from 'node:http';
import type { Peer, PlacementStatus, Route } from '../cluster/node.js';
import { AppError } from '../errors.js';
import { readBody, tooLarge, type DiscardBound } from './body.js';
import type { Exchange } from './exchange.js';
import { statusLine } from './status-line.js';
import type { HttpRequest } from './uws.js';
import { endWhole } from './whole-reply.js';

/** What the HTTP edge asks placement (../cluster/node.ts). */
export interface PlacementEdge {
  readonly nodeId: string;
  route(storeId: string, forwarded: boolean): Route;
  /** Live members, stores held ready and loading, whether every store this node owns is loaded, lease renewals. */
  status(): PlacementStatus;
}

/** The header a forwarded request carries: the node it came from (it is never forwarded again). */
export const FORWARDED_FROM = 'latch-forwarded-from';

/**
 * Endpoints safe to send to a second node after the first failed mid-request (they change
 * nothing). Any other is retried elsewhere only when the connection was refused, i.e. nothing
 * was sent: a write cut off mid-way answers 503 and is not acknowledged.
 */
const REPEATABLE = new Set([
  'Check',
  'BatchCheck',
  'Expand',
  'ListObjects',
  'StreamedListObjects',
  'ListUsers',
  'Read',
  'ReadChanges',
  'ExplainCheck',
  'ImpactAuthorizationModel',
  'ReadAuthorizationModels',
  'ReadAuthorizationModel',
  'ReadAssertions',
  'ListIndexes',
  'GetIndex',
  'GetStore',
  'Watch',
  'ReadExpansions',
  'Evaluation',
  'Evaluations',
  'SubjectSearch',
  'ResourceSearch',
  'ActionSearch',
]);

/** Request headers not passed on (hop-by-hop, or set again here). */
const DROP_IN = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'expect',
  'upgrade',
]);
/** Answer headers not passed back (hop-by-hop, or written by uWS itself). */
const DROP_OUT = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date', 'uwebsockets']);

/** A whole answer up to this size is passed back in one write; larger or unsized ones stream. */
const BUFFER_LIMIT = 1024 * 1024;
/** A streamed chunk is written in slices of at most this size (uWS's cork buffer is 16 KB). */
const SLICE = 12 * 1024;
const RETRY_AFTER_S = 1;

interface ForwardTimeouts {
  /** Connecting to a peer (default 1 s): a dead host that does not refuse is skipped this fast. */
  readonly connectMs: number;
  /** No byte from the peer for this long ends a non-streaming answer (default 15 s). */
  readonly idleMs: number;
  /** The same for streaming endpoints (Watch, StreamedListObjects, ReadExpansions; default 120 s). */
  readonly streamIdleMs: number;
}

const DEFAULT_TIMEOUTS: ForwardTimeouts = { connectMs: 1000, idleMs: 15_000, streamIdleMs: 120_000 };

/** One request to pass on: read from uWS's request while it was valid. */
interface Outgoing {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly repeatable: boolean;
  readonly streaming: boolean;
  body: Buffer | undefined;
}

function unavailable(why: string): AppError {
  return new AppError('unavailable', why, { retryAfter: RETRY_AFTER_S });
}

export class Forwarder {
  /** Requests passed to another node, passed to a second one after the first failed, and refused (503). */
  readonly counts = { forwarded: 0, retried: 0, unavailable: 0 };
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 128, maxFreeSockets: 32 });
  /** Peers whose connection failed lately (url → until when, ms): tried last. */
  private readonly down = new Map<string, number>();
  private readonly timeouts: ForwardTimeouts;

  constructor(
    readonly placement: PlacementEdge,
    timeouts: Partial<ForwardTimeouts> = {},
  ) {
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...timeouts };
  }

  /**
   * Takes over the request (`route` is not local): reads the body within `bodyLimit`, then passes
   * it on. Everything needed from `req` is read before this returns.
   */
  take(
    x: Exchange,
    req: HttpRequest,
    route: Exclude<Route, { kind: 'local' }>,
    o: { method: string; name: string; streaming: boolean; hasBody: boolean; bodyLimit: number; discard: DiscardBound },
  ): void {
    const headers: Record<string, string> = {};
    req.forEach((k, v) => {
      if (!DROP_IN.has(k)) headers[k] = v;
    });
    headers[FORWARDED_FROM] = this.placement.nodeId;
    const query = req.getQuery();
    const out: Outgoing = {
      method: o.method,
      path: req.getUrl() + (query ? `?${query}` : ''),
      headers,
      repeatable: REPEATABLE.has(o.name),
      streaming: o.streaming,
      body: undefined,
    };
    const go = (): void => {
      x.started = true;
      if (route.kind === 'none') return this.refuse(x, 'no node serves this store now; retry shortly');
      this.send(x, out, this.order(route.peers), 0);
    };
    if (!o.hasBody) return go();
    const announced = Number(req.getHeader('content-length') || 0);
    readBody(x.res, announced, o.bodyLimit, o.discard, (bytes) => {
      if (bytes === undefined) {
        x.fail(tooLarge(o.bodyLimit), true);
        return x.finish();
      }
      out.body = Buffer.from(bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : bytes); // a copy: uWS reuses its memory
      go();
    });
  }

  /** Peers in the given order, those whose connection failed lately last. */
  private order(peers: readonly Peer[]): Peer[] {
    const now = Date.now();
    const up = peers.filter((p) => (this.down.get(p.url) ?? 0) <= now);
    return up.length === peers.length ? [...peers] : [...up, ...peers.filter((p) => !up.includes(p))];
  }

  private refuse(x: Exchange, why: string): void {
    this.counts.unavailable++;
    x.fail(unavailable(why));
    x.finish();
  }

  private send(x: Exchange, out: Outgoing, peers: readonly Peer[], i: number): void {
    if (x.aborted) return x.finish();
    const peer = peers[i];
    if (peer === undefined) return this.refuse(x, 'no node serving this store answered; retry shortly');
    const target = new URL(out.path, peer.url);
    const headers = { ...out.headers, 'content-length': String(out.body?.length ?? 0) };
    let answered = false;
    let connected = false;
    const up = http.request(target, { method: out.method, headers, agent: this.agent });
    this.counts.forwarded++;
    const abort = (): void => void up.destroy();
    x.signal.addEventListener('abort', abort, { once: true });
    up.on('socket', (socket) => {
      if (!socket.connecting) return void (connected = true);
      const timer = setTimeout(() => up.destroy(new Error('connect timeout')), this.timeouts.connectMs);
      socket.once('connect', () => {
        connected = true;
        clearTimeout(timer);
      });
      socket.once('close', () => clearTimeout(timer));
    });
    up.setTimeout(out.streaming ? this.timeouts.streamIdleMs : this.timeouts.idleMs, () =>
      up.destroy(new Error('the node did not answer in time')),
    );
    up.on('response', (answer) => {
      answered = true;
      this.passBack(x, answer, out.streaming);
    });
    up.on('error', (err: NodeJS.ErrnoException) => {
      x.signal.removeEventListener('abort', abort);
      if (answered || x.aborted) return; // passBack handles a failure after the head
      const refused = !connected || err.code === 'ECONNREFUSED';
      if (refused) this.down.set(peer.url, Date.now() + 1000);
      if ((refused || out.repeatable) && i + 1 < peers.length) {
        this.counts.retried++;
        return this.send(x, out, peers, i + 1);
      }
      this.refuse(x, `the node serving this store did not answer (${err.code ?? err.message}); retry shortly`);
    });
    up.end(out.body);
  }

  /** Passes the answer back: whole when small and sized, else streamed with the client's pace. */
  private passBack(x: Exchange, answer: http.IncomingMessage, streaming: boolean): void {
    const res = x.res;
    const status = answer.statusCode ?? 502;
    const raw = answer.rawHeaders;
    const head = (): void => {
      res.writeStatus(statusLine(status));
      for (let i = 0; i + 1 < raw.length; i += 2)
        if (!DROP_OUT.has((raw[i] as string).toLowerCase())) res.writeHeader(raw[i] as string, raw[i + 1] as string);
    };
    const length = Number(answer.headers['content-length'] ?? NaN);
    let headWritten = false;
    let done = false;
    const end = (ok: boolean): void => {
      if (done) return;
      done = true;
      if (!x.aborted) {
        if (ok) res.cork(() => (headWritten ? res.end() : (head(), res.end())));
        else if (!headWritten) return this.refuse(x, 'the node serving this store went away mid-answer; retry');
        else res.close(); // mid-stream: the client sees the stream cut, as if the node had died under it
      }
      x.passedBack(status);
      x.finish();
    };
    if (!streaming && Number.isFinite(length) && length <= BUFFER_LIMIT) {
      const parts: Buffer[] = [];
      answer.on('data', (c: Buffer) => parts.push(c));
      answer.on('end', () => {
        if (done) return;
        done = true;
        if (!x.aborted) endWhole(res, head, Buffer.concat(parts));
        x.passedBack(status);
        x.finish();
      });
    } else {
      answer.on('data', (c: Buffer) => {
        if (x.aborted) return void answer.destroy();
        let ok = true;
        for (let at = 0; at < c.length; at += SLICE) {
          const slice = c.subarray(at, at + SLICE);
          res.cork(() => {
            if (!headWritten) {
              head();
              headWritten = true;
            }
            ok = res.write(slice) && ok;
          });
        }
        if (!ok) {
          answer.pause();
          res.onWritable(() => (answer.resume(), true));
        }
      });
      answer.on('end', () => end(true));
    }
    answer.on('aborted', () => end(false));
    answer.on('error', () => end(false));
    answer.on('close', () => end(answer.complete));
  }

  /** The placement metrics (Prometheus text; the index figures are latch_index_stores and latch_index_bytes). */
  metricsText(): string {
    const st = this.placement.status();
    const lines: string[] = [];
    const metric = (name: string, type: string, help: string, value: number): void =>
      void lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name} ${value}`);
    metric(
      'latch_placement_members',
      'gauge',
      'Live members of the placement registry, this node included.',
      st.members,
    );
    metric('latch_placement_stores_ready', 'gauge', 'Stores this node holds and serves.', st.held);
    metric('latch_placement_stores_loading', 'gauge', 'Stores this node is loading.', st.loading);
    metric(
      'latch_placement_ready',
      'gauge',
      'Whether every store this node owns is loaded (1) or not (0).',
      st.ready ? 1 : 0,
    );
    metric(
      'latch_placement_lease_renewal_gap_max_seconds',
      'gauge',
      'The longest time between two successful lease renewals of this node (its lease lapses at the lease length).',
      st.renewalGapMaxMs / 1000,
    );
    metric(
      'latch_placement_loads_deferred_total',
      'counter',
      'Store loads put off because this node’s own lease renewal was overdue.',
      st.loadsDeferred,
    );
    metric('latch_placement_forwards_total', 'counter', 'Requests passed to another node.', this.counts.forwarded);
    metric(
      'latch_placement_forward_retries_total',
      'counter',
      'Forwarded requests passed to a second node after the first failed.',
      this.counts.retried,
    );
    metric(
      'latch_placement_unavailable_total',
      'counter',
      'Requests answered 503 because no node serving the store answered.',
      this.counts.unavailable,
    );
    return lines.join('\n') + '\n';
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }
}
