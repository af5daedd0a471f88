// Loading indexes from checkpoint images on PostgreSQL: a node loads more stores than its pool has
// connections (each image read gives its connection back), and a load that fails because the
// database is unreachable is retried with backoff while the store answers 503 `unavailable`,
// never crashing the process; once the database is back the node becomes ready by itself.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AppError } from '../../src/errors.js';
import { LatchService } from '../../src/engine/service.js';
import { openPostgresStorage, type PgStorage } from '../../src/storage/postgres/index.js';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/postgres.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { checkOf, config, MODEL, tk } from '../support/pg-node.js';

const run = hasPostgres();
let db: TestDatabase;
const stores: string[] = [];
const STORES = 5;

beforeAll(async () => {
  if (!run) return;
  db = await createTestDatabase();
  // Five stores, each with a checkpoint image (written at close) and a change-log tail after it.
  const writer = new LatchService(await openPostgresStorage({ url: db.url, poolSize: 2 }), config, () => undefined);
  for (let i = 0; i < STORES; i++) {
    const s = (await writer.createStore(`load-${i}`)).id;
    await writer.writeModel(s, MODEL);
    await writer.write({
      storeId: s,
      writes: [tk(`doc:${i}`, 'user:anne')],
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
    stores.push(s);
  }
  await writer.close();
  const tail = new LatchService(await openPostgresStorage({ url: db.url, poolSize: 2 }), config, () => undefined);
  await tail.ready();
  for (const [i, s] of stores.entries())
    await tail.write({
      storeId: s,
      writes: [tk(`doc:${i}`, 'user:bob')],
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
  // Closing writes new images; the tail is what the last write after them adds.
  await tail.close();
});

afterAll(async () => {
  if (run) await db.drop();
});

describe.runIf(run)('index loads on PostgreSQL', () => {
  it('a pool of 2 loads 5 stores from their images, and every connection is back in the pool afterwards', async () => {
    const storage = await openPostgresStorage({ url: db.url, poolSize: 2, connectTimeoutMs: 2000 });
    const logged: string[] = [];
    const node = new LatchService(storage, config, (_level, msg) => void logged.push(msg));
    try {
      await node.ready();
      expect(logged).toEqual([]);
      expect(node.stats().indexes.stores).toBe(STORES);
      for (const [i, s] of stores.entries()) {
        expect((await node.check(checkOf(s, tk(`doc:${i}`, 'user:anne')))).allowed).toBe(true);
        expect((await node.check(checkOf(s, tk(`doc:${i}`, 'user:bob')))).allowed).toBe(true);
      }
      const pool = (storage as PgStorage).db.pool;
      // A store's first request also starts reading its shadow setting in the background
      // (state/shadow-settings.ts): once those reads end, no connection is left checked out.
      await vi.waitFor(() => {
        expect(pool.totalCount - pool.idleCount).toBe(0);
        expect(pool.waitingCount).toBe(0);
      });
    } finally {
      await node.close();
    }
  });

  it('a checkpoint read given back unread, before or after its first chunk, frees its connection', async () => {
    const storage = await openPostgresStorage({ url: db.url, poolSize: 2, connectTimeoutMs: 2000 });
    try {
      for (let i = 0; i < 3; i++) {
        const cp = await storage.readCheckpoint(stores[0] as string);
        expect(cp?.revision).toBeGreaterThanOrEqual(1);
        const it = (cp as { chunks: AsyncIterable<Uint8Array> }).chunks[Symbol.asyncIterator]();
        if (i === 1) expect((await it.next()).done).toBe(false);
        await it.return?.();
      }
      const pool = (storage as PgStorage).db.pool;
      expect(pool.totalCount - pool.idleCount).toBe(0);
      expect(await storage.revision(stores[0] as string)).toBe(2);
    } finally {
      await storage.close();
    }
  });

  it('a load that finds the database unreachable is retried with backoff; the store answers 503 meanwhile, then serves', async () => {
    const target = new URL(db.url);
    const proxy = await TcpProxy.open({ host: target.hostname, port: Number(target.port) });
    const storage = await openPostgresStorage({ url: proxy.url(db.url), poolSize: 2, connectTimeoutMs: 1000 });
    await proxy.stop();
    const retries: Record<string, unknown>[] = [];
    let firstRetry: () => void = () => undefined;
    const retried = new Promise<void>((resolve) => (firstRetry = resolve));
    const node = new LatchService(storage, config, (level, msg, fields) => {
      if (msg !== 'index load failed; retrying') return;
      expect(level).toBe('warn');
      retries.push(fields);
      firstRetry();
    });
    let ready = false;
    const readiness = node.ready().then(() => void (ready = true));
    try {
      await retried;
      expect(ready).toBe(false);
      const err = await node.check(checkOf(stores[0] as string, tk('doc:0', 'user:anne'))).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(AppError);
      expect((err as AppError).code).toBe('unavailable');
      expect((err as AppError).status).toBe(503);
      await proxy.start();
      await readiness;
      expect(retries.length).toBeGreaterThanOrEqual(1);
      expect(retries[0]?.retry_in_ms).toBe(250);
      if (retries.length > 1) expect(retries[1]?.retry_in_ms).toBe(500);
      expect(node.stats().indexes.stores).toBe(STORES);
      for (const [i, s] of stores.entries())
        expect((await node.check(checkOf(s, tk(`doc:${i}`, 'user:bob')))).allowed).toBe(true);
    } finally {
      await node.close();
      await proxy.stop();
    }
  });

  it('close ends a load that is still retrying', async () => {
    const target = new URL(db.url);
    const proxy = await TcpProxy.open({ host: target.hostname, port: Number(target.port) });
    const storage = await openPostgresStorage({ url: proxy.url(db.url), poolSize: 2, connectTimeoutMs: 500 });
    await proxy.stop();
    let firstRetry: () => void = () => undefined;
    const retried = new Promise<void>((resolve) => (firstRetry = resolve));
    const node = new LatchService(storage, config, (_level, msg) => {
      if (msg === 'index load failed; retrying') firstRetry();
    });
    await retried;
    await node.close();
    await node.ready();
    expect(node.stats().indexes.stores).toBe(0);
  });
});
