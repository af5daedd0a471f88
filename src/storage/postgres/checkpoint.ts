// Index checkpoints on PostgreSQL: a head row per store {revision, generation, chunks} and chunk
// rows (bytea, ≤ 8 MiB each) under a generation from one database-wide sequence, so writers on
// different nodes never share rows.
//
// A writer registers its generation in latch_checkpoint_writers, stores its chunks in
// transactions of about 2 MiB, and commits in one transaction: an upsert of the head that only
// replaces a head whose revision is not higher than its own, then the deletion of every chunk of
// the store that belongs neither to the head nor to a live writer (the previous image, orphans of
// writers that died, or its own chunks when a fresher image won). Readers read the head and its
// chunks in one REPEATABLE READ transaction, so a commit in between is invisible to them: first
// every chunk's length (all must be there), then batches of about 16 MiB by binary COPY
// (copy-out.ts: raw bytes, no hex text), the next batch read while the caller decodes this one.
//
// A writer counts as live while it stores chunks: one that has not touched its row for
// WRITER_STALE_MS is taken for dead and its chunks for orphans. Every statement that adds data
// first takes the store's row FOR KEY SHARE, which a tombstone's FOR UPDATE excludes: nothing is
// stored for a deleted store.

import { fail } from '../../errors.js';
import { PendingChunks } from '../checkpoint.js';
import type { CheckpointWriter } from '../types.js';
import { copyOut, type CopyRow } from './copy-out.js';
import { classify, num, q, type Client, type Db } from './db.js';

/**
 * Bytes of chunks one read statement fetches (at least one chunk). One batch is decoded while
 * the next is read, so a reader holds about twice this: at 16 MiB, a 10M-tuple image (≈ 470 MB,
 * ≈ 900 chunks of ≤ 2 MiB) is ≈ 60 statements.
 */
const READ_BATCH_BYTES = 16 * 1024 * 1024;

/** A writer silent this long is dead (a 10M-tuple image stores a batch every few ms). */
const WRITER_STALE_MS = 10 * 60 * 1000;

async function lockLive(c: Client, storeId: string): Promise<void> {
  const rows = await q(c, 'SELECT 1 FROM latch_stores WHERE id = $1 AND deleted_ms IS NULL FOR KEY SHARE', [storeId]);
  if (rows.length === 0) throw fail.storeNotFound();
}

export async function openCheckpoint(db: Db, storeId: string, revision: number): Promise<CheckpointWriter> {
  const generation = await db.tx(async (c) => {
    await lockLive(c, storeId);
    const g = num((await q(c, `SELECT nextval('latch_checkpoint_generation')`))[0]?.[0]);
    await q(c, 'INSERT INTO latch_checkpoint_writers (generation, store_id, touched_ms) VALUES ($1, $2, $3)', [
      g,
      storeId,
      Date.now(),
    ]);
    return g;
  });
  return new PgCheckpointWriter(db, storeId, revision, generation);
}

/** Deletes the chunks of the store that are neither the head's nor a live writer's. */
const SWEEP = `
  DELETE FROM latch_checkpoint_chunks k
   WHERE k.store_id = $1
     AND k.generation IS DISTINCT FROM (SELECT generation FROM latch_checkpoints h WHERE h.store_id = $1)
     AND NOT EXISTS (SELECT 1 FROM latch_checkpoint_writers w WHERE w.generation = k.generation AND w.touched_ms > $2)`;

class PgCheckpointWriter implements CheckpointWriter {
  private readonly pending = new PendingChunks();
  private count = 0;
  private finished = false;

  constructor(
    private readonly db: Db,
    private readonly storeId: string,
    private readonly revision: number,
    private readonly generation: number,
  ) {}

  async write(chunk: Uint8Array): Promise<void> {
    if (this.finished) throw new Error('latch: checkpoint writer already finished');
    if (this.pending.add(chunk)) await this.db.tx((c) => this.store(c));
  }

  /** Inserts the pending chunks and touches the writer's row. */
  private async store(c: Client): Promise<void> {
    await lockLive(c, this.storeId);
    for (const data of this.pending.take()) {
      await q(c, 'INSERT INTO latch_checkpoint_chunks (store_id, generation, idx, data) VALUES ($1, $2, $3, $4)', [
        this.storeId,
        this.generation,
        this.count,
        Buffer.from(data.buffer, data.byteOffset, data.byteLength),
      ]);
      this.count++;
    }
    await q(c, 'UPDATE latch_checkpoint_writers SET touched_ms = $2 WHERE generation = $1', [
      this.generation,
      Date.now(),
    ]);
  }

  /** True when this image became the head; false when a head of a higher revision was kept. */
  async commit(): Promise<boolean> {
    if (this.finished) throw new Error('latch: checkpoint writer already finished');
    this.finished = true;
    try {
      return await this.db.tx(async (c) => {
        await this.store(c);
        const won = await q(
          c,
          `INSERT INTO latch_checkpoints AS h (store_id, revision, generation, chunks) VALUES ($1, $2, $3, $4)
           ON CONFLICT (store_id) DO UPDATE SET revision = EXCLUDED.revision, generation = EXCLUDED.generation, chunks = EXCLUDED.chunks
            WHERE h.revision <= EXCLUDED.revision
           RETURNING 1`,
          [this.storeId, this.revision, this.generation, this.count],
        );
        await q(c, 'DELETE FROM latch_checkpoint_writers WHERE generation = $1', [this.generation]);
        await q(c, SWEEP, [this.storeId, Date.now() - WRITER_STALE_MS]);
        return won.length > 0;
      });
    } catch (err) {
      await this.abortStored();
      throw err;
    }
  }

