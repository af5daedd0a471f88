// The PostgreSQL datastore (the project's only importer of `pg`): opening it with its schema
// check or migration, and the startup faults worded for an operator.

import type { PostgresOpenOptions } from '../types.js';
import { isUnavailable } from './db.js';
import { checkSchema, migrate, SchemaError } from './migrations.js';
import { PgStorage, type PgStorageOptions } from './storage.js';

export { PgStorage, type PgStorageOptions } from './storage.js';
export { PgClusterRegistry } from './cluster.js';
export { Db, isUnavailable, type PostgresOptions } from './db.js';
export { migrate, schemaVersion, SCHEMA_VERSION, SchemaTooNewError, SchemaTooOldError } from './migrations.js';

/** See PostgresOpenOptions (../types.ts) for each field. */
export interface OpenPostgresOptions extends PgStorageOptions, PostgresOpenOptions {}

/** `postgres://user:secret@host/db` → `postgres://user@host/db`: never print a password. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.password = '';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}

/** A startup fault, one line for the operator; `transient` faults may clear up by themselves. */
export class PostgresStartError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PostgresStartError';
  }
}

export function describeStartError(url: string, err: unknown): PostgresStartError {
  if (err instanceof PostgresStartError) return err;
  if (err instanceof SchemaError) return new PostgresStartError(err.message, false, { cause: err });
  const at = `PostgreSQL at ${redactUrl(url)}`;
  const message = err instanceof Error ? err.message.replace(/^the datastore is unavailable: /, '') : String(err);
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
  if (code === '28P01' || code === '28000')
    return new PostgresStartError(`${at}: wrong credentials (${message})`, false, { cause: err });
  if (code === '3D000') return new PostgresStartError(`${at}: ${message}`, false, { cause: err });
  if (isUnavailable(err)) return new PostgresStartError(`${at} is unreachable: ${message}`, true, { cause: err });
  return new PostgresStartError(`${at}: ${message}`, false, { cause: err });
}

async function openOnce(options: OpenPostgresOptions): Promise<PgStorage> {
  const storage = new PgStorage(options);
  try {
    if (options.migrate === false) await checkSchema(storage.db);
    else await migrate(storage.db);
    return await storage.init();
  } catch (err) {
    await storage.close().catch(() => undefined);
    throw describeStartError(options.url, err);
  }
}

/**
 * Opens the storage: migrates (or checks) the schema, resumes reclamation. A transient fault
 * (unreachable, refused, starting up) is retried with backoff (0.25 s doubling to 4 s) for
 * `startTimeoutMs`, each retry reported to `onError`; anything else fails at once.
 */
export async function openPostgresStorage(options: OpenPostgresOptions): Promise<PgStorage> {
  try {
    new URL(options.url);
  } catch {
    throw new PostgresStartError(
      `--postgres-url is not a valid URL (expected postgres://user:password@host:port/database)`,
      false,
    );
  }
  const deadline = Date.now() + (options.startTimeoutMs ?? 0);
  for (let wait = 250; ; wait = Math.min(4000, wait * 2)) {
    try {
      return await openOnce(options);
    } catch (err) {
      if (!(err instanceof PostgresStartError) || !err.transient || Date.now() + wait > deadline) throw err;
      options.onError?.(`${err.message}; retrying in ${wait} ms`);
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
