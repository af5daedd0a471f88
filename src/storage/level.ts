// The LevelDB backend (the project's only importer of `level`): a Kv over classic-level, every
// batch synced when asked, and exclusive use of the directory.
//
// Keys are the binary strings of codec.ts stored as UTF-8 (keyEncoding 'utf8'). UTF-8 keeps code
// point order, so LevelDB's bytewise order equals the string order the memory backend uses; and
// string keys come out of classic-level ≈ 2× faster than Buffers (measured on a 600k-key scan:
// 1.5 s with Buffer keys, 0.95–1.5 s with strings). Values are bytes.

import { nextTurn } from '../domain/turn.js';
import { Level } from 'level';
import { mkdir, statfs } from 'node:fs/promises';
import { AppError } from '../errors.js';
import { KvStorage } from './kv-storage.js';
import { FlatIterator, type Kv, type KvEntry, type KvOp, type KvRange, type KvTextEntry, type KvWriter } from './kv.js';
import { clearHolderPid, DataDirectoryInUseError, isLockedError, readHolderPid, writeHolderPid } from './lock.js';

type Db = Level<string, Uint8Array>;

const ROWS_PER_READ = 1000;

/** classic-level range options; undefined bounds must be left out, not passed as undefined. */
function levelRange(r: KvRange): { gt?: string; gte?: string; lt?: string; reverse: boolean; limit: number } {
  const o: { gt?: string; gte?: string; lt?: string; reverse: boolean; limit: number } = {
    reverse: r.reverse ?? false,
    limit: r.limit ?? -1,
  };
  if (r.gt !== undefined) o.gt = r.gt;
  if (r.gte !== undefined) o.gte = r.gte;
  if (r.lt !== undefined) o.lt = r.lt;
  return o;
}

/**
 * The first native read of an iterator: a page of Read (≤ 100 tuples, a few more when a filter
 * skips some) is served by it, instead of decoding ROWS_PER_READ rows to use a tenth of them.
 */
const FIRST_READ = 128;

/** Rows of an already created iterator, FIRST_READ then ROWS_PER_READ per native call; closes it when done. */
function batches<V>(it: {
  nextv(n: number): Promise<[string, V][]>;
  close(): Promise<void>;
}): AsyncIterable<readonly (readonly [string, V])[]> {
  return {
    async *[Symbol.asyncIterator]() {
      try {
        for (let rows = await it.nextv(FIRST_READ); rows.length > 0; rows = await it.nextv(ROWS_PER_READ)) yield rows;
      } finally {
        await it.close();
      }
    },
  };
}

/**
 * LevelDB's memtable (32× its 4 MB default) and table file size (32× 2 MB). A bulk import writes
 * ≈ 260 bytes per tuple (two keys, its share of the changelog record and of index checkpoints):
 * with the defaults a memtable filled every ≈ 15k tuples and each flush started compactions
 * across many small files. Measured, 500k tuples imported through Storage.importTuples, CPU per
 * tuple of LevelDB's threads (its writes and reads in libuv's pool, its compaction): 11.5 µs with
 * the defaults, 9.1 with 32/16 MB, 6.6 with 64/32 MB (same run, load 25-29; wall 38 → 26 s). At
 * 3M tuples through the engine, where compaction grows with the data, the process's threads other
 * than the main one: 8.25 µs per tuple with 64/32 MB, 6.15 with 128/64, 5.40 with 256/128 (load
 * 21-27): 128/64 takes most of the gain for half the memory of 256/128. The memtable takes memory
 * only as writes fill it (up to twice this while one is flushed), and a restart replays at most
 * this much of the log.
 */
const WRITE_BUFFER_BYTES = 128 << 20;
const MAX_FILE_BYTES = 64 << 20;

/** Ops added to a chained batch between two turns of the event loop (LevelKv.batch). */
const BATCH_SLICE = 8192;

/** Free bytes a directory needs before a database whose write failed is reopened. */
const REOPEN_FREE_BYTES = 8 * 1024 * 1024;

/** A LevelDB I/O failure (disk full, read-only file system, EIO): the write did not happen. */
function isIoError(err: unknown): boolean {
  return (
    err instanceof Error &&
    ((err as { code?: unknown }).code === 'LEVEL_IO_ERROR' || err.message.startsWith('IO error'))
  );
}

/** The answer to a write the data directory could not take (docs/reference/decisions.md D17: 503 `unavailable`). */
function unwritable(err: Error): AppError {
  const reason = /no space left/i.test(err.message) ? 'no space left on device' : err.message;
  return new AppError('unavailable', `latch cannot write its data directory: ${reason}; writes resume once it can`, {
    cause: err,
  });
}

