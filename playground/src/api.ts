// The playground's only way to latch: the public HTTP API on the page's own origin, through the
// one JSON client it shares with the `latch` command (src/client/json.ts: the same error codes and
// token sharing). Credentials (a preshared key, or a client id and secret exchanged for a token)
// live in this module's memory only — never in storage, cookies or the URL — and are gone when the
// tab closes.

import { ApiError, Credentials, JsonClient, queryString } from '../../src/client/json.js';

export { ApiError };

const credentials = new Credentials();

export function setKey(key: string): void {
  credentials.set({ kind: 'token', token: key });
}

export function setClient(id: string, secret: string): void {
  credentials.set({ kind: 'client', clientId: id, clientSecret: secret, tokenUrl: '/oauth/token' });
}

export function forget(): void {
  credentials.set(undefined);
}

export function hasCredential(): boolean {
  return credentials.present;
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
  if (!e || credentials.present || e.key !== `${method} ${url} ${body ?? ''}`) return undefined;
  window.latchEarly = undefined;
  return e.answer;
}

/** fetch, except for the one request index.html already started. */
function fetchOrEarly(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  const body = typeof init?.body === 'string' ? init.body : undefined;
  const answer = early(init?.method ?? 'GET', String(input), body);
  if (!answer) return fetch(input, init);
  // A null-body status (204, 304) cannot carry a body, not even an empty one.
  return answer.then((a) => new Response(a.text === '' ? null : a.text, { status: a.status }));
}

const client = new JsonClient({ baseUrl: '', credentials, fetch: fetchOrEarly });

/** One API call; any non-2xx answer becomes an ApiError with the server's code and message. */
export function call<T>(
  method: string,
  path: string,
  body?: unknown,
  query?: Record<string, string | number | undefined>,
): Promise<T> {
  return client.call<T>(method, query ? path + queryString(query) : path, body);
}

/** `code: message` of any error, for display where it happened. */
export function describe(err: unknown): string {
  if (err instanceof ApiError) return `${err.code}: ${err.reason}`;
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
  for await (const result of client.stream('POST', path, body, signal)) onLine(result);
}