  async abort(): Promise<void> {
    if (this.finished) return;
    this.finished = true;
    this.pending.take();
    await this.abortStored();
  }

  /** Best effort: what is left is an orphan for the next commit or the store's reclamation. */
  private async abortStored(): Promise<void> {
    await this.db
      .tx(async (c) => {
        await q(c, 'DELETE FROM latch_checkpoint_chunks WHERE store_id = $1 AND generation = $2', [
          this.storeId,
          this.generation,
        ]);
        await q(c, 'DELETE FROM latch_checkpoint_writers WHERE generation = $1', [this.generation]);
      })
      .catch(() => undefined);
  }
}

/**
 * The head and its chunks in one REPEATABLE READ transaction on a connection of its own, held
 * until the chunks are read to the end (or the reader stops). Contract for the consumer: while it
 * works on one chunk, the next batch's statement is running, and once the socket's buffers are
 * full it waits for this thread to read them; so no chunk may hold the thread for anything near
 * the statement timeout (the image decoder does bounded work per chunk).
 */
export async function readCheckpoint(
  db: Db,
  storeId: string,
): Promise<{ revision: number; chunks: AsyncIterable<Uint8Array> } | undefined> {
  let c: Client;
  try {
    c = await db.pool.connect();
  } catch (err) {
    return classify(err);
  }
  let head: unknown[] | undefined;
  try {
    await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    head = (
      await q(
        c,
        'SELECT h.revision, h.generation, h.chunks FROM latch_checkpoints h JOIN latch_stores s ON s.id = h.store_id WHERE h.store_id = $1 AND s.deleted_ms IS NULL',
        [storeId],
      )
    )[0];
    if (!head) {
      await c.query('COMMIT');
      c.release();
      return undefined;
    }
  } catch (err) {
    c.release(err instanceof Error ? err : true);
    return classify(err);
  }
  const [revision, generation, count] = [num(head[0]), num(head[1]), num(head[2])];
  let started = false;
  async function* chunks(): AsyncGenerator<Uint8Array> {
    started = true;
    let broken: Error | undefined;
    let done = false;
    let ahead: Promise<CopyRow[]> | undefined;
    try {
      const batches = await readBatches(c, storeId, generation, count);
      ahead = batches[0] ? readBatch(c, storeId, generation, batches[0]) : undefined;
      for (let b = 0; ahead; b++) {
        const rows = await ahead;
        // The next batch travels while the consumer decodes this one.
        const next = batches[b + 1];
        ahead = next ? readBatch(c, storeId, generation, next) : undefined;
        for (const row of rows) {
          const data = row[1] as Buffer;
          yield new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
        }
      }
      await c.query('COMMIT');
      done = true;
    } catch (err) {
      broken = err instanceof Error ? err : new Error(String(err));
      classify(err);
    } finally {
      // A consumer that stops early: the batch on the wire ends before the ROLLBACK is sent.
      if (ahead) await ahead.catch(() => undefined);
      if (!done && !broken)
        await c
          .query('ROLLBACK')
          .catch((err: unknown) => (broken = err instanceof Error ? err : new Error(String(err))));
      c.release(broken);
    }
  }
  const gen = chunks();
  // A generator's return() before its first next() never runs its body's `finally`: the
  // connection is given back here then.
  const iterator: AsyncIterableIterator<Uint8Array> = {
    [Symbol.asyncIterator]: () => iterator,
    next: () => gen.next(),
    async return(): Promise<IteratorResult<Uint8Array>> {
      if (!started) {
        started = true;
        await c.query('ROLLBACK').then(
          () => c.release(),
          (err: unknown) => c.release(err instanceof Error ? err : true),
        );
      }
      return gen.return(undefined);
    },
  };
  return { revision, chunks: iterator };
}

/** A run of chunk indexes [from, to) read by one statement. */
interface Batch {
  readonly from: number;
  readonly to: number;
}

function missing(storeId: string): Error {
  return new Error(`latch: the index checkpoint of store ${storeId} names chunks that are missing`);
}

/** The head's chunks grouped into batches of about READ_BATCH_BYTES, after checking they all exist. */
async function readBatches(c: Client, storeId: string, generation: number, count: number): Promise<Batch[]> {
  const sizes = await q(
    c,
    'SELECT idx, length(data) FROM latch_checkpoint_chunks WHERE store_id = $1 AND generation = $2 AND idx < $3 ORDER BY idx',
    [storeId, generation, count],
  );
  if (sizes.length !== count) throw missing(storeId);
  const out: Batch[] = [];
  let from = 0;
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    bytes += num(sizes[i]?.[1]);
    if (bytes >= READ_BATCH_BYTES || i === count - 1) {
      out.push({ from, to: i + 1 });
      from = i + 1;
      bytes = 0;
    }
  }
  return out;
}

/**
 * Chunks [from, to) as raw bytes (binary COPY: no hex text form), in order. The promise has a
 * handler at once: it may fail while the consumer still decodes the batch before it.
 */
function readBatch(c: Client, storeId: string, generation: number, b: Batch): Promise<CopyRow[]> {
  const sql = `COPY (SELECT idx, data FROM latch_checkpoint_chunks WHERE store_id = ${c.escapeLiteral(storeId)} AND generation = ${generation} AND idx >= ${b.from} AND idx < ${b.to} ORDER BY idx) TO STDOUT (FORMAT binary)`;
  const rows = copyOut(c, sql).then((rows) => {
    if (rows.length !== b.to - b.from) throw missing(storeId);
    for (const [k, row] of rows.entries())
      if (row[0]?.readInt32BE(0) !== b.from + k || !(row[1] instanceof Buffer)) throw missing(storeId);
    return rows;
  });
  rows.catch(() => undefined);
  return rows;
}
