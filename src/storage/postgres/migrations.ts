// The schema of the PostgreSQL backend as numbered steps, applied in order under an advisory
// lock so that nodes starting together migrate once. `latch_schema` holds one row per applied
// step. Step 1 is the whole schema of the first release: the tables, their indexes and the write
// functions, each function created once in its final form. A later change appends step 2, 3, …
// (its SQL in its own file; a changed function is a CREATE OR REPLACE there) and never edits a
// released step. A node refuses a database whose schema is newer than its code
// (SchemaTooNewError), when it may not migrate one that is older (SchemaTooOldError), and one
// made by a development build before the first release (SchemaPreReleaseError: its steps are
// recorded in `latch_schema_version` and cannot be upgraded; docs/configuration.md says how to
// recreate it).
//
// Every text column that is compared or ordered uses COLLATE "C" (byte order of UTF-8), the
// order of LevelDB's keys, so pagination and ordering are the same on both backends.

import { num, q, type Db } from './db.js';
import { DELETE_MATCHING_FUNCTION_SQL } from './delete-matching-function.js';
import { WRITE_ALL_FUNCTION_SQL } from './write-all-function.js';
import { WRITE_FUNCTION_SQL } from './write-function.js';
import { WRITE_GROUP_FUNCTION_SQL } from './write-group-function.js';

const C = 'COLLATE "C"';

