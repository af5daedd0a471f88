// The storage contract: one interface, three backends (LevelDB in ./level.ts, memory in
// ./memory.ts, PostgreSQL in ./postgres/), one test suite (test/storage/suite.ts) run against all.
//
// Guarantees every backend keeps:
// - every mutating call is one atomic batch (LevelDB: one `batch()` with `sync: true`;
//   PostgreSQL: one transaction) and is durable when its promise resolves; a call that rejects
//   changed nothing;
// - each tuple write bumps the store's revision by exactly one (revisions strictly increase) and
//   records one change per tuple (deletes before writes, in request order);
// - a deleted store vanishes from every read at once (tombstone) and its keys are reclaimed later
//   in the background, never with `db.clear()`.
// Inputs are already validated by the caller (api/engine); storage only enforces existence rules.

import type {
  Assertion,
  AuthorizationModel,
  AuthorizationModelInput,
  IndexedRelation,
  Page,
  PageRequest,
  PermissionIndexRecord,
  ShadowSetting,
  Store,
  Tuple,
  TupleChange,
  TupleFilter,
  TupleKey,
  TupleWrite,
} from '../domain/types.js';
import type { PriorityLane } from '../domain/turn.js';

// Defined in src/domain (the engine's contract uses them too); named here for storage's users.
export type { IndexedRelation, Page, PageRequest, PermissionIndexRecord, ShadowSetting, TupleFilter, TupleWrite };

/**
 * A page of changes. `cursors[i]` is the cursor that resumes right after `items[i]` (so the last
 * one equals `next`): a consumer that stops after any change can resume without a gap or a
 * repeat. Example: items [c1, c2] → cursors [after-c1, after-c2], next = after-c2.
 */
export interface ChangePage extends Page<TupleChange> {
  readonly cursors: readonly string[];
}

export interface WriteResult {
  /** The store's revision after this write (unchanged when every op was ignored). */
  readonly revision: number;
  /** RFC 3339 time stamped on the tuples and changes of this write. */
  readonly timestamp: string;
  /** The tuples actually deleted and written (ignored ones left out), for index maintenance. */
  readonly deleted: readonly TupleKey[];
  readonly written: readonly TupleKey[];
}

/** What `Storage.deleteMatching` did. */
export interface DeletedMatching {
  readonly result: WriteResult;
  /** At least one more tuple matched beyond the limit. */
  readonly more: boolean;
}

/** What `Storage.subscribe` reports. */
export type StorageEvent =
  | {
      readonly kind: 'tuples';
      readonly storeId: string;
      readonly revision: number;
      /** The revision's changes when the event carries them (another node's small write on PostgreSQL). */
      readonly changes?: RevisionChanges | undefined;
    }
  | { readonly kind: 'model'; readonly storeId: string; readonly modelId: string }
  | { readonly kind: 'store'; readonly storeId: string; readonly deleted: boolean };

/** One revision's changes: its deletes, then its writes, each in changelog order. */
export interface RevisionChanges {
  readonly deleted: readonly TupleKey[];
  readonly written: readonly TupleKey[];
}

export interface RevisionChange {
  readonly revision: number;
  readonly operation: 'write' | 'delete';
  readonly tuple: TupleKey;
  /**
   * Optional, deletes only: the tuple as it was deleted (condition and `expires_at` included),
   * when the backend recorded it (every backend does; LevelDB entries written before it did have
   * none). Example: deleting `doc:1#viewer@user:anne` written with condition `office` → prior
   * carries that condition.
   */
  readonly prior?: TupleKey | undefined;
}

export interface ChangeQuery extends PageRequest {
  /** Only changes whose object type equals this. */
  readonly type?: string | undefined;
  /** Only changes at or after this time (RFC 3339). */
  readonly startTime?: string | undefined;
}

export interface StoreQuery extends PageRequest {
  /** Exact store name filter. */
  readonly name?: string | undefined;
}