class LevelKv implements Kv {
  /**
   * Set when a write failed with an I/O error. The failed batch may have left a partial record at
   * the end of LevelDB's log: a record appended after it would be written but dropped when the
   * log is next recovered (a restart would lose an acknowledged write). So no write goes to that
   * log again: the next write first reopens the database, which recovers the log up to the
   * partial record (the failed batch is discarded whole: its checksum fails) and starts a new
   * one. Reads keep being served meanwhile.
   */
  #broken = false;
  #reopening: Promise<void> | undefined;
  /** Counts reopens: a chained batch made before one was closed with the database. */
  #opens = 0;

  constructor(
    private readonly db: Db,
    private readonly path: string,
  ) {}

  /** Reopens a broken database once the directory has room; 503 `unavailable` until then. */
  async #recover(): Promise<void> {
    this.#reopening ??= (async () => {
      try {
        const fs = await statfs(this.path);
        if (fs.bavail * fs.bsize < REOPEN_FREE_BYTES) throw new Error('IO error: no space left on device (still full)');
        this.#opens++;
        await this.db.close();
        await this.db.open();
        this.#broken = false;
      } catch (err) {
        // A database closed and not reopened (open failed) is retried by the next write; reads
        // fail meanwhile, as they would on a directory that cannot be opened.
        if (this.db.status === 'closed') await this.db.open().catch(() => undefined);
        throw isIoError(err) && err instanceof Error ? unwritable(err) : err;
      } finally {
        this.#reopening = undefined;
      }
    })();
    return this.#reopening;
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    return this.db.get(key);
  }

  async getMany(keys: readonly string[]): Promise<(Uint8Array | undefined)[]> {
    return keys.length === 0 ? [] : this.db.getMany(keys as string[]);
  }

  /**
   * One LevelDB WriteBatch, written atomically (and fsynced when `sync`). Built as a chained
   * batch: the array form of `db.batch(ops)` costs ≈ 9 µs per op in abstract-level's option
   * cloning, the chained form ≈ 1.8 µs (measured here, 300-op batches).
   */
  async batch(ops: readonly KvOp[], sync: boolean): Promise<void> {
    if (this.#broken) await this.#recover();
    const b = this.db.batch();
    try {
      for (let i = 0; i < ops.length; i++) {
        // A large batch (an import chunk: 100,000 ops, ≈ 50 ms) is built in slices, a turn of the
        // event loop between them; the batch is written whole at the end all the same.
        if (i > 0 && i % BATCH_SLICE === 0) await nextTurn();
        const op = ops[i] as KvOp;
        if (op.type === 'put') b.put(op.key, op.value);
        else b.del(op.key);
      }
    } catch (err) {
      // The database closed meanwhile: the unwritten batch is released, nothing was written.
      await b.close().catch(() => undefined);
      throw err;
    }
    await this.#write(b, sync);
  }

  /** Writes a filled chained batch; an I/O error marks the database broken (reopened by the next write) and is 503. */
  async #write(b: { write(options: { sync: boolean }): Promise<void> }, sync: boolean): Promise<void> {
    try {
      await b.write({ sync });
    } catch (err) {
      if (!isIoError(err)) throw err;
      this.#broken = true;
      throw unwritable(err as Error);
    }
  }

  /**
   * A chained batch filled op by op (delete by filter adds its deletes while its scan waits on
   * reads). None while the database is broken (the caller uses `batch`, which reopens it first);
   * one whose database broke (or was reopened) before its `write` fails as that write would have
   * (503), unwritten.
   */
  writer(): KvWriter | undefined {
    if (this.#broken) return undefined;
    const b = this.db.batch();
    const opens = this.#opens;
    const raw = rawPut(b);
    let counted = false;
    return {
      // The first put goes through the batch's `put` (which counts it: a batch `write` finds
      // empty is not written), the rest straight to the native batch (see rawPut).
      put: (key, value) => {
        if (counted && raw !== undefined) raw(key, value);
        else {
          b.put(key, value);
          counted = true;
        }
      },
      del: (key) => void b.del(key),
      write: async (sync) => {
        if (this.#broken || this.#opens !== opens) {
          await b.close();
          throw unwritable(new Error('IO error: an earlier write failed; the database is reopened first'));
        }
        await this.#write(b, sync);
      },
      discard: () => b.close(),
    };
  }

  /** The iterator (and so its snapshot) is created now, not at the first `next()`. */
  entryBatches(range: KvRange): AsyncIterable<readonly KvEntry[]> {
    return batches(this.db.iterator(levelRange(range)));
  }

  textBatches(range: KvRange): AsyncIterable<readonly KvTextEntry[]> {
    return batches(this.db.iterator<string, string>({ ...levelRange(range), valueEncoding: 'utf8' }));
  }

  entries(range: KvRange): AsyncIterable<KvEntry> {
    const batches = this.entryBatches(range);
    return { [Symbol.asyncIterator]: () => new FlatIterator(batches[Symbol.asyncIterator](), (e: KvEntry) => e) };
  }

  keys(range: KvRange): AsyncIterable<string> {
    const it = this.db.keys(levelRange(range));
    return {
      async *[Symbol.asyncIterator]() {
        try {
          for (let rows = await it.nextv(ROWS_PER_READ); rows.length > 0; rows = await it.nextv(ROWS_PER_READ)) {
            yield* rows;
          }
        } finally {
          await it.close();
        }
      },
    };
  }

  /**
   * Writes the memtable to a table file first: LevelDB does not at close, and the next open would
   * replay its log (up to WRITE_BUFFER_BYTES) before serving. Measured with a full 128 MB
   * memtable: reopening took 4.5 s of CPU, 2.1 s with 64 MB (load 25). A manual compaction of a
   * range holding no key (every key starts with a letter, codec.ts) flushes the memtable and
   * compacts nothing. A failed flush (a full disk) leaves the log to replay, as before.
   */
  async close(): Promise<void> {
    await (this.db as Compactable).compactRange?.(NO_KEY_FROM, NO_KEY_TO).catch(() => undefined);
    await this.db.close();
    await clearHolderPid(this.path);
  }
}

