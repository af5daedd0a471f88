// `POST /oauth/token` and `GET /.well-known/jwks.json` on the uWS app. The token body is bounded
// (64 KiB; past it the rest is dropped before the 400, as on every route) and the peer address
// feeds the failed-request budget. Token replies are `Cache-Control: no-store` (RFC 6749 §5.1:
// they carry a secret), the error replies written here too.

import { callerAddress } from './peer.js';
import type { AuthService } from '../api/auth/service.js';
import type { RawReply } from '../api/auth/token-endpoint.js';
import { logger } from '../log.js';
import { readBody, type DiscardBound } from './body.js';
import { statusLine } from './status-line.js';
import type { HttpResponse, TemplatedApp } from './uws.js';
import { endWhole } from './whole-reply.js';

const TOKEN_BODY_LIMIT = 64 * 1024;

function write(res: HttpResponse, state: { aborted: boolean }, r: RawReply, close = false): void {
  if (state.aborted) return;
  const head = (): void => {
    res.writeStatus(statusLine(r.status));
    for (const [k, v] of Object.entries(r.headers)) res.writeHeader(k, v);
  };
  endWhole(res, head, JSON.stringify(r.body), close);
}

const INTERNAL: RawReply = {
  status: 500,
  body: { error: 'server_error', error_description: 'internal error' },
  headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
};

const TOO_LARGE: RawReply = {
  status: 400,
  body: { error: 'invalid_request', error_description: 'body too large' },
  headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
};

export function mountAuthRoutes(
  app: TemplatedApp,
  auth: AuthService,
  discard: DiscardBound,
  trusted?: ReadonlySet<string>,
): void {
  app.get('/.well-known/jwks.json', (res) => write(res, { aborted: false }, auth.jwks()));
  app.post('/oauth/token', (res, req) => {
    const state = { aborted: false };
    res.onAborted(() => void (state.aborted = true));
    const contentType = req.getHeader('content-type');
    const authorization = req.getHeader('authorization') || undefined;
    const remoteAddress = callerAddress(
      Buffer.from(res.getRemoteAddressAsText()).toString('latin1'),
      trusted ? req.getHeader('x-forwarded-for') : '',
      trusted,
    );
    readBody(res, Number(req.getHeader('content-length') || 0), TOKEN_BODY_LIMIT, discard, (bytes) => {
      if (bytes === undefined) return write(res, state, TOO_LARGE, true);
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