/** Step n is MIGRATIONS[n - 1]; append only, never edit a released step. */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE latch_stores (
    id         text   ${C} PRIMARY KEY,
    -- the store's number in the tuple table's keys (latch_tuples.store_key): 4 bytes where the id
    -- takes 27 in the heap and in each index entry; never reused (at most 2^31 - 1 stores made)
    key        integer GENERATED ALWAYS AS IDENTITY UNIQUE,
    name       text   ${C} NOT NULL,
    created_at text   NOT NULL,
    updated_at text   NOT NULL,
    -- tombstone: the store is deleted once this is set; its rows are reclaimed in the background
    deleted_ms bigint,
    -- the last committed revision and the millisecond of the last write (timestamps never go back)
    revision   bigint NOT NULL DEFAULT 0,
    last_ms    bigint NOT NULL DEFAULT 0
  );
  CREATE INDEX latch_stores_deleted ON latch_stores (id) WHERE deleted_ms IS NOT NULL;

  CREATE TABLE latch_models (
    store_id text ${C} NOT NULL,
    id       text ${C} NOT NULL,
    model    text NOT NULL,
    PRIMARY KEY (store_id, id)
  );

  CREATE TABLE latch_assertions (
    store_id   text ${C} NOT NULL,
    model_id   text ${C} NOT NULL,
    assertions text NOT NULL,
    PRIMARY KEY (store_id, model_id)
  );

  -- A store's tuples are keyed by its number (latch_stores.key), not its id: every statement maps
  -- the id once (the store's row lock of a write function, a sub-select of a read), and each heap
  -- row and index entry is 23 bytes narrower. The fixed-width columns come first (no padding).
  -- No type column: an object's type is its text before the first ':', and the type's objects
  -- are the range 'T:' <= object < 'T;' (a type holds no ':'; ';' follows ':' in byte order).
  CREATE TABLE latch_tuples (
    written_ms  bigint NOT NULL,
    -- tuple expiry (expires_at, ms since the epoch), or NULL
    expires_ms  bigint,
    store_key   integer NOT NULL,
    object      text ${C} NOT NULL,
    relation    text ${C} NOT NULL,
    "user"      text ${C} NOT NULL,
    -- {"name":…,"context":…} as JSON text, or NULL
    condition   text,
    PRIMARY KEY (store_key, object, relation, "user")
  );
  -- the expiry sweeper's index (deleteExpired, firstExpiry)
  CREATE INDEX latch_tuples_expiry ON latch_tuples (store_key, expires_ms) WHERE expires_ms IS NOT NULL;
  -- Read and delete by filter of an object type and a user (tuples.ts readPlan,
  -- delete-matching-function.ts): store and user by equality, then (relation, object) order; the
  -- type is the object range within each relation (a skip scan over the user's relations).
  CREATE INDEX latch_tuples_by_user ON latch_tuples (store_key, "user", relation, object);

  CREATE TABLE latch_changes (
    store_id    text ${C} NOT NULL,
    revision    bigint NOT NULL,
    seq         integer NOT NULL,
    deleted     boolean NOT NULL,
    object      text ${C} NOT NULL,
    object_type text ${C} NOT NULL,
    relation    text ${C} NOT NULL,
    "user"      text ${C} NOT NULL,
    condition   text,
    ms          bigint NOT NULL,
    expires_ms  bigint,
    -- set: one compact row for the changes of one type of a delete by filter (delete-matching-function.ts)
    -- or of an import chunk (import.ts)
    bulk        text,
    PRIMARY KEY (store_id, revision, seq)
  );
  CREATE INDEX latch_changes_by_type ON latch_changes (store_id, object_type, revision, seq);

  -- one row per write: the time index of ReadChanges start_time
  CREATE TABLE latch_revisions (
    store_id text ${C} NOT NULL,
    revision bigint NOT NULL,
    ms       bigint NOT NULL,
    PRIMARY KEY (store_id, revision)
  );
  CREATE INDEX latch_revisions_by_time ON latch_revisions (store_id, ms, revision);

  CREATE TABLE latch_checkpoints (
    store_id   text ${C} PRIMARY KEY,
    revision   bigint NOT NULL,
    generation bigint NOT NULL,
    chunks     integer NOT NULL
  );
  CREATE TABLE latch_checkpoint_chunks (
    store_id   text ${C} NOT NULL,
    generation bigint NOT NULL,
    idx        integer NOT NULL,
    data       bytea NOT NULL,
    PRIMARY KEY (store_id, generation, idx)
  );
  ALTER TABLE latch_checkpoint_chunks ALTER COLUMN data SET STORAGE EXTERNAL;
  -- open checkpoint writers: their chunks are not orphans while touched recently
  CREATE TABLE latch_checkpoint_writers (
    generation bigint PRIMARY KEY,
    store_id   text ${C} NOT NULL,
    touched_ms bigint NOT NULL
  );
  CREATE SEQUENCE latch_checkpoint_generation;

  -- node-wide values shared by every node (the continuation-token key, the current signing key)
  CREATE TABLE latch_settings (
    name  text ${C} PRIMARY KEY,
    value text NOT NULL
  );

  -- the authentication state (clients, signing keys) and the store logs: the small ordered
  -- key-value spaces of src/storage/auth, one table each, keys in byte order
  CREATE TABLE latch_auth (
    key   text ${C} PRIMARY KEY,
    value text NOT NULL
  );
  CREATE TABLE latch_store_logs (
    key   text ${C} PRIMARY KEY,
    value text NOT NULL
  );

  -- permission index definitions (their materialised state is per node, in memory)
  CREATE TABLE latch_permission_indexes (
    store_id text ${C} NOT NULL,
    id       text ${C} NOT NULL,
    record   text NOT NULL,
    PRIMARY KEY (store_id, id)
  );

  -- the decision log (src/storage/decisions.ts): recorded decisions, their pruning index and the
  -- per-store sampling settings, one ordered key-value space like latch_store_logs
  CREATE TABLE latch_decisions (
    key   text ${C} PRIMARY KEY,
    value text NOT NULL
  );

  -- the store's shadow model setting (docs/changing-models.md, shadow evaluation)
  CREATE TABLE latch_shadows (
    store_id text ${C} PRIMARY KEY,
    setting  text NOT NULL
  );

  -- the placement registry of latch serve --placement (cluster.ts): one row per node, its
  -- lease timed by the database's clock, the stores it holds (ready) and is loading
  CREATE TABLE latch_cluster_members (
    node_id     text ${C} PRIMARY KEY,
    url         text NOT NULL,
    capacity    float8 NOT NULL,
    draining    boolean NOT NULL DEFAULT false,
    lease_until timestamptz NOT NULL,
    ready       text[] NOT NULL DEFAULT '{}',
    loading     text[] NOT NULL DEFAULT '{}'
  );
  ` +
    // a tuple Write as one statement, latch_write, and the helpers every write function shares
    // (write-function.ts) …
    WRITE_FUNCTION_SQL +
    // … latch_write_all, the all-or-nothing Write (write-all-function.ts) …
    WRITE_ALL_FUNCTION_SQL +
    // … latch_write_group, group commit of one store's concurrent Writes (write-group-function.ts) …
    WRITE_GROUP_FUNCTION_SQL +
    // … and latch_delete_matching, delete by filter as one statement (delete-matching-function.ts)
    DELETE_MATCHING_FUNCTION_SQL,
];

/** The schema version this code writes and reads. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Key of the advisory lock held while migrating ('latch' in ASCII). */
const LOCK_KEY = 0x6c61_7463_68;

/** The table of applied steps; `latch_schema_version` held those of the development builds. */
const STEPS_TABLE = 'latch_schema';
const PRE_RELEASE_TABLE = 'latch_schema_version';

/** Why a database's schema cannot be used; `code` is stable, the message is for the operator. */
export abstract class SchemaError extends Error {
  abstract readonly code: 'schema_too_new' | 'schema_too_old' | 'schema_pre_release';
}

export class SchemaTooNewError extends SchemaError {
  readonly code = 'schema_too_new';
  constructor(readonly found: number) {
    super(
      `the database schema is version ${found}, newer than this latch (schema version ${SCHEMA_VERSION}): upgrade latch`,
    );
    this.name = 'SchemaTooNewError';
  }
}

export class SchemaTooOldError extends SchemaError {
  readonly code = 'schema_too_old';
  constructor(readonly found: number) {
    super(
      `the database schema is version ${found}, this latch needs version ${SCHEMA_VERSION}: run 'latch migrate --postgres-url …' or start with --postgres-migrate true`,
    );
    this.name = 'SchemaTooOldError';
  }
}

/**
 * A database made by a development build of latch before its first release (its steps are in
 * `latch_schema_version`): its schema was squashed into step 1, so there is no upgrade path and
 * latch leaves it untouched.
 */
export class SchemaPreReleaseError extends SchemaError {
  readonly code = 'schema_pre_release';
  constructor() {
    super(
      `the database was made by a development build of latch from before its first release and cannot be upgraded: recreate the database empty, then start latch (docs/configuration.md, "A database from a development build")`,
    );
    this.name = 'SchemaPreReleaseError';
  }
}

type Queryable = Parameters<typeof q>[0];

async function tableExists(c: Queryable, name: string): Promise<boolean> {
  const rows = await q(c, `SELECT to_regclass($1) IS NOT NULL`, [name]);
  return rows[0]?.[0] === true;
}

async function currentVersion(c: Queryable): Promise<number> {
  const rows = await q(c, `SELECT coalesce(max(version), 0) FROM ${STEPS_TABLE}`);
  return num(rows[0]?.[0] ?? 0);
}

/**
 * Brings the schema to SCHEMA_VERSION: each step in its own transaction, all under one advisory
 * lock (a second node waits, then finds nothing to do). Returns the versions before and after.
 * A database from a development build is refused before anything is written to it.
 */
export async function migrate(db: Db): Promise<{ from: number; to: number }> {
  return db.with(async (c) => {
    await c.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
    try {
      if (await tableExists(c, PRE_RELEASE_TABLE)) throw new SchemaPreReleaseError();
      await c.query(
        `CREATE TABLE IF NOT EXISTS ${STEPS_TABLE} (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const from = await currentVersion(c);
      if (from > SCHEMA_VERSION) throw new SchemaTooNewError(from);
      for (let v = from + 1; v <= SCHEMA_VERSION; v++) {
        await c.query('BEGIN');
        try {
          await c.query(MIGRATIONS[v - 1] as string);
          await c.query(`INSERT INTO ${STEPS_TABLE} (version) VALUES ($1)`, [v]);
          await c.query('COMMIT');
        } catch (err) {
          await c.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      }
      return { from, to: SCHEMA_VERSION };
    } finally {
      await c.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]).catch(() => undefined);
    }
  });
}

/** The schema version of the database (0 when latch never migrated it). */
export async function schemaVersion(db: Db): Promise<number> {
  if ((await db.value(`SELECT to_regclass($1) IS NOT NULL`, [STEPS_TABLE])) !== true) return 0;
  return num(await db.value(`SELECT coalesce(max(version), 0) FROM ${STEPS_TABLE}`));
}

/** Throws unless the schema is exactly this code's version. */
export async function checkSchema(db: Db): Promise<void> {
  if ((await db.value(`SELECT to_regclass($1) IS NOT NULL`, [PRE_RELEASE_TABLE])) === true)
    throw new SchemaPreReleaseError();
  const found = await schemaVersion(db);
  if (found > SCHEMA_VERSION) throw new SchemaTooNewError(found);
  if (found < SCHEMA_VERSION) throw new SchemaTooOldError(found);
}