/** One member row of the placement registry (ClusterRegistry), as every node reads it. */
export interface ClusterMember {
  readonly nodeId: string;
  /** The URL other nodes forward requests to (`--advertise-url`). */
  readonly url: string;
  /** The member's weight in placement (`--capacity`). */
  readonly capacity: number;
  /** Set by `latch cluster drain`: the member owns no store from then on. */
  readonly draining: boolean;
  /** Milliseconds until the lease lapses, by the database's clock (≤ 0: lapsed, the member is out). */
  readonly leaseLeftMs: number;
  /** Stores the member answers for now, and stores it is loading. */
  readonly ready: readonly string[];
  readonly loading: readonly string[];
}

/** What a node reports on each heartbeat. */
export interface ClusterHeartbeat {
  readonly nodeId: string;
  readonly url: string;
  readonly capacity: number;
  /** The lease granted from now, by the database's clock. */
  readonly leaseMs: number;
  readonly ready: readonly string[];
  readonly loading: readonly string[];
}

/**
 * Membership and held stores of nodes placed across a cluster (`latch serve --placement`), kept
 * in the shared datastore (PostgreSQL): the one source every node reads, no consensus of its own.
 */
export interface ClusterRegistry {
  /** Registers or renews the node's lease with what it holds; then every member row (lapsed ones included). */
  heartbeat(beat: ClusterHeartbeat): Promise<ClusterMember[]>;
  /** Every member row. */
  members(): Promise<ClusterMember[]>;
  /** The ids of every store not deleted. */
  storeIds(): Promise<string[]>;
  /** Marks a member as draining; false when there is no such member. */
  drain(nodeId: string): Promise<boolean>;
  /** Removes the node's row (a clean shutdown: its lease ends now). */
  leave(nodeId: string): Promise<void>;
}

/**
 * What a caller knows of a store's tuples at one revision (the engine's index): `mayHold(t)` is
 * false only for a tuple (object, relation, user) the store does not hold at `revision`. A bulk
 * import reads the stored value only of the tuples it may hold (for the condition and expiry
 * check); the storage uses the hint only while the store is still at `revision`, under its own
 * write lock, and is correct without it.
 */
export interface HeldHint {
  readonly revision: number;
  mayHold(t: TupleKey): boolean;
}

export interface Storage {
  /** A human-readable name of the backend: 'leveldb', 'memory' or 'postgres'. */
  readonly kind: string;
  /**
   * True when the datastore itself orders concurrent tuple writes of one store across every
   * node (PostgreSQL: the store's row lock, taken inside the one write statement), so a node may
   * have several writes of a store in flight; false when the node must queue them (memory,
   * LevelDB: one process owns the data and a queue costs nothing).
   */
  readonly ordersWrites: boolean;
  /** The placement registry, on a datastore shared by nodes (PostgreSQL); absent elsewhere. */
  readonly cluster?: ClusterRegistry | undefined;
  close(): Promise<void>;

  /**
   * Tells the listener about every commit that changes what a node serves, made through this
   * backend object or (on a shared datastore such as PostgreSQL) by any other node. Best effort:
   * an event may come late, twice or, across nodes, not at all, so a follower also polls
   * `revision()`; it never comes before the commit is visible to reads. Returns the unsubscribe
   * function; the listener runs synchronously and must not throw. Example: a tuple write that committed revision 7 of store S → `{ kind: 'tuples',
   * storeId: S, revision: 7 }`.
   */
  subscribe(listener: (event: StorageEvent) => void): () => void;

  createStore(name: string): Promise<Store>;
  /** Undefined when unknown or deleted. */
  getStore(id: string): Promise<Store | undefined>;
  listStores(query: StoreQuery): Promise<Page<Store>>;
  /** Tombstones the store; false when unknown or already deleted. */
  deleteStore(id: string): Promise<boolean>;

  /** Stores a new immutable model with a fresh ULID (greater than every earlier id of the store). */
  writeModel(storeId: string, model: AuthorizationModelInput): Promise<AuthorizationModel>;
  getModel(storeId: string, id: string): Promise<AuthorizationModel | undefined>;
  /** The model with the greatest id, or undefined when the store has none. */
  latestModel(storeId: string): Promise<AuthorizationModel | undefined>;
  /** Newest first. */
  listModels(storeId: string, page: PageRequest): Promise<Page<AuthorizationModel>>;

