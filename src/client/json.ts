// The one JSON client of latch's HTTP API on `fetch`, shared by the `latch` command and the browser
// playground: one error type with one set of fallback codes, one credential holder (a static
// bearer token, or OAuth2 client credentials whose token is shared by concurrent calls and reused
// until shortly before it expires), one reader of streamed (NDJSON `{"result": …}`) replies.
// It imports nothing (it runs in Node and in the browser); callers add the typed endpoints.

/** Any failed call: the HTTP status (0 when latch was not reached), the catalog code and message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    /** The server's message (or this client's, for the fallback codes). */
    readonly reason: string,
  ) {
    super(`${status} ${code}: ${reason}`);
  }
}

/**
 * The codes this client gives a failure the server did not describe with a `{code, message}` body.
 * The same in every build, so callers and tests branch on them, never on message text.
 */
export const FallbackCode = {
  /** fetch failed: nothing answered at the URL (status 0). */
  unreachable: 'connection_failed',
  /** A non-2xx answer without a JSON `code` (a proxy's HTML page, a bare status). */
  httpError: 'http_error',
  /** A 2xx answer whose body is not JSON. */
  invalidResponse: 'invalid_response',
  /** An error line in a streamed reply that carries no code. */
  streamError: 'stream_error',
  /** The token endpoint refused the client without an OAuth2 `error` code. */
  tokenRequestFailed: 'token_request_failed',
} as const;

/** A credential: a static bearer token, or an OAuth2 client exchanged at `tokenUrl` for a token. */
type Credential =
  | { readonly kind: 'token'; readonly token: string }
  | {
      readonly kind: 'client';
      readonly clientId: string;
      readonly clientSecret: string;
      /** The token endpoint: absolute, or relative to the page (the browser). */
      readonly tokenUrl: string;
      readonly audience?: string | undefined;
    };

/** Seconds before `expires_in` elapses at which a token is fetched anew. */
const TOKEN_MARGIN_S = 30;
/** `expires_in` assumed when the token endpoint does not say. */
const DEFAULT_TTL_S = 300;

/**
 * The credential of one client, in memory only. A client credential's token is fetched on first
 * use, shared by concurrent calls (one token request in flight), and reused until 30 s before it
 * expires. `now` is injectable for tests.
 */
export class Credentials {
  private credential: Credential | undefined;
  private token: { value: string; expires: number } | undefined;
  private pending: Promise<string> | undefined;

  constructor(
    credential?: Credential,
    private readonly fetchFn: typeof fetch = (input, init) => fetch(input, init),
    private readonly now: () => number = Date.now,
  ) {
    this.credential = credential;
  }

  /** Replaces the credential (undefined forgets it) and drops any token of the previous one. */
  set(credential: Credential | undefined): void {
    this.credential = credential;
    this.token = undefined;
    this.pending = undefined;
  }

  get present(): boolean {
    return this.credential !== undefined;
  }

  /** The `Authorization` header value, or undefined without a credential. */
  async authorization(): Promise<string | undefined> {
    const c = this.credential;
    if (!c) return undefined;
    if (c.kind === 'token') return `Bearer ${c.token}`;
    if (this.token && this.now() < this.token.expires) return `Bearer ${this.token.value}`;
    const pending = (this.pending ??= this.fetchToken(c).finally(() => {
      if (this.pending === pending) this.pending = undefined;
    }));
    return `Bearer ${await pending}`;
  }

  /** OAuth2 client-credentials grant, form-encoded as the official SDKs send it. */
  private async fetchToken(c: Extract<Credential, { kind: 'client' }>): Promise<string> {
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: c.clientId,
      client_secret: c.clientSecret,
    });
    if (c.audience) form.set('audience', c.audience);
    let res: Response;
    try {
      res = await this.fetchFn(c.tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form,
      });
    } catch {
      throw new ApiError(0, FallbackCode.unreachable, `cannot reach token issuer ${c.tokenUrl}`);
    }
    const body = (await res.json().catch(() => ({}))) as {
      access_token?: unknown;
      expires_in?: unknown;
      error?: unknown;
      error_description?: unknown;
    };
    if (!res.ok || typeof body.access_token !== 'string' || body.access_token === '') {
      throw new ApiError(
        res.status,
        typeof body.error === 'string' ? body.error : FallbackCode.tokenRequestFailed,
        typeof body.error_description === 'string' ? body.error_description : 'no access_token in the response',
      );
    }
    const ttl = typeof body.expires_in === 'number' ? body.expires_in : DEFAULT_TTL_S;
    if (this.credential === c)
      this.token = { value: body.access_token, expires: this.now() + Math.max(0, ttl - TOKEN_MARGIN_S) * 1000 };
    return body.access_token;
  }
}

/** The token endpoint of an issuer given as a host (`auth.fga.dev`) or URL: `https://` and `/oauth/token` added when missing. */
export function tokenUrlOf(issuer: string): string {
  const url = /^https?:\/\//.test(issuer) ? issuer : `https://${issuer}`;
  return new URL(url).pathname === '/' ? new URL('/oauth/token', url).toString() : url;
}

