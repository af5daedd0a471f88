// Wiring: configuration → storage → service → HTTP server. `startServer` is what `latch serve`
// and the end-to-end tests run; it returns the bound port and a graceful `close()`.

import type { EngineConfig, Latch } from './engine/types.js';
import { openLatch } from './engine/service.js';
import { createHttpServer, type HttpServerOptions } from './http/server.js';
import { loadUws } from './http/uws.js';

export interface ServerOptions extends HttpServerOptions {
  /** Interface to bind (default 127.0.0.1). */
  readonly host?: string | undefined;
  /** TCP port (default 8080; 0 → any free port). */
  readonly port?: number | undefined;
  /** LevelDB directory; omitted (or `datastore: 'memory'`) → in-memory store. */
  readonly dataDir?: string | undefined;
  readonly datastore?: 'memory' | 'leveldb' | undefined;
  readonly engine?: Partial<EngineConfig> | undefined;
}

export interface RunningServer {
  readonly host: string;
  readonly port: number;
  readonly latch: Latch;
  /** HTTP and channel requests being processed now. */
  inFlight(): number;
  /** Stop accepting, finish in-flight requests, close connections, then close the service. */
  close(): Promise<void>;
}

export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  loadUws(); // fail before touching storage when no native uWS binary is available
  const host = options.host ?? '127.0.0.1';
  const path = options.datastore === 'memory' ? undefined : options.dataDir;
  const latch = await openLatch({ path, config: options.engine });
  const server = createHttpServer(latch, options);
  let port: number;
  try {
    port = await server.listen(host, options.port ?? 8080);
  } catch (err) {
    await server.close(0);
    await latch.close();
    throw err;
  }
  let closing: Promise<void> | undefined;
  return {
    host,
    port,
    latch,
    inFlight: server.inFlight,
    close() {
      closing ??= server.close().then(() => latch.close());
      return closing;
    },
  };
}
