// `latch/client`: a typed client of the msgpack batch channel (docs/msgpack.md). Calls made in
// the same tick are coalesced into one frame, so `Promise.all(keys.map((k) => c.check(s, k)))`
// costs one round trip; answers are matched to requests by id.

import { RECORDS_PROTOCOL, decodeMsgpack, encodeMsgpackRecords } from '../http/codec.js';
import { openFrameSocket, type FrameSocket } from './ws.js';

export interface CheckKey {
  readonly user: string;
  readonly relation: string;
  readonly object: string;
}

export interface CheckOptions {
  readonly authorization_model_id?: string;
  readonly contextual_tuples?: { tuple_keys: readonly unknown[] };
  readonly context?: Record<string, unknown>;
  readonly consistency?: 'UNSPECIFIED' | 'MINIMIZE_LATENCY' | 'HIGHER_CONSISTENCY';
}

/** One request of a frame: an API operation (`check`, `write`, `read`, …) with its JSON-shaped body. */
export interface ChannelRequest {
  readonly op: string;
  readonly store_id?: string | undefined;
  readonly body?: unknown;
}

export interface ChannelAnswer {
  readonly id: number | string | null;
  readonly status: number;
  readonly body?: unknown;
  readonly error?: { readonly code: string; readonly message: string };
}

export interface ConnectOptions {
  /** A bearer token (pre-shared key or access token) for the upgrade's `Authorization` header. */
  readonly token?: string | undefined;
  /** Extra upgrade request headers (`token` wins over an `Authorization` given here). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** An error answer, thrown by `check()` and `request()`. */
export class ChannelError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ChannelError';
  }
}

/**
 * Who waits for an answer: one `request()` (`first` undefined) or a whole `batch()`, whose ids are
 * consecutive from `first` — a batch costs one waiter and one promise, not one per request.
 */
type Waiter =
  | { readonly first: undefined; readonly resolve: (answer: ChannelAnswer) => void; readonly reject: (err: Error) => void }
  | {
      readonly first: number;
      readonly answers: ChannelAnswer[];
      left: number;
      readonly resolve: (answers: ChannelAnswer[]) => void;
      readonly reject: (err: Error) => void;
    };

/** Requests per frame before a frame is sent without waiting for the end of the tick. */
const MAX_FRAME_REQUESTS = 4096;

export class LatchChannelClient {
  #nextId = 1;
  readonly #pending = new Map<number, Waiter>();
  #frame: Record<string, unknown>[] = [];
  #flushQueued = false;
  #closed: Error | undefined;

  private constructor(private readonly socket: FrameSocket) {
    socket.onMessage = (data) => this.#onFrame(data);
    socket.onClose = (code, reason) => this.#fail(new Error(`channel closed (${code}${reason ? `: ${reason}` : ''})`));
  }

  /**
   * Connects to `ws://host:port/stream`. With authentication on, pass `token` (sent as
   * `Authorization: Bearer <token>` with the upgrade; every request of the connection is admitted
   * with it) or any `headers` of your own.
   */
  static async connect(url: string, options: ConnectOptions = {}): Promise<LatchChannelClient> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) {
      for (const name of Object.keys(headers)) if (name.toLowerCase() === 'authorization') delete headers[name];
      headers.Authorization = `Bearer ${options.token}`;
    }
    return new LatchChannelClient(await openFrameSocket(url, [RECORDS_PROTOCOL], headers));
  }

  /** The answer to one request (sent in the current tick's frame). Error answers resolve too. */
  request(op: string, storeId: string | undefined, body: unknown): Promise<ChannelAnswer> {
    if (this.#closed) return Promise.reject(this.#closed);
    return new Promise((resolve, reject) => {
      this.#enqueue(op, storeId, body, { first: undefined, resolve, reject });
    });
  }

  /** Queues one request of the current frame for `waiter`. */
  #enqueue(op: string, storeId: string | undefined, body: unknown, waiter: Waiter): void {
    const id = this.#nextId++;
    this.#frame.push({ id, op, store_id: storeId, body });
    this.#pending.set(id, waiter);
    if (this.#frame.length >= MAX_FRAME_REQUESTS) this.#flush();
    else if (!this.#flushQueued) {
      this.#flushQueued = true;
      queueMicrotask(() => this.#flush());
    }
  }

  /** Check: true or false; an error answer rejects with a ChannelError. */
  async check(storeId: string, key: CheckKey, options: CheckOptions = {}): Promise<boolean> {
    const a = await this.request('check', storeId, { ...options, tuple_key: key });
    if (a.error) throw new ChannelError(a.status, a.error.code, a.error.message);
    return (a.body as { allowed: boolean }).allowed;
  }

  /** Sends the requests (one frame up to 4096 of them); answers come back in request order. */
  batch(requests: readonly ChannelRequest[]): Promise<ChannelAnswer[]> {
    if (this.#closed) return Promise.reject(this.#closed);
    if (requests.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const answers = new Array<ChannelAnswer>(requests.length);
      const waiter: Waiter = { first: this.#nextId, answers, left: requests.length, resolve, reject };
      for (const r of requests) this.#enqueue(r.op, r.store_id, r.body ?? {}, waiter);
    });
  }

  close(): Promise<void> {
    this.#flush();
    this.#fail(new Error('channel client closed'));
    this.socket.close(1000);
    return Promise.resolve();
  }

  #flush(): void {
    this.#flushQueued = false;
    if (this.#frame.length === 0 || this.#closed) return;
    const frame = this.#frame;
    this.#frame = [];
    // Requests go out as msgpackr records (latch decodes both forms); answers come back as records
    // when the server accepted RECORDS_PROTOCOL.
    this.socket.send(encodeMsgpackRecords(frame));
  }

  #onFrame(data: Buffer): void {
    const answers = decodeMsgpack(data);
    if (!Array.isArray(answers)) return;
    for (const a of answers as ChannelAnswer[]) {
      if (typeof a.id !== 'number') {
        // A frame-level error (id null) concerns requests we cannot identify: fail them all.
        if (a.error) this.#rejectAll(new ChannelError(a.status, a.error.code, a.error.message));
        continue;
      }
      const w = this.#pending.get(a.id);
      if (!w) continue;
      this.#pending.delete(a.id);
      if (w.first === undefined) {
        w.resolve(a);
        continue;
      }
      w.answers[a.id - w.first] = a;
      if (--w.left === 0) w.resolve(w.answers);
    }
  }

  #fail(err: Error): void {
    this.#closed ??= err;
    this.#rejectAll(err);
  }

  #rejectAll(err: Error): void {
    // A batch's waiter appears once per request; rejecting a settled promise again is a no-op.
    for (const w of this.#pending.values()) w.reject(err);
    this.#pending.clear();
  }
}
