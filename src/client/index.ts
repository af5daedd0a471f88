// `latch/client`: a typed client of the msgpack batch channel (docs/msgpack.md). Calls made in
// the same tick are coalesced into one frame, so `Promise.all(keys.map((k) => c.check(s, k)))`
// costs one round trip; answers are matched to requests by id. Plain checks (no contextual tuples,
// no context) travel in the dictionary form: strings declared once per connection, checks as
// packed u32 triples, answers as one byte each (docs/msgpack.md "Bulk checks").
// It also exports the readers of HTTP listing replies (ListUsers and ListObjects pages, the
// StreamedListObjects lines: listings.ts, listing-stream.ts), for callers that page over fetch.

import { RECORDS_PROTOCOL, decodeMsgpack, encodeMsgpackRecords } from '../domain/msgpack.js';
import { openFrameSocket, type FrameSocket } from './ws.js';
import { ClientDictionary } from './dictionary.js';

export { ApiError, FallbackCode } from './json.js';
export { decodeObjectsPage, decodeUsersPage, type ListedUser, type ObjectsPage, type UsersPage } from './listings.js';
export { ObjectStreamReader } from './listing-stream.js';

const BIG_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 0;

/** The bytes of `triples` as little-endian u32 (the wire order), without a copy on little-endian hosts. */
function littleEndian(triples: Uint32Array): Uint8Array {
  if (!BIG_ENDIAN) return new Uint8Array(triples.buffer, triples.byteOffset, triples.byteLength);
  const out = new Uint8Array(triples.byteLength);
  const view = new DataView(out.buffer);
  for (let i = 0; i < triples.length; i++) view.setUint32(4 * i, triples[i] as number, true);
  return out;
}

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
  /**
   * Answer from an index that has applied at least this store revision (the `revision` a write
   * answered with, on any node): read-your-writes across replicas without a database round trip.
   * Sent as the request's `min_revision` field (the HTTP `Latch-Min-Revision` header).
   */
  readonly min_revision?: number;
}

/** One request of a frame: an API operation (`check`, `write`, `read`, …) with its JSON-shaped body. */
export interface ChannelRequest {
  readonly op: string;
  readonly store_id?: string | undefined;
  readonly body?: unknown;
  /** Latch-Min-Revision for the queries and read (see CheckOptions.min_revision). */
  readonly min_revision?: number | undefined;
}

export interface ChannelAnswer {
  readonly id: number | string | null;
  readonly status: number;
  readonly body?: unknown;
  /** A write's resulting store revision (the HTTP `Latch-Revision` header). */
  readonly revision?: number;
  readonly error?: {
    readonly code: string;
    readonly message: string;
    /** store_served_elsewhere: the URL of a node that serves the store. */
    readonly node_url?: string;
  };
  /** Set on every answer of a live stream but its last. */
  readonly more?: boolean;
}

export interface WatchOptions {
  /** Only changes whose object type equals this. */
  readonly type?: string;
  /** Resume right after the change this ReadChanges/Watch token names. */
  readonly continuation_token?: string;
  /** Start at the first change at or after this RFC 3339 time (ignored with a token). */
  readonly start_time?: string;
  /** A heartbeat after this long without a change (100–8000 ms, default 5000). */
  readonly heartbeat_ms?: number;
}

/** One event of a watch: a change with the token that resumes right after it, or a heartbeat. */
export type WatchEvent =
  | {
      readonly change: {
        readonly tuple_key: CheckKey & { condition?: unknown };
        readonly operation: string;
        readonly timestamp: string;
      };
      readonly continuation_token: string;
    }
  | { readonly heartbeat: { readonly continuation_token: string; readonly timestamp: string } };

export interface ExpansionsOptions {
  /** The model the index is assigned to (required: a mismatch is refused). */
  readonly authorization_model_id: string;
  /** Resume right after this event id (an expansion's or a freshness event's); absent → the whole current set first. */
  readonly from?: string;
  /** A heartbeat after this long without an event (100–8000 ms, default 5000). */
  readonly heartbeat_ms?: number;
  /** The server closes the stream after this long (ms, default one hour). */
  readonly lifetime_ms?: number;
}

