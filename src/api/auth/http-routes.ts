// `POST /oauth/token` and `GET /.well-known/jwks.json` mounted on the uWS app. Typed against the
// few uWS methods used (structurally), so src/api never imports src/http: the body reader is
// handed in. The token body is bounded (64 KiB; past it the rest is dropped before the 400, as on
// every route) and the peer address feeds the failed-request budget.

import type { AuthService } from './service.js';
import type { RawReply } from './token-endpoint.js';
import { logger } from '../../log.js';

interface Res {
  onAborted(cb: () => void): unknown;
  onData(cb: (chunk: ArrayBuffer, isLast: boolean) => void): unknown;
  cork(cb: () => void): unknown;
  writeStatus(status: string): unknown;
  writeHeader(key: string, value: string): unknown;
  end(body?: string, closeConnection?: boolean): unknown;
  getRemoteAddressAsText(): ArrayBuffer;
}

interface Req {
  getHeader(name: string): string;
}

/**
 * Calls `onBody` once with the whole body, or with `undefined` when it exceeds `limit` (then after
 * the rest was read and dropped, within a bound): src/http/body.ts `readBody`.
 */
export type BodyReader = (
  res: Res,
  announced: number,
  limit: number,
  onBody: (bytes: ArrayBuffer | Uint8Array | undefined) => void,
) => void;

interface App {
  post(pattern: string, handler: (res: Res, req: Req) => void): unknown;
  get(pattern: string, handler: (res: Res, req: Req) => void): unknown;
}

const TOKEN_BODY_LIMIT = 64 * 1024;
const STATUS: Record<number, string> = {
  200: '200 OK',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
};

function write(res: Res, state: { aborted: boolean }, r: RawReply, close = false): void {
  if (state.aborted) return;
  res.cork(() => {
    res.writeStatus(STATUS[r.status] ?? `${r.status} Error`);
    for (const [k, v] of Object.entries(r.headers)) res.writeHeader(k, v);
    res.end(JSON.stringify(r.body), close);
  });
}

const INTERNAL: RawReply = {
  status: 500,
  body: { error: 'server_error', error_description: 'internal error' },
  headers: { 'Content-Type': 'application/json' },
};

export function mountAuthRoutes(app: App, auth: AuthService, readBody: BodyReader): void {
  app.get('/.well-known/jwks.json', (res) => write(res, { aborted: false }, auth.jwks()));
  app.post('/oauth/token', (res, req) => {
    const state = { aborted: false };
    res.onAborted(() => void (state.aborted = true));
    const contentType = req.getHeader('content-type');
    const authorization = req.getHeader('authorization') || undefined;
    const remoteAddress = Buffer.from(res.getRemoteAddressAsText()).toString('utf8');
    readBody(res, Number(req.getHeader('content-length') || 0), TOKEN_BODY_LIMIT, (bytes) => {
      if (bytes === undefined) {
        return write(
          res,
          state,
          {
            status: 400,
            body: { error: 'invalid_request', error_description: 'body too large' },
            headers: { 'Content-Type': 'application/json' },
          },
          true,
        );
      }
      // Copied: the bytes may be uWS's memory, and the token work is asynchronous.
      const raw = Buffer.from(new Uint8Array(bytes));
      auth.issueToken({ contentType, raw, authorization, remoteAddress }).then(
        (r) => write(res, state, r),
        (err: unknown) => {
          logger.log('error', 'token endpoint failed', { cause: String(err) });
          write(res, state, INTERNAL);
        },
      );
    });
  });
}
