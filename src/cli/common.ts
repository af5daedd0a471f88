// What every command module shares: the I/O handle (so tests run commands in-process and read
// their output), the Command shape, the server-connection flags, and tuple-writing in chunks.

import { AppError } from '../errors.js';
import type { TupleKey } from '../domain/types.js';
import { type Args, type CommandSpec, type FlagSpec, UsageError } from './args.js';
import { ApiError, type ClientOptions, FgaHttpClient } from './http-client.js';
import { FileFormatError } from './tuple-file.js';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** stderr is a terminal (progress bars are drawn only then). */
  readonly errIsTTY: boolean;
}

export const processIo: CliIo = {
  out: (t) => void process.stdout.write(t),
  err: (t) => void process.stderr.write(t),
  env: process.env,
  errIsTTY: process.stderr.isTTY === true,
};

export interface Command {
  readonly spec: CommandSpec;
  /** Returns the exit code: 0 success, 1 failure. Throws UsageError for exit code 2. */
  run(args: Args, io: CliIo): Promise<number>;
}

/** Flags that say which server to talk to and how to authenticate. */
export const SERVER_FLAGS: readonly FlagSpec[] = [
  {
    name: 'api-url',
    kind: 'string',
    value: '<url>',
    env: 'LATCH_API_URL',
    help: 'Server base URL, e.g. http://127.0.0.1:8080',
  },
  { name: 'api-token', kind: 'string', value: '<token>', env: 'LATCH_API_TOKEN', help: 'Bearer token' },
  {
    name: 'client-id',
    kind: 'string',
    value: '<id>',
    env: 'LATCH_CLIENT_ID',
    help: 'OAuth2 client id (client-credentials flow)',
  },
  {
    name: 'client-secret',
    kind: 'string',
    value: '<secret>',
    env: 'LATCH_CLIENT_SECRET',
    help: 'OAuth2 client secret',
  },
  {
    name: 'api-token-issuer',
    kind: 'string',
    value: '<host|url>',
    env: 'LATCH_API_TOKEN_ISSUER',
    help: 'Token issuer (host or token endpoint URL)',
  },
  { name: 'api-audience', kind: 'string', value: '<aud>', env: 'LATCH_API_AUDIENCE', help: 'Token audience' },
];

export const STORE_FLAG: FlagSpec = {
  name: 'store-id',
  kind: 'string',
  value: '<id>',
  env: 'LATCH_STORE_ID',
  help: 'Store id',
};
export const MODEL_FLAG: FlagSpec = {
  name: 'model-id',
  kind: 'string',
  value: '<id>',
  env: 'LATCH_MODEL_ID',
  help: 'Authorization model id (default: the latest)',
};

const CREDENTIAL_FLAGS = ['client-id', 'client-secret', 'api-token-issuer', 'api-audience'];

/**
 * The credential to send: a static token or client credentials. A flag beats its environment
 * variable, so a credential given on the command line wins over the other kind from the
 * environment (which is then ignored, even when incomplete); within one source, the token wins.
 */
function credentialOf(args: Args): Pick<ClientOptions, 'apiToken' | 'credentials'> {
  const tokenFlag = args.onCommandLine('api-token');
  const credsFlag = CREDENTIAL_FLAGS.some((f) => args.onCommandLine(f));
  if (tokenFlag && !credsFlag) return { apiToken: args.string('api-token') };
  const clientId = args.string('client-id');
  const clientSecret = args.string('client-secret');
  const issuer = args.string('api-token-issuer');
  if ((clientId ?? clientSecret ?? issuer) !== undefined && !(clientId && clientSecret && issuer)) {
    throw new UsageError('client credentials need --client-id, --client-secret and --api-token-issuer together');
  }
  const credentials =
    clientId && clientSecret && issuer
      ? { clientId, clientSecret, issuer, audience: args.string('api-audience') }
      : undefined;
  if (credsFlag && !tokenFlag) return { credentials };
  return { apiToken: args.string('api-token'), credentials };
}