/** One event of a ReadExpansions stream (docs/permission-indexes.md). */
export type ExpansionStreamEvent =
  | {
      readonly expansion: {
        readonly id: string;
        readonly operation: 'INSERT' | 'DELETE';
        readonly user: string;
        readonly relation: string;
        readonly object: string;
        readonly revision: number;
      };
    }
  | { readonly freshness: { readonly id: string; readonly revision: number; readonly timestamp: string } }
  | { readonly heartbeat: { readonly timestamp: string } }
  | { readonly closed: { readonly reason: string } };

export interface ConnectOptions {
  /** A bearer token (pre-shared key or access token) for the upgrade's `Authorization` header. */
  readonly token?: string | undefined;
  /** Extra upgrade request headers (`token` wins over an `Authorization` given here). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** Options of a bulk check: everything of CheckOptions applies to every check of the call. */
export type BulkOptions = CheckOptions;

/** One byte per check, in order: CHECK_DENIED, CHECK_ALLOWED or CHECK_ERROR (its error in `errors`). */
export interface BulkResult {
  readonly results: Uint8Array;
  readonly errors: ReadonlyMap<number, ChannelError>;
}

export const CHECK_DENIED = 0;
export const CHECK_ALLOWED = 1;
export const CHECK_ERROR = 2;

/** The plain checks of one tick that share store, model and consistency: one check-ids request. */
interface PlainGroup {
  readonly storeId: string;
  readonly options: BulkOptions;
  readonly triples: number[];
  readonly resolve: ((allowed: boolean) => void)[];
  readonly reject: ((err: Error) => void)[];
}

/** Plain checks per check-ids request sent by `check()` (the server accepts up to 262,144). */
const MAX_GROUP = 65_536;

/** An error answer, thrown by `check()` and `request()`. */
export class ChannelError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /**
     * With code `store_served_elsewhere` (status 421, stores placed across nodes): the URL of a
     * node that serves the store. The channel is not forwarded between nodes: open one there
     * (`channelUrlOf(nodeUrl)`) for that store's requests.
     */
    readonly nodeUrl?: string | undefined,
  ) {
    super(message);
    this.name = 'ChannelError';
  }

  /** The error of an answer. */
  static of(status: number, error: NonNullable<ChannelAnswer['error']>, prefix = ''): ChannelError {
    return new ChannelError(status, error.code, prefix + error.message, error.node_url);
  }
}

/** The channel URL (`ws://host:port/stream`) of a node's HTTP URL, e.g. a ChannelError's `nodeUrl`. */
export function channelUrlOf(nodeUrl: string): string {
  const u = new URL('/stream', nodeUrl);
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  return u.toString();
}

/**
 * Who waits for an answer: one `request()` (`first` undefined) or a whole `batch()`, whose ids are
 * consecutive from `first` — a batch costs one waiter and one promise, not one per request.
 */
