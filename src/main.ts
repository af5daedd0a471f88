// Wiring: configuration → storage → service → HTTP server. `startServer` is what `latch serve`
// and the end-to-end tests run; it returns the bound port and a graceful `close()`.

import { openAuth, type AuthConfig, type AuthService } from './api/auth/index.js';
import { resolveAuthConfig } from './api/auth/config.js';
import { DecisionLog, type DecisionLogConfig } from './api/decisions/log.js';
import type { EngineConfig, Latch } from './engine/contract.js';
import { openLatch } from './engine/service.js';
import { logger } from './log.js';
import { createHttpServer, type HttpServerOptions } from './http/server.js';
import { reservePort } from './http/listen.js';
import { startHttpThreads, threadsRefusal, type HttpThreads } from './http/threads/threads.js';
import { loadUws } from './http/uws.js';
import { shareNodeTables } from './index/shared-nodes.js';
import { ThreadBoard } from './index/thread-board.js';
import { openStorage, type PostgresOpenOptions } from './storage/index.js';
import type { Storage } from './storage/types.js';
import { LateEdge, PlacementNode } from './cluster/node.js';
import { openDecisionRecords } from './storage/decisions.js';
import { join } from 'node:path';

export interface ServerOptions extends Omit<HttpServerOptions, 'auth' | 'sharedPort' | 'decisions' | 'placement'> {
  /**
   * Threads serving HTTP and the channel on the one API port (default 1): the main thread and
   * N − 1 worker threads, over this process's one engine (docs/operations.md, HTTP threads).
   */
  readonly httpThreads?: number | undefined;
  /**
   * With `httpThreads` above 1: whether the main thread's app also accepts API connections
   * (default true). False leaves them all to the worker threads, the main thread running the
   * engine (and the metrics address) only.
   */
  readonly mainThreadServes?: boolean | undefined;
  /**
   * With `httpThreads` above 1: whether the worker threads answer Check and BatchCheck themselves
   * from the shared index (default true). False forwards them to the main thread like every other
   * operation (what benchmarks compare against).
   */
  readonly threadChecks?: boolean | undefined;
  /** Interface to bind (default 127.0.0.1). */
  readonly host?: string | undefined;
  /** TCP port (default 8080; 0 → any free port). */
  readonly port?: number | undefined;
  /** LevelDB directory; omitted (or `datastore: 'memory'`) → in-memory store. */
  readonly dataDir?: string | undefined;
  readonly datastore?: 'memory' | 'leveldb' | 'postgres' | undefined;
  /** With `datastore: 'postgres'`: where and how (docs/configuration.md). */
  readonly postgres?: PostgresOpenOptions | undefined;
  readonly engine?: Partial<EngineConfig> | undefined;
  /** Authentication (docs/auth.md); default mode `none`, refused on a non-loopback host. */
  readonly auth?: AuthConfig | undefined;
  /** The clock of tuple expiry (default `Date.now`; tests inject one). */
  readonly clock?: (() => number) | undefined;
  /** Milliseconds between background expiry sweeps (default 1,000; 0: none). */
  readonly expirySweepMs?: number | undefined;
  /** The decision log (docs/audit.md): sampling (default 0, off), retention, size cap, queue. */
  readonly decisionLog?: DecisionLogConfig | undefined;
  /** Stores placed across nodes (PostgreSQL only; docs/deployment.md). */
  readonly placement?: PlacementSettings | undefined;
}

interface PlacementSettings {
  /** Owners per store (K). */
  readonly replicas: number;
  readonly capacity: number;
  /** Where other nodes reach this one (default http://host:port as bound). */
  readonly advertiseUrl?: string | undefined;
  /** Default: the advertise URL's host:port. */
  readonly nodeId?: string | undefined;
  readonly leaseMs: number;
}

export interface RunningServer {
  readonly host: string;
  readonly port: number;
  /** The port of `metricsAddress`, when metrics have their own address. */
  readonly metricsPort?: number | undefined;
  readonly latch: Latch;
  readonly auth: AuthService;
  readonly decisions: DecisionLog;
  /** HTTP and channel requests being processed now. */
  inFlight(): number;
  /** Whether the playground is served at /playground/. */
  readonly playground: boolean;
  /**
   * Stop accepting, finish in-flight requests (at most `graceMs`, default 8 s; later ones are cut
   * off unanswered, so never acknowledged), close connections, then the service and auth.
   */
  close(graceMs?: number): Promise<void>;
}