/** `?a=1&b=x` of the defined, non-empty parameters; '' when there are none. */
export function queryString(params: Readonly<Record<string, string | number | undefined>>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

interface JsonClientOptions {
  /** Prefix of every path: `http://host:port`, or '' for the page's own origin. */
  readonly baseUrl: string;
  readonly credentials?: Credentials | undefined;
  /** The fetch to use (the playground answers its first request from one started early). */
  readonly fetch?: typeof fetch | undefined;
}

/** A request body sent as it is, not as JSON: its bytes, their content type and extra headers. */
export class RawBody {
  constructor(
    readonly bytes: Uint8Array,
    readonly contentType: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {}
}

/** One JSON call or stream at a time per method call; any non-2xx answer throws ApiError. */
export class JsonClient {
  readonly credentials: Credentials;
  private readonly base: string;
  private readonly fetchFn: typeof fetch;

  constructor(options: JsonClientOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.fetchFn = options.fetch ?? ((input, init) => fetch(input, init));
    this.credentials = options.credentials ?? new Credentials();
  }

  /**
   * One call: `body` sent as JSON when given (a RawBody as it is); the parsed JSON answer (`{}`
   * for an empty one).
   * `onHeaders` sees a successful answer's headers.
   */
  async call<T>(method: string, path: string, body?: unknown, onHeaders?: (headers: Headers) => void): Promise<T> {
    const res = await this.request(method, path, body);
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : {};
    } catch {
      json = undefined;
    }
    if (!res.ok) throw errorOf(res.status, json, text);
    if (json === undefined)
      throw new ApiError(res.status, FallbackCode.invalidResponse, `not JSON: ${text.slice(0, 200)}`);
    onHeaders?.(res.headers);
    return json as T;
  }

  /**
   * A streamed reply: each `{"result": …}` line's result as it arrives. An error answer before the
   * stream, or an error line in it, throws ApiError. Stops at `signal`.
   */
  async *stream(
    method: string,
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): AsyncGenerator<Record<string, unknown>> {
    const res = await this.request(method, path, body, signal);
    if (!res.ok || !res.body) {
      const text = await res.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      throw errorOf(res.status, json, text);
    }
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n')) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.trim() === '') continue;
          const parsed = parseLine(res.status, line);
          if (parsed.result) yield parsed.result;
          else throw lineError(res.status, parsed);
        }
      }
      if (buf.trim() !== '') {
        const parsed = parseLine(res.status, buf);
        if (parsed.result) yield parsed.result;
        else throw lineError(res.status, parsed);
      }
    } finally {
      reader.releaseLock();
    }
  }

  private async request(method: string, path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
    const raw = body instanceof RawBody ? body : undefined;
    const headers: Record<string, string> = { accept: 'application/json', ...raw?.headers };
    if (body !== undefined) headers['content-type'] = raw ? raw.contentType : 'application/json';
    const auth = await this.credentials.authorization();
    if (auth) headers.authorization = auth;
    try {
      return await this.fetchFn(this.base + path, {
        method,
        headers,
        // A Uint8Array is a valid fetch body; DOM's BodyInit type only names ArrayBuffer-backed views.
        body: raw ? (raw.bytes as Uint8Array<ArrayBuffer>) : body === undefined ? undefined : JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      if (signal?.aborted) throw err;
      const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
      throw new ApiError(0, FallbackCode.unreachable, `cannot reach ${this.base || 'latch'}${cause}`);
    }
  }
}

/** The ApiError of a non-2xx answer: the body's `code` and `message` when it has them. */
function errorOf(status: number, json: unknown, text: string): ApiError {
  const o = (typeof json === 'object' && json !== null ? json : {}) as { code?: unknown; message?: unknown };
  return new ApiError(
    status,
    typeof o.code === 'string' ? o.code : FallbackCode.httpError,
    typeof o.message === 'string' ? o.message : text.slice(0, 200),
  );
}

/** A line of a streamed reply, parsed. */
export interface StreamLine {
  result?: Record<string, unknown>;
  error?: { code?: unknown; message?: unknown; details?: unknown };
  code?: unknown;
  message?: unknown;
}

/** One line of a streamed reply as a JSON object (or array); anything else is `invalid_response`. */
export function parseLine(status: number, line: string): StreamLine {
  try {
    const parsed = JSON.parse(line) as unknown;
    if (typeof parsed === 'object' && parsed !== null) return parsed as StreamLine;
  } catch {
    // reported below
  }
  throw new ApiError(status, FallbackCode.invalidResponse, `not a JSON line: ${line.slice(0, 200)}`);
}

/**
 * An error line (`{"error": {code, message, details}}`, whose catalog code is a string `code` or
 * a google.rpc.ErrorInfo `reason` in `details`) or a plain error object as an ApiError.
 */
export function lineError(status: number, line: StreamLine): ApiError {
  const code =
    typeof line.error?.code === 'string'
      ? line.error.code
      : (reasonOf(line.error?.details) ?? (typeof line.code === 'string' ? line.code : FallbackCode.streamError));
  const message =
    typeof line.error?.message === 'string'
      ? line.error.message
      : typeof line.message === 'string'
        ? line.message
        : 'the stream failed';
  return new ApiError(status, code, message);
}

/** The `reason` of the first google.rpc.ErrorInfo in an error's details. */
function reasonOf(details: unknown): string | undefined {
  if (!Array.isArray(details)) return undefined;
  for (const d of details as unknown[]) {
    const r = (d as { reason?: unknown } | null)?.reason;
    if (typeof r === 'string' && r !== '') return r;
  }
  return undefined;
}
