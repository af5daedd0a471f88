// `latch serve`: parses the serve flags, starts the server, and on SIGTERM/SIGINT stops accepting,
// finishes in-flight requests, closes everything and exits 0.

import { AUTH_FLAGS, AUTH_HELP, authConfigFromFlags } from '../api/auth/flags.js';
import { startServer, type ServerOptions } from '../main.js';

export const SERVE_HELP = `Usage: latch serve [options]

Options:
  --host <addr>          Interface to bind (default 127.0.0.1)
  --port <n>             TCP port (default 8080; 0 = any free port)
  --data-dir <dir>       LevelDB data directory (default ./data)
  --datastore <kind>     'leveldb' (default) or 'memory'
  --body-limit <bytes>   Largest request body (default 1048576)
  -h, --help             Show this help
${AUTH_HELP}`;

export class UsageError extends Error {}

const FLAGS = new Set(['--host', '--port', '--data-dir', '--datastore', '--body-limit', ...AUTH_FLAGS]);

function integer(flag: string, value: string, min: number, max: number): number {
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n >= min && n <= max)) throw new UsageError(`${flag} must be an integer from ${min} to ${max}, got '${value}'`);
  return n;
}

/** `--flag value` or `--flag=value`; an unknown flag or a missing value is a UsageError. */
export function parseServeArgs(args: readonly string[]): ServerOptions {
  const values = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const eq = arg.indexOf('=');
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    if (!FLAGS.has(flag)) throw new UsageError(`unknown option '${arg}'`);
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined || value === '') throw new UsageError(`option ${flag} needs a value`);
    values.set(flag, value);
  }
  const datastore = values.get('--datastore') ?? 'leveldb';
  if (datastore !== 'memory' && datastore !== 'leveldb') throw new UsageError(`--datastore must be 'memory' or 'leveldb', got '${datastore}'`);
  const port = values.get('--port');
  const limit = values.get('--body-limit');
  let auth;
  try {
    auth = authConfigFromFlags(values);
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
  return {
    auth,
    host: values.get('--host') ?? '127.0.0.1',
    port: port === undefined ? 8080 : integer('--port', port, 0, 65535),
    datastore,
    dataDir: datastore === 'memory' ? undefined : (values.get('--data-dir') ?? './data'),
    bodyLimit: limit === undefined ? undefined : integer('--body-limit', limit, 1, 2 ** 31 - 1),
  };
}

export async function serve(args: readonly string[]): Promise<number> {
  let options: ServerOptions;
  try {
    options = parseServeArgs(args);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`latch serve: ${err.message}\nRun 'latch serve --help' for the options.\n`);
    return 2;
  }
  let server;
  try {
    server = await startServer(options);
  } catch (err) {
    process.stderr.write(`latch serve: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
  const where = options.datastore === 'memory' ? 'in memory' : `in ${options.dataDir}`;
  process.stderr.write(JSON.stringify({ level: 'info', msg: 'latch listening', host: server.host, port: server.port, data: where }) + '\n');
  const running = server;
  return new Promise<number>((resolve) => {
    const stop = (signal: string): void => {
      process.stderr.write(JSON.stringify({ level: 'info', msg: 'shutting down', signal }) + '\n');
      running.close().then(
        () => resolve(0),
        (err: unknown) => {
          process.stderr.write(`latch serve: close failed: ${String(err)}\n`);
          resolve(1);
        },
      );
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}
