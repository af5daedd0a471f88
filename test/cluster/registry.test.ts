// The placement registry on PostgreSQL renews a node's lease on a connection of its own: with the
// storage pool's every connection taken (checkpoint reads of many loading stores), a heartbeat
// still goes through, and returns every member row in one statement.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStorage, type PgStorage } from '../../src/storage/postgres/index.js';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/postgres.js';

const run = hasPostgres();
let db: TestDatabase;
let storage: PgStorage;

beforeAll(async () => {
  if (!run) return;
  db = await createTestDatabase();
  storage = await openPostgresStorage({ url: db.url, poolSize: 1, connectTimeoutMs: 60_000 });
}, 120_000);

afterAll(async () => {
  await storage?.close();
  if (run) await db.drop();
});

const beat = (nodeId: string, ready: string[] = []) => ({
  nodeId,
  url: `http://${nodeId}`,
  capacity: 1,
  leaseMs: 60_000,
  ready,
  loading: [],
});

describe.runIf(run)('PostgreSQL placement registry', () => {
  it('renews a lease while the storage pool is taken, and reads every row with it', async () => {
    const registry = storage.cluster;
    await registry.heartbeat(beat('b:1', ['S9']));
    // The pool's one connection is held until the heartbeat has answered.
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    let held = false;
    const holder = storage.db.with(async () => {
      held = true;
      await gate;
    });
    await expect.poll(() => held).toBe(true);
    const rows = await registry.heartbeat(beat('a:1', ['S1']));
    release();
    await holder;
    expect(rows.map((m) => m.nodeId)).toEqual(['a:1', 'b:1']);
    const a = rows.find((m) => m.nodeId === 'a:1');
    expect(a?.ready).toEqual(['S1']);
    expect(a?.leaseLeftMs).toBeGreaterThan(0);
    expect(rows.find((m) => m.nodeId === 'b:1')?.ready).toEqual(['S9']);
    // The renewal is this node's row and nothing else's: a second one keeps b's row as it was.
    const again = await registry.heartbeat(beat('a:1', ['S1', 'S2']));
    expect(again.find((m) => m.nodeId === 'a:1')?.ready).toEqual(['S1', 'S2']);
    expect(again.find((m) => m.nodeId === 'b:1')?.ready).toEqual(['S9']);
    expect((await registry.members()).map((m) => m.nodeId)).toEqual(['a:1', 'b:1']);
  });
});
