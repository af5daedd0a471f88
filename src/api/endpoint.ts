// The shape of one API endpoint, shared by the JSON routes and the msgpack channel: a parser from
// an untyped request to a validated input, and a handler that calls the service with it.

import type { Principal } from './auth/principal.js';
import type { DecisionLog } from './decisions/log.js';
import type { Latch } from '../engine/contract.js';
import type { TokenCodec } from './tokens.js';
import type { LineSource } from './listing-lines.js';
import { storeId } from './validate.js';

/** What a transport hands to a parser: path parameters, query parameters and the decoded body. */
export interface ApiRequest {
  /** Path parameters by name (`store_id`, `id`, `authorization_model_id`). */
  readonly params: Readonly<Record<string, string | undefined>>;
  /** Query parameters (GET routes); the channel passes the request body's fields here. */
  readonly query: (name: string) => unknown;
  /** The decoded body: `{}` for an empty POST; anything a JSON/msgpack decoder produced. */
  readonly body: unknown;
  /**
   * The request headers the endpoint named in `Endpoint.headers`, by lower-case name (absent
   * ones left out). The msgpack channel has no per-request headers and passes none.
   */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /**
   * Latch-Min-Revision as sent (the header's text, or a channel request's `min_revision`);
   * read only for endpoints with `minRevision` set.
   */
  readonly minRevision?: unknown;
  /** Latch-At-Revision as sent (HTTP only; a channel request names `at_revision` in its body). */
  readonly atRevision?: unknown;
}

/** Per-request facts a handler reports back for the response headers (docs/reference/decisions.md D11). */
export interface CallContext {
  readonly latch: Latch;
  readonly tokens: TokenCodec;
  /** Aborted when the client goes away; streaming handlers stop on it. */
  readonly signal: AbortSignal;
  /** True once the service's indexes are loaded (`latch.ready()` resolved). */
  readonly ready: () => boolean;
  /** The resolved model id, set by handlers of endpoints that resolve one. */
  modelId: string | undefined;
  /** `--authzen-base-url`: the origin AuthZEN metadata names (unset → taken from the request's Host). */
  readonly authzenBaseUrl?: string | undefined;
  /** The store revision a Write left (the `Latch-Revision` header; `revision` on the channel). */
  revision: number | undefined;
  /** The admitted caller (undefined where no authentication ran: embedded use). */
  readonly principal?: Principal | undefined;
  /**
   * The caller's client id where the transport admitted it once for many calls (the msgpack
   * channel, authenticated at its upgrade) and attaches no principal to each call.
   */
  readonly clientId?: string | undefined;
  /** The decision log (docs/audit.md); handlers record only while it is `active`. */
  readonly decisions?: DecisionLog | undefined;
}

/** The caller's client id as the decision log records it ('' where no authentication ran). */
export function clientOf(ctx: CallContext): string {
  return ctx.principal?.clientId ?? ctx.clientId ?? '';
}

