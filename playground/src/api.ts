// The playground's only way to latch: the public HTTP API on the page's own origin. Credentials
// (a preshared key, or a client id and secret exchanged for a token) live in this module's memory
// only — never in storage, cookies or the URL — and are gone when the tab closes.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

type Credential =
  | { kind: 'key'; key: string }
  | { kind: 'client'; id: string; secret: string; token?: string; expires?: number; pending?: Promise<string> };

let credential: Credential | undefined;

export function setKey(key: string): void {
  credential = { kind: 'key', key };
}

export function setClient(id: string, secret: string): void {
  credential = { kind: 'client', id, secret };
}

export function forget(): void {
  credential = undefined;
}

export function hasCredential(): boolean {
  return credential !== undefined;
}

/** The client's token: reused until 30 s before it expires; concurrent calls share one request. */
function token(c: Extract<Credential, { kind: 'client' }>): Promise<string> {
  if (c.token && (c.expires ?? 0) > Date.now() + 30_000) return Promise.resolve(c.token);
  c.pending ??= fetchToken(c).finally(() => {
    c.pending = undefined;
  });
  return c.pending;
}

async function fetchToken(c: Extract<Credential, { kind: 'client' }>): Promise<string> {
  const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: c.id, client_secret: c.secret });
  const res = await fetch('/oauth/token', {
    method: 'POST',
    body,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  });
  const json = (await res.json().catch(() => ({}))) as {
    access_token?: string;
    expires_in?: number;
    error?: string;
    error_description?: string;
  };
  if (!res.ok || !json.access_token)
    throw new ApiError(
      res.status,
      json.error ?? 'token_error',
      json.error_description ?? 'the token endpoint refused the client',
    );
  c.token = json.access_token;
  c.expires = Date.now() + (json.expires_in ?? 300) * 1000;
  return c.token;
}

async function authorization(): Promise<string | undefined> {
  if (!credential) return undefined;
  if (credential.kind === 'key') return `Bearer ${credential.key}`;
  return `Bearer ${await token(credential)}`;
}

/** An HTTP answer read to its end. */
interface Answer {
  readonly ok: boolean;
  readonly status: number;
  readonly text: string;
}

/** A request index.html started before this script loaded (its inline script): its key and answer. */
interface Early {
  readonly key: string;
  readonly answer: Promise<Answer>;
}
declare global {
  interface Window {
    latchEarly?: Early | undefined;
  }
}

/**
 * The answer of the request index.html started early, when this is that request (same method,
 * URL and body, and no credential: the early request had none). It is taken once.
 */
function early(method: string, url: string, body: string | undefined): Promise<Answer> | undefined {
  const e = window.latchEarly;
  if (!e || credential || e.key !== `${method} ${url} ${body ?? ''}`) return undefined;
  window.latchEarly = undefined;
  return e.answer;
}

async function send(url: string, init: RequestInit): Promise<Answer> {
  const res = await fetch(url, init);
  return { ok: res.ok, status: res.status, text: await res.text() };
}

/** One API call; any non-2xx answer becomes an ApiError with the server's code and message. */
export async function call<T>(
  method: string,
  path: string,
  body?: unknown,
  query?: Record<string, string | number | undefined>,
): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const auth = await authorization();
  if (auth) headers.Authorization = auth;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let url = path;
  if (query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== '') q.set(k, String(v));
    const s = q.toString();
    if (s) url += `?${s}`;
  }
  const payload = body === undefined ? undefined : JSON.stringify(body);
  let res: Answer;
  try {
    res = await (early(method, url, payload) ?? send(url, { method, headers, body: payload }));
  } catch (err) {
    throw new ApiError(0, 'network_error', `latch did not answer: ${String(err)}`);
  }
  const text = res.text;
  let json: unknown = undefined;
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
  }
  if (!res.ok) {
    const e = (json ?? {}) as { code?: unknown; message?: unknown };
    throw new ApiError(
      res.status,
      typeof e.code === 'string' ? e.code : `http_${res.status}`,
      typeof e.message === 'string' ? e.message : text.slice(0, 300),
    );
  }
  return json as T;
}

/** `code: message` of any error, for display where it happened. */
export function describe(err: unknown): string {
  if (err instanceof ApiError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

export const store = (id: string, rest = ''): string => `/stores/${encodeURIComponent(id)}${rest}`;

/**
 * A streamed call (NDJSON `{"result": …}` lines): `onLine` gets each result as it arrives. An error
 * answer before the stream, or an error line in it, rejects with an ApiError. Stops at `signal`.
 */
export async function stream(
  path: string,
  body: unknown,
  onLine: (result: Record<string, unknown>) => void,
  signal?: AbortSignal,
): Promise<void> {
  const headers: Record<string, string> = { Accept: 'application/json', 'Content-Type': 'application/json' };
  const auth = await authorization();
  if (auth) headers.Authorization = auth;
  let res: Response;
  try {
    res = await fetch(path, { method: 'POST', headers, body: JSON.stringify(body), signal });
  } catch (err) {
    throw new ApiError(0, 'network_error', `latch did not answer: ${String(err)}`);
  }
  if (!res.ok || !res.body) {
    const text = await res.text();
    let e: { code?: unknown; message?: unknown } = {};
    try {
      e = JSON.parse(text) as typeof e;
    } catch {
      // not JSON: the text is the message
    }
    throw new ApiError(
      res.status,
      typeof e.code === 'string' ? e.code : `http_${res.status}`,
      typeof e.message === 'string' ? e.message : text.slice(0, 300),
    );
  }
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n')) {
      const line = JSON.parse(buf.slice(0, nl)) as { result?: Record<string, unknown>; error?: { message?: string } };
      buf = buf.slice(nl + 1);
      if (line.result) onLine(line.result);
      else throw new ApiError(res.status, 'stream_error', line.error?.message ?? 'the stream failed');
    }
  }
}
