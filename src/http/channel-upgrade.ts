// Authentication of the msgpack channel's WebSocket upgrade. The credential is verified once at
// the upgrade (401 JSON and no socket when it fails); each request of each frame is then admitted
// with the same header (src/api/auth/gate.ts `admit`: a verified-token cache hit, so authorization,
// store binding, scope and rate limit apply per request, and an expired or revoked token stops
// working mid-connection).

import { ChannelLog } from '../api/auth/channel-log.js';
import type { Peer } from '../api/auth/authenticator.js';
import type { AuthService } from '../api/auth/service.js';
import { toAppError } from '../errors.js';
import { statusLine } from './status-line.js';
import type { HttpResponse } from './uws.js';

/** Answers the upgrade request with `err`'s status and body; no socket. */
export function refuseUpgrade(res: HttpResponse, err: unknown): void {
  const e = toAppError(err);
  res.cork(() => {
    res.writeStatus(statusLine(e.status));
    res.writeHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(e.toBody()), true);
  });
}

/**
 * Calls `upgrade` (synchronously when the token is cached) once `authorization` is a valid
 * credential, with the connection's store-log recorder (undefined when nothing is recorded) and
 * the client id;
 * otherwise answers the upgrade request with the auth error. No auth → upgrade.
 */
export function authenticateUpgrade(
  auth: AuthService | undefined,
  authorization: string | undefined,
  peer: Peer,
  res: HttpResponse,
  upgrade: (log: ChannelLog | undefined, clientId: string) => void,
): void {
  if (!auth) return upgrade(undefined, '');
  let verified;
  try {
    verified = auth.authenticator.verify(authorization, peer);
  } catch (err) {
    return refuseUpgrade(res, err);
  }
  if (!(verified instanceof Promise)) return upgrade(ChannelLog.for(auth, verified), verified.clientId);
  let aborted = false;
  res.onAborted(() => void (aborted = true));
  verified.then(
    (p) => {
      if (!aborted) res.cork(() => upgrade(ChannelLog.for(auth, p), p.clientId));
    },
    (err: unknown) => {
      if (!aborted) refuseUpgrade(res, err);
    },
  );
}
