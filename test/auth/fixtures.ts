// Fixtures of the server-level auth tests: a real latch server on 127.0.0.1 in client-credentials
// mode (its own issuer and region URL), a fetch wrapper, and tokens minted with the server's
// real signing key for a principal of chosen store and scopes.

import { createServer } from 'node:net';
import type { JWTPayload } from 'jose';
import { startServer, type RunningServer, type ServerOptions } from '../../src/main.js';
import type { AuthConfig } from '../../src/api/auth/config.js';
import { SCOPES } from '../../src/api/auth/operations.js';

export interface Res {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: { code?: string; message?: string; [k: string]: unknown } | undefined;
}

export async function call(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Res> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (typeof body === 'string') init.body = body;
  else if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const r = await fetch(base + path, init);
  const text = await r.text();
  let json: Res['json'];
  try {
    json = text ? (JSON.parse(text) as Res['json']) : undefined;
  } catch {
    json = undefined;
  }
  return { status: r.status, headers: r.headers, text, json };
}

/** Like `call` for a stream that never ends by itself: the status, headers and first line, then the request is aborted. */
export async function callLive(
  base: string,
  method: string,
  path: string,
  /** Same signature as `call`; a live stream is a GET, so no body is sent. */
  _body?: unknown,
  headers: Record<string, string> = {},
): Promise<Res> {
  const abort = new AbortController();
  const r = await fetch(base + path, { method, headers, signal: abort.signal });
  let text = '';
  const dec = new TextDecoder();
  try {
    for await (const chunk of r.body as ReadableStream<Uint8Array>) {
      text += dec.decode(chunk, { stream: true });
      if (text.includes('\n')) break;
    }
  } finally {
    abort.abort();
  }
  text = text.slice(0, text.indexOf('\n') + 1);
  return { status: r.status, headers: r.headers, text, json: JSON.parse(text) as Res['json'] };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export interface AuthServer extends RunningServer {
  readonly base: string;
  /** The region base URL + '/' (the `aud` of every valid token). */
  readonly audience: string;
  /** A token of the server's real key for a principal bound to `store` with `scopes`. */
  mint(store: string | undefined, scopes: readonly string[], extra?: JWTPayload): Promise<string>;
  /** A client registered for minted tokens (its id is their `sub`). */
  readonly clientId: string;
}

export const ALL_SCOPES: readonly string[] = SCOPES;

/** A client-credentials server whose issuer and audience are its own URL. */
export async function startAuthServer(
  auth: Partial<AuthConfig> = {},
  options: ServerOptions = {},
): Promise<AuthServer> {
  const port = options.port ?? (await freePort());
  const base = `http://127.0.0.1:${port}`;
  const server = await startServer({
    host: '127.0.0.1',
    port,
    datastore: 'memory',
    ...options,
    auth: { mode: 'client-credentials', issuer: base, audience: base, ...auth } as AuthConfig,
  });
  const { client } = await server.auth.clients!.create({
    storeId: '*',
    scopes: [...ALL_SCOPES],
    name: 'minted tokens',
  });
  const mint = async (
    store: string | undefined,
    scopes: readonly string[],
    extra: JWTPayload = {},
  ): Promise<string> => {
    const now = Math.floor(Date.now() / 1000);
    const claims: JWTPayload = {
      iss: base,
      sub: client.id,
      aud: `${base}/`,
      iat: now,
      exp: now + 600,
      client_id: client.id,
      scope: scopes.join(' '),
      ...extra,
    };
    if (store !== undefined) claims.store_id = store;
    return server.auth.keys!.sign(claims);
  };
  return Object.assign(server, { base, audience: `${base}/`, mint, clientId: client.id });
}

/** A small model: user; doc with viewer [user]. */
export const MODEL = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'doc',
      relations: { viewer: { this: {} } },
      metadata: { relations: { viewer: { directly_related_user_types: [{ type: 'user' }] } } },
    },
  ],
};

export const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });
