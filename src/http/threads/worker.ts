// An HTTP thread of `latch serve --http-threads N`: its own uWS app on the shared API port (the
// kernel spreads connections across the threads), the same routes, parsers, renderers, auth gate
// and channel as the main thread's app, over a `RemoteLatch` that forwards every operation to the
// main thread's one engine. It ends when the main thread asks it to close.

import { parentPort, workerData } from 'node:worker_threads';
import { openAuth, type AuthConfig } from '../../api/auth/index.js';
import type { EngineConfig, EngineStats } from '../../engine/contract.js';
import { configureLogging, logger, type LogSettings } from '../../log.js';
import { createHttpServer, type HttpServerOptions } from '../server.js';
import type { ToThread } from './protocol.js';
import { RemoteLatch } from './remote-latch.js';
import type { LocalCheckData } from './local-check.js';
import { adoptMemory } from '../../index/memory.js';
import { MetricsShare } from '../metrics-share.js';
import { collectGarbage } from '../../domain/gc.js';

/** What the main thread hands each HTTP thread (plain data: it is cloned). */
export interface ThreadData {
  readonly host: string;
  readonly port: number;
  readonly http: Omit<HttpServerOptions, 'auth' | 'metricsAddress' | 'sharedPort'>;
  readonly auth: AuthConfig;
  readonly config: EngineConfig;
  readonly stats: EngineStats;
  readonly log: LogSettings;
  /** Check from the shared index on this thread (absent: every operation is forwarded). */
  readonly local?: LocalCheckData | undefined;
}

/** Sent to the main thread: listening, failed to start, or closed. */
export type ThreadEvent =
  { readonly t: 'listening' } | { readonly t: 'failed'; readonly message: string } | { readonly t: 'closed' };

async function main(port: NonNullable<typeof parentPort>, data: ThreadData): Promise<void> {
  configureLogging(data.log);
  // Before anything reads the shared memory: this thread reads the main thread's, never allocates.
  if (data.local) adoptMemory(data.local.memory);
  const counted = data.http.threadMetrics;
  const counts = counted && new MetricsShare(counted.share, counted.thread).extras;
  const latch = new RemoteLatch(port, data.config, data.stats, data.local, counts);
  let closing = false;
  port.on('message', (m: readonly ToThread[] | ToThread) => {
    if (!Array.isArray(m)) {
      if ((m as ToThread).t === 'close' && !closing) {
        closing = true;
        void close((m as { graceMs: number }).graceMs);
      }
      return;
    }
    latch.receive(m);
  });
  const auth = await openAuth({ config: data.auth, host: data.host });
  const server = createHttpServer(latch, { ...data.http, auth, sharedPort: 'bind' });
  // The garbage of compiling and running the bundle and building the app (≈ 2 MB): under load V8
  // collects a thread's old generation only once it has grown 8 MB past its size at start, which
  // takes minutes, and until then it stays resident. Measured (compiled, `--trace-gc`): the
  // thread's heap 8.3 MB used / 10.3 MB committed → 6.7 / 8.0 MB, once, before any request
  // (bench/README.md, "HTTP threads").
  collectGarbage();
  try {
    await server.listen(data.host, data.port);
  } catch (err) {
    await auth.close();
    throw err;
  }
  const event: ThreadEvent = { t: 'listening' };
  port.postMessage(event);

  async function close(graceMs: number): Promise<void> {
    await server.close(graceMs);
    await auth.close();
    logger.flush();
    const done: ThreadEvent = { t: 'closed' };
    port.postMessage(done);
    port.close();
  }
}

if (parentPort) {
  const port = parentPort;
  main(port, workerData as ThreadData).catch((err: unknown) => {
    const failed: ThreadEvent = { t: 'failed', message: err instanceof Error ? err.message : String(err) };
    port.postMessage(failed);
    port.close();
  });
}