export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  loadUws(); // fail before touching storage when no native uWS binary is available
  const host = options.host ?? '127.0.0.1';
  const postgres = options.datastore === 'postgres' ? options.postgres : undefined;
  if (options.datastore === 'postgres' && !postgres)
    throw new Error('datastore postgres needs the postgres options (url)');
  const path = options.datastore === 'memory' || postgres ? undefined : options.dataDir;
  const authConfig = options.auth ?? { mode: 'none' };
  // A refused auth configuration stops the server before storage is touched.
  const resolvedAuth = resolveAuthConfig(authConfig, host);
  const threadCount = Math.max(1, options.httpThreads ?? 1);
  const mainServes = options.mainThreadServes !== false;
  // Worker threads serving HTTP: N − 1 beside the main thread's app, or N when it serves none.
  const workers = mainServes ? threadCount - 1 : threadCount;
  const refusal =
    workers === 0
      ? undefined
      : (threadsRefusal(resolvedAuth) ??
        (options.decisionLog?.sampling
          ? '--http-threads above 1 cannot run with --decision-log (decisions are recorded by one thread)'
          : undefined));
  if (refusal) throw new Error(refusal);
  // Forwarding runs on the main thread's app only: placement serves on one HTTP thread.
  if (options.placement && workers > 0) throw new Error('--placement runs with one HTTP thread (--http-threads 1)');
  const onError = (message: string): void => logger.log('warn', message);
  // Storage before auth: on PostgreSQL, opening it creates or checks the schema auth's tables live in.
  const storage = await openStorage({ path, postgres: postgres && { onError, ...postgres } });
  let auth: AuthService;
  let latch: Latch;
  let tokenSecret = options.tokenSecret;
  let decisions: DecisionLog;
  try {
    auth = await openAuth({ config: authConfig, host, dataDir: path, postgres });
  } catch (err) {
    await storage.close();
    throw err;
  }
  try {
    const records = await openDecisionRecords(path === undefined ? undefined : join(path, 'decisions'), postgres);
    // On PostgreSQL several nodes share the stores' settings: each reads them again every 5 s.
    decisions = await DecisionLog.open(records, options.decisionLog ?? {}, postgres ? 5000 : 0);
  } catch (err) {
    await storage.close();
    await auth.close();
    throw err;
  }
  // Worker threads answering Check read the one index: its node tables live in shared memory
  // (from the first store loaded) and every snapshot is published on the board.
  const board = workers > 0 && options.threadChecks !== false ? new ThreadBoard() : undefined;
  if (board) shareNodeTables(true);
  try {
    // Continuation tokens stay valid across restarts and nodes: the key is kept in the datastore.
    tokenSecret ??= await storage.secret('continuation-tokens');
    latch = await openLatch({
      board,
      storage,
      preload: options.placement === undefined,
      config: options.engine,
      clock: options.clock,
      expirySweepMs: options.expirySweepMs,
      log: (level, msg, fields) => logger.log(level, msg, fields),
    });
  } catch (err) {
    await storage.close();
    await auth.close();
    await decisions.close();
    closeBoard(board);
    throw err;
  }
  const sharedPort = workers === 0 ? undefined : mainServes ? 'bind' : 'none';
  const edge = options.placement ? new LateEdge() : undefined;
  // With HTTP threads the decision log is off everywhere (its endpoints too): the worker threads
  // have no recorder, and a store's answers must not depend on the thread that serves them.
  const server = createHttpServer(latch, {
    ...options,
    tokenSecret,
    auth,
    sharedPort,
    decisions: workers === 0 ? decisions : undefined,
    placement: edge,
    metricsThreads: workers,
  });
  let port = options.port ?? 8080;
  let threads: HttpThreads | undefined;
  let node: PlacementNode | undefined;
  try {
    if (workers > 0) port = await reservePort(host, port);
    port = await server.listen(host, port);
    if (workers > 0)
      threads = await startHttpThreads(
        latch,
        workers,
        {
          host,
          port,
          auth: authConfig,
          http: threadOptions(options, tokenSecret),
          metrics: server.metricsShare && { share: server.metricsShare, route: !options.metricsAddress },
        },
        board,
      );
    if (edge && options.placement) node = edge.start(startPlacement(options.placement, storage, latch, host, port));
  } catch (err) {
    await server.close(0);
    await threads?.close(0);
    await latch.close();
    closeBoard(board);
    await auth.close();
    await decisions.close();
    throw err;
  }
  let closing: Promise<void> | undefined;
  return {
    host,
    port,
    metricsPort: server.metricsPort(),
    latch,
    auth,
    decisions,
    inFlight: server.inFlight,
    playground: server.playground,
    close(graceMs = 8000) {
      closing ??= Promise.resolve(node?.stop())
        .then(() => Promise.all([server.close(graceMs), threads?.close(graceMs)]))
        .then(() => decisions.close())
        .then(() => latch.close())
        .then(() => closeBoard(board))
        .then(() => auth.close());
      return closing;
    },
  };
}

/** This node's placement, once the server listens (its URL names the bound port). */
function startPlacement(
  p: PlacementSettings,
  storage: Storage,
  latch: Latch,
  host: string,
  port: number,
): PlacementNode {
  if (!storage.cluster) throw new Error('--placement needs a datastore shared by the nodes (PostgreSQL)');
  const url = p.advertiseUrl ?? `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return new PlacementNode({
    registry: storage.cluster,
    engine: latch,
    nodeId: p.nodeId ?? new URL(url).host,
    url: url.replace(/\/+$/, ''),
    capacity: p.capacity,
    replicas: p.replicas,
    leaseMs: p.leaseMs,
    log: (level, msg, fields) => logger.log(level, msg, fields),
  });
}

/** The HTTP options an HTTP thread runs with (plain data); /metrics stays on the main thread's side address. */
function threadOptions(o: ServerOptions, tokenSecret: string): Parameters<typeof startHttpThreads>[2]['http'] {
  return {
    bodyLimit: o.bodyLimit,
    bodyDiscard: o.bodyDiscard,
    tokenSecret,
    channel: o.channel,
    // Counted in the main thread's metrics share; served on the API port unless --metrics-addr.
    metrics: o.metrics,
    watchStallMs: o.watchStallMs,
    liveStreams: o.liveStreams,
    corsOrigins: o.corsOrigins,
    authzenBaseUrl: o.authzenBaseUrl,
    playground: o.playground,
    tracing: o.tracing,
  };
}

/** After the engine closed: the board releases what it still holds; stores stop sharing their node tables. */
function closeBoard(board: ThreadBoard | undefined): void {
  if (!board) return;
  board.close();
  shareNodeTables(false);
}