type Waiter =
  | {
      readonly first: undefined;
      readonly resolve: (answer: ChannelAnswer) => void;
      readonly reject: (err: Error) => void;
    }
  /** A live stream (`watch`): every `more` answer is pushed, the last one resolves. */
  | {
      readonly first: 'stream';
      readonly push: (answer: ChannelAnswer) => void;
      readonly resolve: (answer: ChannelAnswer) => void;
      readonly reject: (err: Error) => void;
    }
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
  readonly #dict = new ClientDictionary();
  #groups = new Map<string, PlainGroup>();

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

  /**
   * Every object of a ListObjects request (`body` as on the HTTP route), page after page over
   * latch's paged ListObjects: complete and in order. Rejects with the first page's error.
   */
  async *listAllObjects(storeId: string, body: Record<string, unknown>, pageSize = 1000): AsyncGenerator<string, void> {
    let token = '';
    do {
      const a = await this.request('list-objects', storeId, {
        ...body,
        page_size: pageSize,
        ...(token ? { continuation_token: token } : {}),
      });
      if (a.error) throw ChannelError.of(a.status, a.error);
      const page = a.body as { objects: string[]; continuation_token?: string };
      yield* page.objects;
      token = page.continuation_token ?? '';
    } while (token);
  }

  /** The answer to one request (sent in the current tick's frame). Error answers resolve too. */
  request(op: string, storeId: string | undefined, body: unknown, minRevision?: number): Promise<ChannelAnswer> {
    if (this.#closed) return Promise.reject(this.#closed);
    return new Promise((resolve, reject) => {
      this.#enqueue(op, storeId, body, { first: undefined, resolve, reject }, minRevision);
    });
  }

  /**
   * Write (deletes then writes, one transaction); resolves with the store revision it left, to
   * pass as `min_revision` to later queries on any node. An error answer rejects with a ChannelError
   * (a failed `preconditions` entry: status 409, code write_precondition_failed).
   */
  async write(
    storeId: string,
    body: { writes?: unknown; deletes?: unknown; authorization_model_id?: string; preconditions?: unknown[] },
  ): Promise<{ revision: number }> {
    const a = await this.request('write', storeId, body);
    if (a.error) throw ChannelError.of(a.status, a.error);
    return { revision: a.revision ?? 0 };
  }

  /** Queues one request of the current frame for `waiter`. */
  #enqueue(op: string, storeId: string | undefined, body: unknown, waiter: Waiter, minRevision?: number): void {
    const id = this.#nextId++;
    this.#frame.push(
      minRevision === undefined
        ? { id, op, store_id: storeId, body }
        : { id, op, store_id: storeId, body, min_revision: minRevision },
    );
    this.#pending.set(id, waiter);
    if (this.#frame.length >= MAX_FRAME_REQUESTS) this.#flush();
    else if (!this.#flushQueued) {
      this.#flushQueued = true;
      queueMicrotask(() => this.#flush());
    }
  }

  /**
   * The store's changes from `options`, then live ones, as an async iterator (docs/msgpack.md
   * "Watch"). Leaving the loop (`break`, `return`) cancels the stream on the server; an error
   * answer (store deleted, consumer stalled, server shutting down) is thrown as a ChannelError.
   * Events wait in memory until the loop takes them.
   */
  watch(storeId: string, options: WatchOptions = {}): AsyncIterableIterator<WatchEvent> {
    return this.#liveStream<WatchEvent>('watch', storeId, options);
  }

  /**
   * ReadExpansions of a permission index as an async iterator (docs/permission-indexes.md): the
   * whole current set unless `from` is given, then live INSERT/DELETE events, freshness events,
   * heartbeats and a last `closed` event. Leaving the loop cancels the stream on the server.
   */
  expansions(
    storeId: string,
    indexId: string,
    options: ExpansionsOptions,
  ): AsyncIterableIterator<ExpansionStreamEvent> {
    return this.#liveStream<ExpansionStreamEvent>('read-expansions', storeId, { ...options, index_id: indexId });
  }

  #liveStream<T>(op: string, storeId: string, body: object): AsyncIterableIterator<T> {
    const queue: T[] = [];
    let wake: (() => void) | undefined;
    let end: ChannelAnswer | Error | undefined;
    const id = this.#nextId; // the id #enqueue is about to give the watch request
    const settle = (): void => {
      wake?.();
      wake = undefined;
    };
    if (this.#closed) end = this.#closed;
    else {
      this.#enqueue(op, storeId, body, {
        first: 'stream',
        push: (a) => {
          queue.push((a.body as { result: T }).result);
          settle();
        },
        resolve: (a) => {
          end = a;
          settle();
        },
        reject: (err) => {
          end = err;
          settle();
        },
      });
    }
    const iterator: AsyncIterableIterator<T> = {
      [Symbol.asyncIterator]: () => iterator,
      next: async (): Promise<IteratorResult<T>> => {
        while (queue.length === 0 && end === undefined) await new Promise<void>((r) => (wake = r));
        const value = queue.shift();
        if (value !== undefined) return { done: false, value };
        if (end instanceof Error) throw end;
        if (end?.error) throw ChannelError.of(end.status, end.error);
        return { done: true, value: undefined };
      },
      return: async (): Promise<IteratorResult<T>> => {
        if (end === undefined && !this.#closed) void this.request('cancel', undefined, { id });
        end ??= { id, status: 200, body: { cancelled: true } };
        queue.length = 0;
        settle();
        return { done: true, value: undefined };
      },
    };
    return iterator;
  }

  /** Check: true or false; an error answer rejects with a ChannelError. */
  async check(storeId: string, key: CheckKey, options: CheckOptions = {}): Promise<boolean> {
    if (this.#closed) throw this.#closed;
    const plain = options.context === undefined && (options.contextual_tuples?.tuple_keys.length ?? 0) === 0;
    if (plain && this.#dict.fits(key.object, key.relation, key.user)) {
      return new Promise((resolve, reject) => this.#plainCheck(storeId, key, options, resolve, reject));
    }
    const { min_revision, ...rest } = options;
    const a = await this.request('check', storeId, { ...rest, tuple_key: key }, min_revision);
    if (a.error) throw ChannelError.of(a.status, a.error);
    return (a.body as { allowed: boolean }).allowed;
  }

  /** Sends the requests (one frame up to 4096 of them); answers come back in request order. */
  batch(requests: readonly ChannelRequest[]): Promise<ChannelAnswer[]> {
    if (this.#closed) return Promise.reject(this.#closed);
    if (requests.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const answers = new Array<ChannelAnswer>(requests.length);
      const waiter: Waiter = { first: this.#nextId, answers, left: requests.length, resolve, reject };
      for (const r of requests) this.#enqueue(r.op, r.store_id, r.body ?? {}, waiter, r.min_revision);
    });
  }

  /**
   * The id of `s` on this connection (declared with the next frame when new), for `checkIds`.
   * Throws a RangeError for a string of more than 512 UTF-8 bytes or past 1,000,000 strings.
   */
  intern(s: string): number {
    const id = this.#dict.id(s);
    if (id < 0) throw new RangeError('latch: string cannot be declared (over 512 bytes, or the dictionary is full)');
    this.#schedule();
    return id;
  }

  /**
   * Checks given as (object, relation, user) ids from `intern()`, 3 per check, in one request (up to
   * 262,144 checks). `triples` is read when the frame is sent, at the end of the current tick.
   * Rejects with a ChannelError when the request as a whole fails (unknown store or model …).
   */
  async checkIds(storeId: string, triples: Uint32Array, options: BulkOptions = {}): Promise<BulkResult> {
    const { min_revision, ...rest } = options;
    const a = await this.request('check-ids', storeId, { ...rest, checks: littleEndian(triples) }, min_revision);
    if (a.error) throw ChannelError.of(a.status, a.error);
    const body = a.body as {
      results: Uint8Array;
      errors: { index: number; status: number; code: string; message: string }[];
    };
    const errors = new Map<number, ChannelError>();
    for (const e of body.errors) errors.set(e.index, new ChannelError(e.status, e.code, e.message));
    return { results: body.results, errors };
  }

  /**
   * Many checks with shared options: as ids (`checkIds`) when they can be, else one `check`
   * request each (contextual tuples, strings over 512 bytes); the same BulkResult either way.
   */
  async checkMany(storeId: string, keys: readonly CheckKey[], options: BulkOptions = {}): Promise<BulkResult> {
    const d = this.#dict;
    const asText = (options.contextual_tuples?.tuple_keys.length ?? 0) > 0;
    const triples = new Uint32Array(keys.length * 3);
    const text: number[] = [];
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as CheckKey;
      if (asText || !d.fits(k.object, k.relation, k.user)) {
        text.push(i);
        continue;
      }
      triples[3 * i] = d.id(k.object);
      triples[3 * i + 1] = d.id(k.relation);
      triples[3 * i + 2] = d.id(k.user);
    }
    if (text.length === 0)
      return keys.length === 0
        ? { results: new Uint8Array(0), errors: new Map() }
        : this.checkIds(storeId, triples, options);
    const results = new Uint8Array(keys.length);
    const errors = new Map<number, ChannelError>();
    const { min_revision, ...rest } = options;
    const answers = await this.batch(
      text.map((i) => ({ op: 'check', store_id: storeId, body: { ...rest, tuple_key: keys[i] }, min_revision })),
    );
    answers.forEach((a, j) => {
      const i = text[j] as number;
      if (a.error) {
        results[i] = CHECK_ERROR;
        errors.set(i, ChannelError.of(a.status, a.error));
      } else results[i] = (a.body as { allowed: boolean }).allowed ? CHECK_ALLOWED : CHECK_DENIED;
    });
    if (text.length === keys.length) return { results, errors };
    // The rest as ids: the text checks' triples stay (0,0,0) and their answers are replaced.
    const packed = new Uint32Array(3 * (keys.length - text.length));
    const at: number[] = [];
    let t = 0;
    for (let i = 0, j = 0; i < keys.length; i++) {
      if (text[t] === i) {
        t++;
        continue;
      }
      packed.set(triples.subarray(3 * i, 3 * i + 3), 3 * j++);
      at.push(i);
    }
    const ids = await this.checkIds(storeId, packed, options);
    at.forEach((i, j) => {
      results[i] = ids.results[j] as number;
      const e = ids.errors.get(j);
      if (e) errors.set(i, e);
    });
    return { results, errors };
  }

  #plainCheck(
    storeId: string,
    key: CheckKey,
    options: BulkOptions,
    resolve: (allowed: boolean) => void,
    reject: (err: Error) => void,
  ): void {
    const gk = `${storeId}\0${options.authorization_model_id ?? ''}\0${options.consistency ?? ''}\0${options.min_revision ?? ''}`;
    let g = this.#groups.get(gk);
    if (!g) this.#groups.set(gk, (g = { storeId, options, triples: [], resolve: [], reject: [] }));
    const d = this.#dict;
    g.triples.push(d.id(key.object), d.id(key.relation), d.id(key.user));
    g.resolve.push(resolve);
    g.reject.push(reject);
    if (g.resolve.length >= MAX_GROUP) this.#sendGroup(gk, g);
    this.#schedule();
  }

  /** Turns a group of plain checks into one check-ids request whose answer settles each of them. */
  #sendGroup(gk: string, g: PlainGroup): void {
    this.#groups.delete(gk);
    const { authorization_model_id, consistency, min_revision } = g.options;
    this.checkIds(g.storeId, Uint32Array.from(g.triples), { authorization_model_id, consistency, min_revision }).then(
      (r) => {
        for (let i = 0; i < g.resolve.length; i++) {
          const b = r.results[i];
          if (b === CHECK_ERROR)
            (g.reject[i] as (err: Error) => void)(
              r.errors.get(i) ?? new ChannelError(500, 'internal_error', 'no answer for this check'),
            );
          else (g.resolve[i] as (allowed: boolean) => void)(b === CHECK_ALLOWED);
        }
      },
      (err: unknown) => {
        for (const reject of g.reject) reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  }

  #schedule(): void {
    if (this.#flushQueued) return;
    this.#flushQueued = true;
    queueMicrotask(() => this.#flush());
  }

  close(): Promise<void> {
    this.#flush();
    this.#fail(new Error('channel client closed'));
    this.socket.close(1000);
    return Promise.resolve();
  }

  #flush(): void {
    this.#flushQueued = false;
    for (const [gk, g] of this.#groups) this.#sendGroup(gk, g);
    // Strings first: the server declares them before it starts any request of the frame.
    const defines = this.#dict.takeUnsent();
    if (defines.length > 0 && !this.#closed) {
      const head = defines.map((body) => {
        const id = this.#nextId++;
        this.#pending.set(id, { first: undefined, resolve: (a) => this.#defined(a), reject: () => undefined });
        return { id, op: 'define-strings', body };
      });
      this.#frame = [...head, ...this.#frame];
    }
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
        if (a.error) this.#rejectAll(ChannelError.of(a.status, a.error));
        continue;
      }
      const w = this.#pending.get(a.id);
      if (!w) continue;
      if (w.first === 'stream' && a.more === true) {
        w.push(a);
        continue;
      }
      this.#pending.delete(a.id);
      if (w.first === undefined || w.first === 'stream') {
        w.resolve(a);
        continue;
      }
      w.answers[a.id - w.first] = a;
      if (--w.left === 0) w.resolve(w.answers);
    }
  }

  /** A refused declaration leaves the two dictionaries apart: nothing sent by id can be trusted. */
  #defined(a: ChannelAnswer): void {
    if (a.error) this.#fail(ChannelError.of(a.status, a.error, 'string declaration refused: '));
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
