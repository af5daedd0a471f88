// Live streams (Watch) on the msgpack channel: each item goes out as its own answer
// `{id, status: 200, body: {result: item}, more: true}`, and one last answer without `more` ends
// the stream: `{id, status: 200, body: {cancelled: true}}` after a `cancel` request, or an error
// answer (the store was deleted, the consumer stalled, the server is shutting down, the stream
// reached its lifetime or its credential was revoked or expired).
// Flow control: while the connection has more unsent bytes than its limit the stream waits for a
// drain (holding one item); a connection that does not drain for the stall limit ends the stream
// with `resource_exhausted`, so a slow consumer never makes the server buffer more.

import { AppError } from '../errors.js';
import type { Answer, RequestId } from './channel-answer.js';

export interface LiveSink {
  /** Queues an answer that does not finish the request (sent with the connection's next frame). */
  send(answer: Answer): void;
  /** Sends the queued answers now, as one frame. */
  flush(): void;
  /** Answer bytes of the connection not yet sent. */
  buffered(): number;
  /** True on the connection's next drain (or when it closed), false after `ms` without one. */
  drained(ms: number): Promise<boolean>;
}

interface LiveLimits {
  /** Unsent bytes above which the stream waits for a drain. */
  readonly maxBuffered: number;
  /** How long it waits before it ends the stream (ms). */
  readonly stallMs: number;
}

/** Items queued between two looks at the socket's unsent bytes. */
const FLUSH_EVERY = 64;

/**
 * Why a live stream was stopped from outside (null: it was not): cancelled by its client, or an
 * error its last answer carries (shutdown, lifetime, a revoked or expired credential: ./live-streams.ts).
 */
export type StopReason = 'cancelled' | AppError | null;

/**
 * Sends `items` as `more` answers until they end, fail or `stopped()` says why; returns the last
 * answer. An error of the stream itself is thrown (the caller answers it like any request error).
 */
export async function pumpLive(
  sink: LiveSink,
  id: RequestId,
  items: AsyncIterable<unknown>,
  limits: LiveLimits,
  stopped: () => StopReason,
): Promise<Answer> {
  const it = items[Symbol.asyncIterator]();
  for (let sent = 1; ; sent++) {
    const next = await it.next();
    const reason = stopped();
    if (reason !== null) {
      await it.return?.();
      if (reason === 'cancelled') return { id, status: 200, body: { cancelled: true } };
      return { id, status: reason.status, error: reason.toBody() };
    }
    if (next.done) return { id, status: 200, body: { done: true } };
    sink.send({ id, status: 200, body: { result: next.value }, more: true });
    // A backlog arrives without a macrotask in between: every FLUSH_EVERY items the queued answers
    // go out and the socket's unsent bytes are looked at, so at most that many wait in the queue.
    if (sent % FLUSH_EVERY !== 0) continue;
    sink.flush();
    if (sink.buffered() > limits.maxBuffered && !(await sink.drained(limits.stallMs))) {
      await it.return?.();
      const e = new AppError(
        'resource_exhausted',
        `the consumer read nothing for ${limits.stallMs} ms; resume from its last continuation_token`,
      );
      return { id, status: e.status, error: e.toBody() };
    }
  }
}
