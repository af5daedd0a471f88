// `latch serve`: reads its settings (flags > LATCH_… environment > config file > defaults, one
// table in ./settings.ts), starts the server, and on SIGTERM/SIGINT shuts down gracefully: stop
// accepting, let in-flight requests finish within --shutdown-timeout, close the channel, the
// worker pool, the indexes (checkpoint) and the store, then exit 0. A second signal exits 1 at once.

import { configureLogging, logger } from '../log.js';
import { startServer, type RunningServer } from '../main.js';
import { uwsBuild } from '../http/uws.js';
import { redactUrl } from '../storage/index.js';
import { UsageError } from './args.js';
import { startTelemetry, type Telemetry } from './otel.js';
import { serveHelp } from './settings-doc.js';
import { resolveSettings, serveConfig, type ServeConfig } from './settings-load.js';

export { UsageError };

/** Rendered from the settings table. */
export const SERVE_HELP = serveHelp();

/** Extra time, past the in-flight bound, for closing the pool, checkpointing and closing the store. */
const CLOSE_MARGIN_MS = 30_000;

/** The server options of `latch serve <args>`; throws UsageError naming the wrong setting. */
export function parseServeArgs(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): ServeConfig {
  return serveConfig(resolveSettings(args, env));
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export async function serve(
  args: readonly string[],
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<number> {
  let config: ServeConfig;
  try {
    config = parseServeArgs(args, env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`latch serve: ${err.message}\nRun 'latch serve --help' for the options.\n`);
    return 2;
  }
  configureLogging(config.log);
  let telemetry: Telemetry | undefined;
  try {
    telemetry = await startTelemetry(config.otel);
  } catch (err) {
    logger.log('error', 'latch could not start', { cause: describe(err) });
    logger.flush();
    return 1;
  }
  // Listening for signals before starting: a SIGTERM during start-up waits for it, then shuts down.
  const signals = new Signals();
  let server: RunningServer;
  try {
    server = await startServer(config.server);
  } catch (err) {
    logger.log('error', 'latch could not start', { cause: describe(err) });
    logger.flush();
    signals.detach();
    return 1;
  }
  const o = config.server;
  const metricsAt = o.metricsAddress
    ? { metrics: `${o.metricsAddress.host}:${server.metricsPort ?? o.metricsAddress.port}` }
    : {};
  const data =
    o.datastore === 'memory' ? 'memory' : o.datastore === 'postgres' ? redactUrl(o.postgres?.url ?? '') : o.dataDir;
  const build = uwsBuild();
  const origin = `http://${server.host.includes(':') ? `[${server.host}]` : server.host}:${server.port}`;
  logger.log('info', 'latch listening', {
    host: server.host,
    port: server.port,
    ...metricsAt,
    data,
    auth: o.auth?.mode ?? 'none',
    ...(server.playground ? { playground: `${origin}/playground/` } : {}),
    ...(build ? { uws: `${build.package} ${build.version}`, uws_header_limit: build.headerLimit } : {}),
    pid: process.pid,
  });
  const code = await shutdownOnSignal(server, config.shutdownTimeoutMs, signals);
  await telemetry
    ?.shutdown()
    .catch((err: unknown) => logger.log('warn', 'telemetry shutdown failed', { cause: describe(err) }));
  logger.flush();
  // Everything is closed; a stray timer (retired snapshots, auth housekeeping) must not delay the exit.
  setTimeout(() => process.exit(code), 50).unref();
  return code;
}

/** SIGTERM/SIGINT from the start: the first is remembered until a handler is set, a second exits 1. */
class Signals {
  private first: NodeJS.Signals | undefined;
  private handler: ((signal: NodeJS.Signals) => void) | undefined;
  private readonly listener = (signal: NodeJS.Signals): void => {
    if (this.first !== undefined) {
      logger.log('error', 'second signal: exiting without finishing the shutdown', { signal });
      logger.flush();
      process.exit(1);
    }
    this.first = signal;
    this.handler?.(signal);
  };

  constructor() {
    process.on('SIGTERM', this.listener);
    process.on('SIGINT', this.listener);
  }

  /** Runs `fn` on the first signal (at once if it already came). */
  onFirst(fn: (signal: NodeJS.Signals) => void): void {
    this.handler = fn;
    if (this.first !== undefined) fn(this.first);
  }

  detach(): void {
    process.off('SIGTERM', this.listener);
    process.off('SIGINT', this.listener);
  }
}

/** Resolves with the exit code once a signal arrived and the server closed (or failed to). */
function shutdownOnSignal(server: RunningServer, graceMs: number, signals: Signals): Promise<number> {
  return new Promise<number>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      const started = Date.now();
      logger.log('info', 'shutting down', { signal, in_flight: server.inFlight(), timeout_ms: graceMs });
      const watchdog = setTimeout(() => {
        logger.log('error', 'shutdown did not finish in time', { waited_ms: Date.now() - started });
        resolve(1);
      }, graceMs + CLOSE_MARGIN_MS); // kept referenced: a close stuck on a promise must still end the process
      server.close(graceMs).then(
        () => {
          clearTimeout(watchdog);
          logger.log('info', 'latch stopped', { took_ms: Date.now() - started });
          resolve(0);
        },
        (err: unknown) => {
          clearTimeout(watchdog);
          logger.log('error', 'close failed', { cause: describe(err) });
          resolve(1);
        },
      );
    };
    signals.onFirst(stop);
  });
}