  /** Applies deletes then writes atomically; see TupleWrite for the duplicate/missing rules. */
  writeTuples(storeId: string, write: TupleWrite): Promise<WriteResult>;
  /**
   * One chunk of a bulk import: writes only, as one atomic batch (one revision, one write change
   * per new tuple). The changes (and `written`) come grouped by object type: the types in the
   * order of their first tuple, input order within a type (`groupedByType`). A tuple already stored identically (condition and expiry) is
   * skipped, so re-sending a chunk changes nothing; one stored with another condition or expiry
   * throws transaction_conflict (nothing written), as `writeTuples` with onDuplicate 'ignore'.
   * Inputs are validated by the caller and hold no key twice. Example: importTuples(s, [a, b])
   * with `a` stored → revision + 1, one change (write b), `written` = [b].
   * `held` (optional, a hint from the caller's index) lets a backend skip reading the tuples it
   * rules out; a backend may ignore it, and ignores it unless the store is at `held.revision`.
   * `lane` (optional): a backend that plans the chunk on the calling thread in slices holds a
   * section of it open while it does (PriorityLane, src/domain/turn.ts), not while it writes.
   */
  importTuples(
    storeId: string,
    tuples: readonly TupleKey[],
    held?: HeldHint,
    lane?: PriorityLane,
  ): Promise<WriteResult>;
  /**
   * Backends with `ordersWrites` only (PostgreSQL): the write of `writeTuples`, guarded. Takes the
   * store's write lock (held against every node), calls `guard` with the store's revision read
   * under it, and applies `write` under the same lock only if `guard` resolves: no other write of
   * the store can commit between the two. A guard that rejects → nothing written, its error thrown.
   * Example: guard(7) sees revision 7; the write then commits revision 8, whoever else is writing.
   */
  writeTuplesGuarded?(
    storeId: string,
    write: TupleWrite,
    guard: (revision: number) => Promise<void>,
  ): Promise<WriteResult>;
  /**
   * Delete by filter in one step (optional: where absent the engine reads the matches, then
   * deletes them through `writeTuples`): the first `limit` tuples `filter` selects, in Read order,
   * deleted as one write (one revision, one delete change each, as `writeTuples` records them);
   * `more` when at least one more matched. Nothing matched → nothing changes. `planned`, when
   * given, may be told the write's result after it is planned and before it has committed (the
   * key-value backends: while the batch is written), for work that only reads it; the write may
   * still fail.
   */
  deleteMatching?(
    storeId: string,
    filter: TupleFilter,
    limit: number,
    planned?: (result: WriteResult) => void,
  ): Promise<DeletedMatching>;
  /**
   * The expiry sweep (tuple `expires_at`, docs/reference/decisions.md D15): deletes, as one write under the store's write
   * order, up to `limit` tuples whose expiry is at or before `now` (ms since the epoch), earliest
   * expiry first. It bumps the revision once and records one delete change per tuple whose
   * tuple key carries the tuple's `expires_at` (that is how a sweep shows in ReadChanges); a write
   * that deleted or replaced a tuple first wins (its expiry entry went with it). Nothing expired →
   * nothing changes (revision unchanged, no change). Example: `doc:1#viewer@user:anne` written with
   * expires_at 10:00 → deleteExpired(s, 10:00, 100) deletes it; deleteExpired(s, 09:59, 100) does not.
   */
  deleteExpired(storeId: string, now: number, limit: number): Promise<WriteResult>;
  /** The earliest `expires_at` (ms) among the store's tuples, undefined when none expires (or the store is unknown). */
  firstExpiry(storeId: string): Promise<number | undefined>;
  /**
   * Tuples matching the filter, in a stable order: (object, relation, user), or for the by-user
   * shape `{object: "T:", user[, relation]}` where `readsByUser`, (relation, object id)
   * (tuples.ts scanFor).
   */
  readTuples(storeId: string, filter: TupleFilter, page: PageRequest): Promise<Page<Tuple>>;
  /**
   * Whether the by-user Read shape is served from an index of the datastore (PostgreSQL). The
   * key-value backends keep none: one key per tuple makes a bulk import about a fifth faster and
   * a delete write one key instead of two. Their `readTuples` still answers that shape, by
   * scanning the object type; the engine serves it from the store's in-memory index and
   * `tupleValues` instead (engine/commands/read.ts).
   */
  readonly readsByUser: boolean;
  /**
   * The stored tuples at these keys, in order, undefined where none is stored (or the store is
   * unknown); required where `readsByUser` is false. Example: after writing doc:1#viewer@user:anne,
   * tupleValues(s, [that key, doc:2#viewer@user:anne]) → [its Tuple, undefined].
   */
  tupleValues?(
    storeId: string,
    keys: readonly Pick<TupleKey, 'object' | 'relation' | 'user'>[],
  ): Promise<(Tuple | undefined)[]>;
  /** Every tuple of the store with the revision it was read at; used to build the index. */
  scanTuples(storeId: string): Promise<{ revision: number; tuples: AsyncIterable<TupleKey> }>;
  /** Changes oldest first, with the cursor after each one. */
  readChanges(storeId: string, query: ChangeQuery): Promise<ChangePage>;
  /** The store's current revision (0 before the first tuple write). */
  revision(storeId: string): Promise<number>;
  /**
   * Optional: the current revision of each of `storeIds` in one round trip, undefined for a store
   * unknown or deleted. Followers poll every loaded store with it (one query per poll however many
   * stores a node holds). Example: revisions([s, gone]) → Map { s → 7, gone → undefined }.
   */
  revisions?(storeIds: readonly string[]): Promise<Map<string, number | undefined>>;

