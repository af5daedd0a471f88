// The connection pool of the PostgreSQL backend and the one place its errors are classified:
// a lost or refused connection, a server shutting down or a statement timeout becomes the API's
// 503 `unavailable`; everything else stays what it is (an AppError, or a bug → 500).
//
// node-postgres (`pg`) is the client: the pool reconnects by itself (a broken connection is
// discarded and the next checkout opens a new one), and an idle connection's error is reported
// to the pool's 'error' event, which is handled here so it can never crash the process.

import pg from 'pg';
import { AppError } from '../../errors.js';

export interface PostgresOptions {
  /** `postgres://user:password@host:port/database` (libpq URL syntax, `?sslmode=` etc.). */
  readonly url: string;
  /** Pool size per process (default 10). */
  readonly poolSize?: number | undefined;
  /** `statement_timeout` of every connection in ms (default 30000; 0 = none). */
  readonly statementTimeoutMs?: number | undefined;
  /** How long a request waits for a pooled connection before 503 (default 5000 ms). */
  readonly connectTimeoutMs?: number | undefined;
  /** Called with a one-line description when an idle connection or the listener fails. */
  readonly onError?: ((message: string) => void) | undefined;
  /** Server settings of every connection, as libpq's `options` (`-c name=value …`). */
  readonly connectionOptions?: string | undefined;
}

export type Client = pg.PoolClient;
export type Row = unknown[];

/** SQLSTATE classes and codes that mean "the database is not reachable now". */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '57014', '53300', '25006']);
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

function codeOf(err: unknown): string {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : '';
}

/** Whether `err` says the database could not be reached or used right now (not a bug, not bad input). */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof AppError) return err.code === 'unavailable';
  const code = codeOf(err);
  if (UNAVAILABLE_STATES.has(code) || code.startsWith('08') || NETWORK_CODES.has(code)) return true;
  const message = err instanceof Error ? err.message : '';
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is closed|Client was closed/i.test(
    message,
  );
}

/** Rethrows `err` as the API error it stands for. */
export function classify(err: unknown): never {
  if (err instanceof AppError) throw err;
  if (isUnavailable(err)) {
    const why = codeOf(err) === '57014' ? 'statement timeout' : err instanceof Error ? err.message : String(err);
    throw new AppError('unavailable', `the datastore is unavailable: ${why}`);
  }
  throw err;
}

export class Db {
  readonly pool: pg.Pool;

  constructor(readonly options: PostgresOptions) {
    const timeout = options.statementTimeoutMs ?? 30_000;
    this.pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
      idleTimeoutMillis: 30_000,
      ...(timeout > 0 ? { statement_timeout: timeout } : {}),
      application_name: 'latch',
      ...(options.connectionOptions ? { options: options.connectionOptions } : {}),
    });
    this.pool.on('error', (err) => options.onError?.(`postgres: idle connection failed: ${err.message}`));
    // A checked-out client has no listener of the pool's: a connection lost between two of its
    // queries (a scan or checkpoint stream, a transaction) would emit an unhandled 'error' and end
    // the process. Every client keeps this one; the loss surfaces as its next query's failure.
    this.pool.on('connect', (client) => void client.on('error', () => undefined));
  }

  /** One statement on any pooled connection, rows as arrays. */
  async rows(text: string, values: readonly unknown[] = []): Promise<Row[]> {
    try {
      const r = await this.pool.query<Row>({ text, values: values as unknown[], rowMode: 'array' });
      return r.rows;
    } catch (err) {
      return classify(err);
    }
  }

  /** One statement; the number of rows it affected. */
  async exec(text: string, values: readonly unknown[] = []): Promise<number> {
    try {
      return (await this.pool.query({ text, values: values as unknown[] })).rowCount ?? 0;
    } catch (err) {
      return classify(err);
    }
  }

  /** The first row's first value (undefined when no row). */
  async value(text: string, values: readonly unknown[] = []): Promise<unknown> {
    return (await this.rows(text, values))[0]?.[0];
  }

  /** A connection for `fn`; given back (or discarded when it broke) afterwards. */
  async with<T>(fn: (c: Client) => Promise<T>): Promise<T> {
    let client: Client;
    try {
      client = await this.pool.connect();
    } catch (err) {
      return classify(err);
    }
    let broken: Error | undefined;
    try {
      return await fn(client);
    } catch (err) {
      if (isUnavailable(err) && !(err instanceof AppError))
        broken = err instanceof Error ? err : new Error(String(err));
      return classify(err);
    } finally {
      client.release(broken);
    }
  }

  /**
   * `fn` in one transaction (READ COMMITTED unless `mode` says otherwise): committed when it
   * resolves, rolled back when it throws. A failed commit rejects; nothing is half-applied.
   */
  tx<T>(fn: (c: Client) => Promise<T>, mode = ''): Promise<T> {
    return this.with(async (c) => {
      await c.query(mode ? `BEGIN ${mode}` : 'BEGIN');
      try {
        const out = await fn(c);
        await c.query('COMMIT');
        return out;
      } catch (err) {
        await c.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    });
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

/** Rows as arrays on a client of `with`/`tx`. */
export async function q(c: Client, text: string, values: readonly unknown[] = []): Promise<Row[]> {
  return (await c.query<Row>({ text, values: values as unknown[], rowMode: 'array' })).rows;
}

// ---- text columns ----
//
// PostgreSQL text cannot hold U+0000, which tuple strings may contain. Stored strings map NUL to
// U+0001 U+0001 and U+0001 to U+0001 U+0002: a prefix-free, order-preserving code, so columns
// with COLLATE "C" (byte order of UTF-8, like LevelDB's keys) sort exactly as the originals.

// eslint-disable-next-line no-control-regex
const RAW = /[\u0000\u0001]/;
// eslint-disable-next-line no-control-regex
const RAW_ALL = /[\u0000\u0001]/g;
// eslint-disable-next-line no-control-regex
const CODED = /\u0001[\u0001\u0002]/g;

export function enc(s: string): string {
  return RAW.test(s) ? s.replace(RAW_ALL, (c) => (c === '\u0000' ? '\u0001\u0001' : '\u0001\u0002')) : s;
}

export function dec(s: string): string {
  return s.includes('\u0001') ? s.replace(CODED, (c) => (c === '\u0001\u0001' ? '\u0000' : '\u0001')) : s;
}

/** A bigint column (node-postgres hands int8 out as a string) as a number. */
export function num(v: unknown): number {
  return typeof v === 'number' ? v : Number(v);
}
