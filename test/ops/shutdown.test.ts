// SIGTERM under a write load: the server stops accepting, finishes what it acknowledged, closes
// the store and exits 0 once drained; restarted on the same directory, every write it answered
// 2xx is there. A request that never finishes is cut off at --shutdown-timeout.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { untilInFlight } from '../support/wait.js';
import { DOC_MODEL, json, readAll, startLatch as start, type LatchProcess } from './process.js';

const dir = mkdtempSync(path.join(tmpdir(), 'latch-shutdown-'));
const started: LatchProcess[] = [];
const startLatch = async (args: readonly string[]): Promise<LatchProcess> => {
  const p = await start(args);
  started.push(p);
  return p;
};
afterAll(async () => {
  // A test that failed half-way leaves no server behind (the first one waits 10 min to drain).
  for (const p of started) if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGKILL');
  await Promise.all(started.map((p) => p.exited));
  rmSync(dir, { recursive: true, force: true });
});

describe('graceful shutdown', () => {
  it('SIGTERM mid-load: exit 0 once drained, no acknowledged write lost', async () => {
    // A grace period longer than this test's timeout (vitest.config.ts): exit 0 in time means the
    // in-flight requests finished, not that the grace period ran out on them.
    const first = await startLatch(['--data-dir', dir, '--shutdown-timeout', '600000']);
    const store = (await json(first.base, 'POST', '/stores', { name: 'shutdown' })).body.id as string;
    expect((await json(first.base, 'POST', `/stores/${store}/authorization-models`, DOC_MODEL)).status).toBe(201);

    const acked: string[] = [];
    let stopped = false;
    let next = 0;
    const writer = async (w: number): Promise<void> => {
      while (!stopped) {
        const i = next++;
        const key = { user: `user:u${w}`, relation: 'viewer', object: `doc:d${i}` };
        try {
          const r = await json(first.base, 'POST', `/stores/${store}/write`, { writes: { tuple_keys: [key] } });
          // Anything else (refused while draining) is not acknowledged, so owes nothing.
          if (r.status === 200) acked.push(`${key.object}#viewer@${key.user}`);
        } catch {
          return; // connection refused or reset: the server is gone
        }
      }
    };
    const writers = Array.from({ length: 48 }, (_, w) => writer(w));
    await vi.waitFor(() => expect(acked.length).toBeGreaterThanOrEqual(300), { timeout: 60_000, interval: 20 });
    // One more write whose body is still arriving when the signal lands, so that shutdown always
    // begins with a request in flight: the writers alone can all be between requests at that
    // moment (their answers sent, this process not yet scheduled to send the next ones). Its body
    // is finished once the server has logged the start of shutdown; drained, it must be kept.
    const encoder = new TextEncoder();
    let finishBody = (): void => undefined;
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(encoder.encode('{"writes":{"tuple_keys":['));
        finishBody = () => {
          c.enqueue(encoder.encode('{"user":"user:late","relation":"viewer","object":"doc:late"}]}}'));
          c.close();
        };
      },
    });
    const late = fetch(`${first.base}/stores/${store}/write`, {
      method: 'POST',
      body,
      duplex: 'half',
    } as RequestInit).then(
      (r) => r.status,
      () => 0,
    );
    await untilInFlight(first.base, 1); // its headers reached the server
    first.proc.kill('SIGTERM');
    await vi.waitFor(() => expect(first.stderr()).toContain('"msg":"shutting down"'), { timeout: 60_000, interval: 5 });
    finishBody();
    const lateStatus = await late;
    expect(lateStatus).toBe(200); // in flight when shutdown began: finished, not refused
    acked.push('doc:late#viewer@user:late');
    const code = await first.exited;
    stopped = true;
    await Promise.all(writers);
    expect(code).toBe(0);
    expect(first.stderr()).toContain('"msg":"latch stopped"');
    // The signal landed mid-load: requests were in flight when shutdown began (the late write at least).
    const inFlight = Number(/"msg":"shutting down"[^\n]*"in_flight":(\d+)/.exec(first.stderr())?.[1]);
    expect(inFlight).toBeGreaterThan(0);

    const second = await startLatch(['--data-dir', dir]);
    try {
      const stored = await readAll(second.base, store);
      const lost = acked.filter((k) => !stored.has(k));
      expect(lost).toEqual([]);
      expect(stored.size).toBeGreaterThanOrEqual(acked.length);
      // The checkpointed index answers for them too, not only the storage scan.
      const sample = acked[acked.length - 1] as string;
      const [object, rest] = sample.split('#') as [string, string];
      const check = await json(second.base, 'POST', `/stores/${store}/check`, {
        tuple_key: { object, relation: 'viewer', user: rest.split('@')[1] },
      });
      expect(check.body.allowed).toBe(true);
    } finally {
      second.proc.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    }
    // Refusing requests while draining is expected, not a failure worth an error line.
    expect(first.stderr()).not.toContain('"level":"error"');
  });

  it('a request that never finishes does not hold shutdown past --shutdown-timeout', async () => {
    const p = await startLatch(['--datastore', 'memory', '--shutdown-timeout', '1000']);
    // A body that never ends: the request stays in flight until the server gives up on it.
    const body = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(new TextEncoder().encode('{"name":')) });
    const stuck = fetch(`${p.base}/stores`, { method: 'POST', body, duplex: 'half' } as RequestInit).then(
      (r) => r.status,
      () => 'cut off',
    );
    await untilInFlight(p.base, 1);
    const signalled = Date.now();
    p.proc.kill('SIGTERM');
    expect(await p.exited).toBe(0);
    // The body never ends: the exit itself shows the server stopped waiting for it.
    expect(Date.now() - signalled).toBeGreaterThanOrEqual(900);
    expect(p.stderr()).toMatch(/"msg":"shutting down"[^\n]*"in_flight":1/);
    expect(await stuck).toBe('cut off');
  });
});