  /**
   * Changes with revision > `revision`, oldest first, each with its revision; used to replay the
   * tail of the log onto an index checkpoint. Example: after three single-tuple writes,
   * changesSince(s, 1) yields the changes of revisions 2 and 3.
   */
  changesSince(storeId: string, revision: number): AsyncIterable<RevisionChange>;

  /**
   * The commit time (ms since the epoch) of revision `revision` of the store; undefined for
   * revision 0, a revision not committed yet, or an unknown store. Queries at a past revision
   * evaluate tuple expiry at this instant. Example: a write committed revision 3 at 10:00:00.250 →
   * revisionTime(s, 3) = Date.parse('…T10:00:00.250Z').
   */
  revisionTime(storeId: string, revision: number): Promise<number | undefined>;
  /**
   * The last revision committed at or before `ms` (ms since the epoch), with its commit time;
   * undefined when none was (the store had no tuple write yet then, or is unknown). Example: writes
   * at 10:00 (revision 1) and 10:05 (revision 2) → revisionAt(s, 10:03) = {revision: 1, ms: 10:00}.
   */
  revisionAt(storeId: string, ms: number): Promise<{ revision: number; ms: number } | undefined>;

  /**
   * Replaces the store's index checkpoint: an opaque image of the compact index at `revision`,
   * stored in chunks (each ≤ 8 MiB). Lets a restart load 10M tuples without decoding one key per
   * tuple. Streams through `openCheckpoint` (one chunk batch in memory at a time); the new image
   * becomes visible at once when the promise resolves, and a rejected call leaves the previous one.
   */
  writeCheckpoint(
    storeId: string,
    revision: number,
    chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  ): Promise<boolean>;
  /**
   * Starts a streamed replacement of the store's checkpoint at `revision`, under a generation of
   * its own: chunks are stored as they are written, the previous checkpoint stays the one read
   * until `commit`. Several writers may be open for one store; a commit replaces the head unless
   * the head's revision is higher (see CheckpointWriter.commit).
   * Throws store_id_not_found for an unknown or deleted store (so do the writer's calls).
   */
  openCheckpoint(storeId: string, revision: number): Promise<CheckpointWriter>;
  /**
   * The last checkpoint, or undefined. Chunks come back in the order written. The reader must
   * consume `chunks` to its end or call its iterator's `return()`: the backend may hold a
   * connection or a snapshot until then.
   */
  readCheckpoint(storeId: string): Promise<{ revision: number; chunks: AsyncIterable<Uint8Array> } | undefined>;

  /**
   * A random secret shared by everything that uses this datastore, made on first use and kept:
   * e.g. the continuation-token key, so tokens survive restarts and work on every node. Concurrent
   * first calls (any node) all get the one value stored. 32 random bytes, base64url.
   */
  secret(name: string): Promise<string>;

