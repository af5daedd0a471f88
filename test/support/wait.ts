// Waiting on signals in tests, never on a guessed duration.

import { expect, vi } from 'vitest';

/**
 * Resolves after every timer that was due when it was called has run: a timer of 0 ms is queued
 * behind the ones of 0 ms (Node clamps both to 1 ms) already scheduled, and timers of one duration
 * run in the order they were set. For asserting that a timer scheduled "for now" has fired.
 */
export function timersDue(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Resolves once the latch server at `base` reports at least `count` requests in flight on
 * /metrics (the scrape itself is not counted): for a test that needs a request to have reached
 * the server before it acts.
 */
export async function untilInFlight(base: string, count: number): Promise<void> {
  await vi.waitFor(
    async () => {
      const text = await (await fetch(`${base}/metrics`)).text();
      expect(Number(/^latch_http_requests_in_flight (\d+)$/m.exec(text)?.[1])).toBeGreaterThanOrEqual(count);
    },
    { timeout: 30_000, interval: 10 },
  );
}
