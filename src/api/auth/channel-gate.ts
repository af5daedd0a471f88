// Authentication of the msgpack channel's WebSocket upgrade. The credential is verified once at
// the upgrade (401 JSON and no socket when it fails); each request of each frame is then admitted
// with the same header through `admit` (a verified-token cache hit: authorization, store binding,
// scope and rate limit per request, and an expired or revoked token stops working mid-connection).

import { toAppError } from '../../errors.js';
import type { Peer } from './authenticator.js';
import type { AuthService } from './service.js';

interface UpgradeRes extends Peer {
  onAborted(cb: () => void): unknown;
  cork(cb: () => void): unknown;
  writeStatus(status: string): unknown;
  writeHeader(key: string, value: string): unknown;
  end(body?: string, closeConnection?: boolean): unknown;
}

const STATUS: Record<number, string> = { 401: '401 Unauthorized', 403: '403 Forbidden', 429: '429 Too Many Requests', 500: '500 Internal Server Error' };

function refuse(res: UpgradeRes, err: unknown): void {
  const e = toAppError(err);
  res.cork(() => {
    res.writeStatus(STATUS[e.status] ?? `${e.status} Error`);
    res.writeHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(e.toBody()), true);
  });
}

/**
 * Calls `upgrade` (synchronously when the token is cached) once `authorization` is a valid
 * credential; otherwise answers the upgrade request with the auth error. No auth → upgrade.
 */
export function authenticateUpgrade(auth: AuthService | undefined, authorization: string | undefined, res: UpgradeRes, upgrade: () => void): void {
  if (!auth) return upgrade();
  let verified;
  try {
    verified = auth.authenticator.verify(authorization, res);
  } catch (err) {
    return refuse(res, err);
  }
  if (!(verified instanceof Promise)) return upgrade();
  let aborted = false;
  res.onAborted(() => void (aborted = true));
  verified.then(
    () => {
      if (!aborted) res.cork(upgrade);
    },
    (err: unknown) => {
      if (!aborted) refuse(res, err);
    },
  );
}