  /** Stores a new permission index definition. Throws store_id_not_found for an unknown or deleted store. */
  putPermissionIndex(storeId: string, record: PermissionIndexRecord): Promise<void>;
  /** Undefined when the store or the index is unknown. */
  getPermissionIndex(storeId: string, id: string): Promise<PermissionIndexRecord | undefined>;
  /** Every definition of the store, in id order (creation order); empty for an unknown store. */
  listPermissionIndexes(storeId: string): Promise<PermissionIndexRecord[]>;
  /** False when the store or the index is unknown. */
  deletePermissionIndex(storeId: string, id: string): Promise<boolean>;

  /** The store's shadow model setting; undefined when none is set or the store is unknown or deleted. */
  readShadow(storeId: string): Promise<ShadowSetting | undefined>;
  /**
   * The shadow settings of several stores in ONE datastore read (the settings refresh of a node
   * holding many stores): each live store of `storeIds` maps to its setting, or to null when it
   * has none; unknown and deleted stores are absent. Example: stores a (setting x), b (none), c
   * (deleted) → {a: x, b: null}.
   */
  readShadows(storeIds: readonly string[]): Promise<Map<string, ShadowSetting | null>>;
  /**
   * Sets (or, with undefined, clears) the store's shadow model setting; every node reads the same
   * one. Throws store_id_not_found for an unknown or deleted store. Example: writeShadow(s,
   * {modelId: m, sampling: 0.5, updatedAt}) → readShadow(s) returns it on any node, after a restart too.
   */
  writeShadow(storeId: string, setting: ShadowSetting | undefined): Promise<void>;

  readAssertions(storeId: string, modelId: string): Promise<Assertion[]>;
  /** Replaces the model's assertions. */
  writeAssertions(storeId: string, modelId: string, assertions: readonly Assertion[]): Promise<void>;
}

/**
 * One streamed checkpoint. Example: `w = await openCheckpoint(s, 42)`, `await w.write(header)`,
 * `await w.write(section)` …, `await w.commit()`: readCheckpoint(s) now yields revision 42 and
 * those bytes in order; until then (or after `abort`, or a crash) it yields the previous image.
 */
export interface CheckpointWriter {
  /**
   * Appends bytes (split into chunks of ≤ 8 MiB). Buffers about 2 MiB, then stores them in one
   * synced batch. `chunk` is kept by reference until stored: the caller must not modify it.
   */
  write(chunk: Uint8Array): Promise<void>;
  /**
   * One atomic, synced batch: the rest of the chunks, the head naming this generation, and the
   * deletion of the previous checkpoint's chunks and of orphans (chunks of writers that neither
   * committed nor aborted, e.g. because the process died). The writer is finished afterwards.
   *
   * Never replaces a head whose revision is higher than this writer's (several nodes may
   * checkpoint one store; the freshest image stays): the commit then deletes its own chunks and
   * resolves false. True when this image became the head (also over a head of equal revision).
   */
  commit(): Promise<boolean>;
  /** Deletes the chunks stored so far (best effort: what remains is an orphan); never rejects. */
  abort(): Promise<void>;
}

export interface OpenOptions {
  /** LevelDB directory; omitted → in-memory backend. */
  readonly path?: string | undefined;
  /** PostgreSQL instead of LevelDB (takes precedence over `path`). */
  readonly postgres?: PostgresOpenOptions | undefined;
}

/** How to reach and use PostgreSQL (`--datastore postgres`). */
export interface PostgresOpenOptions {
  /** `postgres://user:password@host:port/database`. */
  readonly url: string;
  /** Connections per process (default 10). */
  readonly poolSize?: number | undefined;
  /** `statement_timeout` in ms (default 30000; 0 = none). */
  readonly statementTimeoutMs?: number | undefined;
  /** Migrate the schema at open (default true); false → refuse a schema other than this code's. */
  readonly migrate?: boolean | undefined;
  /** At open, how long an unreachable database is retried with backoff (default 0: fail at once). */
  readonly startTimeoutMs?: number | undefined;
  /** One-line reports of background connection failures (the pool and the listener recover). */
  readonly onError?: ((message: string) => void) | undefined;
}
