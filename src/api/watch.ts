// Watch (`GET /stores/{store_id}/watch`, a latch extension, docs/reference/decisions.md D15): a store's changes from a
// ReadChanges continuation token or a start time, then live ones, one JSON line each, framed like
// StreamedListObjects (§4.18): `{"result": {"change": {…}, "continuation_token": "…"}}` and
// `{"result": {"heartbeat": {"continuation_token": "…", "timestamp": "…"}}}`. Every token is a
// ReadChanges token: it resumes right after its change, on Watch or on ReadChanges alike.

import type { WatchEvent, WatchInput } from '../engine/contract.js';
import { endpoint, type Endpoint } from './endpoint.js';
import { changeOut } from './render.js';
import { queryText } from './stores.js';
import type { TokenCodec } from './tokens.js';
import { changesCursor, startTime } from './tuples.js';
import { P, int32, match, storeId, tokenText, violation } from './validate.js';

/** Heartbeats: at least this often the stream proves it is alive (and keeps idle proxies and uWS's 10 s HTTP idle timer quiet). */
export const HEARTBEAT_MS = { min: 100, max: 8000, default: 5000 } as const;

interface WatchRequest extends Omit<WatchInput, 'after'> {
  readonly token: string;
}

function heartbeat(v: unknown): number {
  const n = int32(v, 'heartbeat_ms');
  if (n === undefined) return HEARTBEAT_MS.default;
  if (n < HEARTBEAT_MS.min || n > HEARTBEAT_MS.max) {
    throw violation(
      'WatchRequest',
      'HeartbeatMs',
      `value must be inside range [${HEARTBEAT_MS.min}, ${HEARTBEAT_MS.max}]`,
    );
  }
  return n;
}

/** Each event as its line's `result`, with the ReadChanges token of where the stream stands. */
async function* render(
  events: AsyncIterable<WatchEvent>,
  tokens: TokenCodec,
  storeId: string,
  filter: string,
): AsyncGenerator<unknown> {
  const token = (cursor: string | undefined): string =>
    cursor === undefined ? '' : tokens.encode('changes', { storeId, filter, cursor });
  for await (const e of events) {
    if (e.kind === 'change') yield { change: changeOut(e.change), continuation_token: token(e.cursor) };
    else yield { heartbeat: { continuation_token: token(e.cursor), timestamp: new Date().toISOString() } };
  }
}

const watch = endpoint<WatchRequest>({
  name: 'Watch',
  op: 'watch',
  method: 'get',
  path: '/stores/:store_id/watch',
  streaming: true,
  parse(req) {
    const store = storeId(req.params.store_id, 'WatchRequest');
    const type = match(queryText(req, 'type'), P.changesType, 'WatchRequest', 'Type', true);
    const token = tokenText(req.query('continuation_token'), 'WatchRequest');
    const start = startTime(queryText(req, 'start_time'), 'WatchRequest');
    return {
      storeId: store,
      type: type || undefined,
      token,
      startTime: start,
      heartbeatMs: heartbeat(req.query('heartbeat_ms')),
    };
  },
  async handle(input, ctx) {
    const after = changesCursor(ctx.tokens, input);
    const events = ctx.latch.watch({ ...input, after, startTime: after ? undefined : input.startTime }, ctx.signal);
    return { stream: render(events, ctx.tokens, input.storeId, input.type ?? ''), live: true };
  },
});

export const WATCH_ENDPOINTS: readonly Endpoint[] = [watch];