/**
 * The native put of a classic-level chained batch (its `_put`, abstract-level's interface to the
 * implementation), bound to `batch`; undefined when it has none. abstract-level's `put` checks
 * the batch is open and the key and value valid, clones an op object with its encodings, encodes
 * the key (utf8: a string stays a string) and value (view: a Uint8Array stays one), and calls
 * `_put(key, value)`: for this database, with no prewrite hook and no 'write' listener, the same
 * call. An import chunk puts 50,000 keys into one batch: the op object and the checks were
 * ≈ 96 bytes allocated (the sampling heap profiler, 3M import) and ≈ 0.05 µs each on the main
 * thread. A put into a batch whose database closed
 * meanwhile reaches the native batch; its `write` then fails as it would have (the batch is not
 * open), unwritten.
 */
function rawPut(batch: object): ((key: string, value: Uint8Array) => void) | undefined {
  const put = (batch as { _put?: unknown })._put;
  return typeof put === 'function'
    ? (put as (this: object, key: string, value: Uint8Array) => void).bind(batch)
    : undefined;
}

/** On Node `Level` is classic-level, whose manual compaction the `level` package's types leave out. */
interface Compactable {
  compactRange?(start: string, end: string): Promise<void>;
}

/** A key range no key of codec.ts lies in (they all start with a letter). */
const NO_KEY_FROM = '\u0000';
const NO_KEY_TO = '\u0000\u0001';

export interface LevelOptions {
  /** Background reclamation of deleted stores (default true). */
  readonly reclaim?: boolean | undefined;
}

/**
 * An ordered Kv on the LevelDB directory at `path` (created if needed), held exclusively: fails
 * fast with DataDirectoryInUseError when another process (or handle) holds it. Exported so other
 * storage modules can keep their own databases without importing `level` themselves.
 */
export async function openLevelKv(path: string): Promise<Kv> {
  await mkdir(path, { recursive: true });
  const db: Db = new Level<string, Uint8Array>(path, {
    keyEncoding: 'utf8',
    valueEncoding: 'view',
    writeBufferSize: WRITE_BUFFER_BYTES,
    maxFileSize: MAX_FILE_BYTES,
  });
  try {
    await db.open();
  } catch (err) {
    if (isLockedError(err)) throw new DataDirectoryInUseError(path, await readHolderPid(path));
    throw err;
  }
  try {
    await writeHolderPid(path);
  } catch (err) {
    await db.close();
    throw err;
  }
  return new LevelKv(db, path);
}

/** The Storage on the LevelDB directory at `path`; see openLevelKv for the locking. */
export async function openLevelStorage(path: string, options: LevelOptions = {}): Promise<KvStorage> {
  return new KvStorage('leveldb', await openLevelKv(path), { reclaim: options.reclaim }).init();
}