/** A complete response. `json`, when present, is the pre-encoded JSON form of `body`. */
export interface Reply {
  readonly status: number;
  /** Undefined → no body (204). */
  readonly body?: unknown;
  /**
   * As text, or as UTF-8 bytes: a constant reply in an ArrayBuffer of exactly their length, or a
   * large body rendered into a buffer of its own (a listing page). The transport hands bytes to the
   * socket as they are, where a string is encoded again on every send (and an ArrayBuffer is the
   * form uWS reads without a conversion, src/http/wire-strings.ts).
   */
  readonly json?: string | ArrayBuffer | Uint8Array | undefined;
  /** Extra response headers (latch's own `Latch-*` extensions, D15); absent on the hot paths. */
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** A streamed response (StreamedListObjects, Watch): items are sent as `{"result": item}` lines. */
export interface StreamReply {
  readonly stream: AsyncIterable<unknown>;
  /**
   * Each value of `stream` is an array of items already as JSON text, one line each: a listing
   * hands over its lines a batch per async step, rendered without an object per line, instead of
   * one step per line. The transport still writes them in bounded chunks and yields between.
   */
  readonly batched?: boolean | undefined;
  /**
   * The same lines as NDJSON rendered straight into the transport's buffer (`{"result":…}` and
   * the newline included), a source per batch: HTTP writes these and never reads `stream`, the
   * channel reads `stream`. The first batch (or error) decides the status, as for `stream`.
   */
  readonly lines?: AsyncIterable<LineSource> | undefined;
  /**
   * A live stream (Watch, ReadExpansions, a tuple export) may run long: it counts against the
   * live-stream caps, ends at its lifetime and when its credential is revoked or expires, and a consumer that reads nothing for the server's
   * stall limit is sent an error line saying why and disconnected (the stream waits meanwhile,
   * holding one line, so a slow consumer never makes the server buffer more).
   */
  readonly live?: boolean | undefined;
}

type HttpMethod = 'get' | 'post' | 'put' | 'del' | 'patch';

export interface Endpoint<I = unknown> {
  /** The OpenFGA operation id, e.g. `Check`. */
  readonly name: string;
  /** The msgpack channel op, e.g. `check`. */
  readonly op: string;
  readonly method: HttpMethod;
  /** uWS route pattern, e.g. `/stores/:store_id/check`. */
  readonly path: string;
  /** A streaming endpoint reports every error, even a parse error, in the stream framing (§4.18). */
  readonly streaming?: boolean;
  /**
   * A streaming endpoint whose errors before the first line are answered like any endpoint's
   * (status and catalog body): the impact of a candidate model, rejected as a model write would be.
   */
  readonly plainErrors?: boolean;
  /** Lower-case names of the request headers the parser reads (`ApiRequest.headers`). */
  readonly headers?: readonly string[];
  /**
   * The reply carries the request's own `X-Request-ID` when it sent a usable one (AuthZEN 1.0,
   * Transport: a PDP echoes the PEP's request identifier); otherwise latch's own id as always.
   */
  readonly echoRequestId?: boolean;
  /**
   * A larger request body limit than the server's (bulk import): the route takes bodies up to
   * the greater of the two.
   */
  readonly bodyLimit?: number;
  /** The body may be NDJSON (`Content-Type: application/x-ndjson`): `body` is then the array of its lines' values. */
  readonly ndjson?: boolean;
  /** The endpoint takes Latch-Min-Revision (the queries and Read): transports pass it in `ApiRequest.minRevision`. */
  readonly minRevision?: boolean;
  /** `unknown` → validated input; throws AppError at the first violation (proto field order). */
  parse(req: ApiRequest): I;
  /**
   * Runs the operation. Every store-scoped service method throws store_id_not_found for an
   * unknown or deleted store (D2), so handlers do not look the store up themselves.
   */
  handle(input: I, ctx: CallContext): Promise<Reply | StreamReply>;
  /**
   * Optional: the same operation answered without a promise when the service can (a Check on a
   * warm store); undefined → the transport calls `handle`. Throws what `handle` rejects with.
   */
  handleSync?(input: I, ctx: CallContext): Reply | undefined;
}

/** Helper that keeps the input type of each endpoint while storing them in one table. */
export function endpoint<I>(e: Endpoint<I>): Endpoint<unknown> {
  return e as unknown as Endpoint<unknown>;
}

/** The input of an endpoint that reads nothing but the store of its path. */
interface StoreInput {
  readonly storeId: string;
}

/**
 * An endpoint whose only input is the `:store_id` of its path, validated as a field of the
 * `<name>Request` message (the message its violations name).
 */
export function storeEndpoint(e: Omit<Endpoint<StoreInput>, 'parse'>): Endpoint<unknown> {
  const message = `${e.name}Request`;
  return endpoint<StoreInput>({ ...e, parse: (req) => ({ storeId: storeId(req.params.store_id, message) }) });
}

export const EMPTY: readonly never[] = Object.freeze([]);

/** A reply with a body, status 200 unless given. */
export function ok(body: unknown, status = 200): Reply {
  return { status, body };
}

export const NO_CONTENT: Reply = Object.freeze({ status: 204 });

/** A 200 reply sent many times with the same body: encoded once, to UTF-8 bytes. */
export function constantReply(body: object): Reply {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  return Object.freeze({
    status: 200,
    body: Object.freeze(body),
    json: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
  });
}