/** A client for `--api-url`; throws UsageError when the URL or half of the client credentials is missing. */
export function clientFrom(args: Args): FgaHttpClient {
  const apiUrl = args.require('api-url', 'or set LATCH_API_URL');
  if (!/^https?:\/\//.test(apiUrl))
    throw new UsageError(`--api-url must start with http:// or https://, got '${apiUrl}'`);
  return new FgaHttpClient({ apiUrl, ...credentialOf(args) });
}

/** `--postgres-url` (or LATCH_POSTGRES_URL) of a command that talks to the database itself; a usage error when missing or not a URL. */
export function postgresUrl(args: Args): string {
  const url = args.string('postgres-url');
  if (!url) throw new UsageError('missing --postgres-url (or LATCH_POSTGRES_URL)');
  try {
    new URL(url);
  } catch {
    throw new UsageError('--postgres-url is not a valid URL (expected postgres://user:password@host:port/database)');
  }
  return url;
}

/** A message for a failure that is not a usage error (API answer, file problem, engine error). */
export function describeError(err: unknown): string {
  if (err instanceof ApiError || err instanceof FileFormatError) return err.message;
  if (err instanceof AppError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

export function printJson(io: CliIo, value: unknown): void {
  io.out(JSON.stringify(value, null, 2) + '\n');
}

/** Splits into chunks of at most `size` items. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * What a chunked write did: `applied` counts the tuples the server wrote (or deleted), without
 * ignored duplicates or missing deletes; undefined when the server does not report it (not latch).
 */
interface ChunkedWrite {
  readonly requested: number;
  readonly applied: number | undefined;
}

/** Writes or deletes tuples over HTTP in chunks of ≤100 (the API's limit), reporting progress. */
export async function writeInChunks(
  client: FgaHttpClient,
  storeId: string,
  tuples: readonly TupleKey[],
  options: {
    modelId?: string | undefined;
    delete?: boolean;
    /** `ignore`: an existing identical tuple (or, for deletes, a missing one) is skipped, not an error. */
    ignore?: boolean;
    chunkSize?: number | undefined;
    onProgress?: (done: number, total: number) => void;
    /** Wire preconditions: the tuples then go as ONE guarded write (at most one chunk). */
    preconditions?: readonly Record<string, unknown>[] | undefined;
  } = {},
): Promise<ChunkedWrite> {
  let done = 0;
  let applied: number | undefined = 0;
  const size = Math.min(options.chunkSize ?? 100, 100);
  if (options.preconditions?.length && tuples.length > size)
    throw new UsageError(`a guarded write is one request: at most ${size} tuples with --precondition`);
  for (const chunk of chunks(tuples, size)) {
    const model = {
      ...(options.modelId ? { authorization_model_id: options.modelId } : {}),
      ...(options.preconditions?.length ? { preconditions: options.preconditions } : {}),
    };
    const counts = options.delete
      ? await client.write(storeId, {
          deletes: {
            tuple_keys: chunk.map(({ user, relation, object }) => ({ user, relation, object })),
            on_missing: options.ignore ? 'ignore' : 'error',
          },
          ...model,
        })
      : await client.write(storeId, {
          writes: { tuple_keys: chunk, on_duplicate: options.ignore ? 'ignore' : 'error' },
          ...model,
        });
    // Without `ignore` a chunk is all or nothing, so its size is exact even from a server that does not count.
    const n = counts ? (options.delete ? counts.deleted : counts.written) : options.ignore ? undefined : chunk.length;
    applied = applied === undefined || n === undefined ? undefined : applied + n;
    done += chunk.length;
    options.onProgress?.(done, tuples.length);
  }
  return { requested: tuples.length, applied };
}

/**
 * The report of a chunked write: `{written|deleted: n}`, plus `skipped` (ignored duplicates or
 * missing deletes) when some were skipped; a server that does not count gives `{requested: n}`
 * and a note on stderr.
 */
export function writeReport(io: CliIo, verb: 'written' | 'deleted', r: ChunkedWrite): Record<string, number> {
  if (r.applied === undefined) {
    io.err(
      `note: the server does not report how many tuples it ${verb === 'written' ? 'wrote' : 'deleted'}; ${r.requested} were sent\n`,
    );
    return { requested: r.requested };
  }
  return r.applied === r.requested ? { [verb]: r.applied } : { [verb]: r.applied, skipped: r.requested - r.applied };
}

/** A one-line progress bar on stderr, drawn only when stderr is a terminal. */
export class ProgressBar {
  private last = 0;
  constructor(
    private readonly io: CliIo,
    private readonly label: string,
  ) {}

  update(done: number, total: number): void {
    if (!this.io.errIsTTY) return;
    const now = Date.now();
    if (done < total && now - this.last < 100) return;
    this.last = now;
    const width = 30;
    const filled = total === 0 ? width : Math.round((done / total) * width);
    const pct = total === 0 ? 100 : Math.floor((done / total) * 100);
    this.io.err(`\r${this.label} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${pct}% ${done}/${total}`);
    if (done >= total) this.io.err('\n');
  }
}

/** `type:id` → {type, id}; throws UsageError naming the flag when malformed. */
export function splitObject(value: string, what: string): { type: string; id: string } {
  const i = value.indexOf(':');
  if (i <= 0 || i === value.length - 1) throw new UsageError(`${what} must look like type:id, got '${value}'`);
  return { type: value.slice(0, i), id: value.slice(i + 1) };
}
