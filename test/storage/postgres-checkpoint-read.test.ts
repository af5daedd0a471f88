// Reading a checkpoint image from PostgreSQL in batches (binary COPY, the next batch on the wire
// while the consumer decodes this one): the image is one snapshot even when a newer image commits
// between batches, a reader that stops with a batch in flight gives its connection back, a
// missing chunk fails the read, and the binary COPY parser reads any split of the stream.

import { describe, expect, it } from 'vitest';
import pg from 'pg';
import { openPostgresStorage, type PgStorage } from '../../src/storage/postgres/index.js';
import { copyOut, copyOutBytes, parseBinaryCopy } from '../../src/storage/postgres/copy-out.js';
import { databasePerFile } from '../support/postgres.js';

const pgdb = databasePerFile();
const run = pgdb.run;

const MiB2 = 2 * 1024 * 1024;
const PATTERN = Uint8Array.from({ length: MiB2 + 251 }, (_, j) => j % 251);
/** 20 chunks of 2 MiB (40 MiB: three read batches of 16 MiB), each with its own byte pattern. */
const image = (seed: number): Uint8Array[] =>
  Array.from({ length: 20 }, (_, i) => {
    const at = (seed * 31 + i * 7) % 251;
    return PATTERN.slice(at, at + MiB2);
  });

const same = (a: readonly Uint8Array[], b: readonly Uint8Array[]): boolean =>
  a.length === b.length && a.every((x, i) => Buffer.from(x).equals(Buffer.from(b[i] as Uint8Array)));

function inUse(s: PgStorage): number {
  return s.db.pool.totalCount - s.db.pool.idleCount;
}

describe.runIf(run)('postgres checkpoint reads', () => {
  it('reads the image it started with although a newer one commits between batches', async () => {
    const a = await openPostgresStorage({ url: pgdb.url, poolSize: 2 });
    const b = await openPostgresStorage({ url: pgdb.url, poolSize: 2 });
    try {
      const id = (await a.createStore('snapshot')).id;
      const first = image(1);
      const second = image(2);
      await a.writeCheckpoint(id, 1, first);
      const cp = await a.readCheckpoint(id);
      expect(cp?.revision).toBe(1);
      const got: Uint8Array[] = [];
      for await (const chunk of cp?.chunks ?? []) {
        // Copied: a chunk is only valid until the next one is asked for.
        got.push(chunk.slice());
        // After the first chunk the second batch is on the wire; the third is read after this commit.
        if (got.length === 1) expect(await b.writeCheckpoint(id, 2, second)).toBe(true);
      }
      expect(same(got, first)).toBe(true);
      const next = await a.readCheckpoint(id);
      expect(next?.revision).toBe(2);
      const again: Uint8Array[] = [];
      for await (const chunk of next?.chunks ?? []) again.push(chunk.slice());
      expect(same(again, second)).toBe(true);
      expect(inUse(a)).toBe(0);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('a reader that stops with a batch in flight gives its connection back', async () => {
    const one = await openPostgresStorage({ url: pgdb.url, poolSize: 1, connectTimeoutMs: 2000 });
    try {
      const id = (await one.createStore('early')).id;
      await one.writeCheckpoint(id, 4, image(3));
      for (const stopAfter of [1, 8, 9, 19]) {
        const cp = await one.readCheckpoint(id);
        const it = (cp as { chunks: AsyncIterable<Uint8Array> }).chunks[Symbol.asyncIterator]();
        for (let i = 0; i < stopAfter; i++) expect((await it.next()).done).toBe(false);
        await it.return?.();
        expect(inUse(one)).toBe(0);
        expect(await one.revision(id)).toBe(0); // the pool's one connection answers
      }
    } finally {
      await one.close();
    }
  });

  it('a head naming a chunk that is gone fails the read and gives the connection back', async () => {
    const one = await openPostgresStorage({ url: pgdb.url, poolSize: 1, connectTimeoutMs: 2000 });
    const c = new pg.Client({ connectionString: pgdb.url });
    await c.connect();
    try {
      const id = (await one.createStore('holes')).id;
      await one.writeCheckpoint(id, 1, image(4));
      await c.query('DELETE FROM latch_checkpoint_chunks WHERE store_id = $1 AND idx = 11', [id]);
      const cp = await one.readCheckpoint(id);
      let read = 0;
      const reading = (async () => {
        for await (const _ of cp?.chunks ?? []) read++;
      })();
      await expect(reading).rejects.toThrow('names chunks that are missing');
      expect(read).toBe(0); // every chunk's presence is checked before the first is handed out
      expect(inUse(one)).toBe(0);
      expect(await one.revision(id)).toBe(0);
    } finally {
      await c.end();
      await one.close();
    }
  });

  it('parses binary COPY however its bytes are split, NULLs included', async () => {
    const c = new pg.Client({ connectionString: pgdb.url });
    await c.connect();
    try {
      const sql = `COPY (SELECT i, CASE WHEN i % 3 = 0 THEN NULL ELSE decode(repeat(to_hex(i + 16), i), 'hex') END
                         FROM generate_series(1, 40) AS i) TO STDOUT (FORMAT binary)`;
      const rows = await copyOut(c, sql);
      const expected = Array.from({ length: 40 }, (_, k) => {
        const i = k + 1;
        return [i, i % 3 === 0 ? null : [...Buffer.from((i + 16).toString(16).repeat(i), 'hex')]];
      });
      const shape = (rs: (Buffer | null)[][]): unknown[] =>
        rs.map((r) => [r[0]?.readInt32BE(0), r[1] === null ? null : [...(r[1] as Buffer)]]);
      expect(shape(rows)).toEqual(expected);
      // The same stream re-split into pieces of 1, 7 and 1000 bytes.
      const raw = Buffer.concat(await copyOutBytes(c, sql));
      for (const size of [1, 7, 1000]) {
        const parts: Buffer[] = [];
        for (let at = 0; at < raw.byteLength; at += size) parts.push(raw.subarray(at, at + size));
        expect(shape(parseBinaryCopy(parts))).toEqual(expected);
      }
      expect(() => parseBinaryCopy([raw.subarray(0, raw.byteLength - 3)])).toThrow('truncated');
      // A statement error rejects, and the client stays usable.
      await expect(copyOut(c, 'COPY (SELECT 1/0) TO STDOUT (FORMAT binary)')).rejects.toThrow('division by zero');
      expect((await c.query('SELECT 1 AS one')).rows[0]).toEqual({ one: 1 });
    } finally {
      await c.end();
    }
  });
});
