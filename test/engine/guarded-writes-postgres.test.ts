// Guarded writes across two nodes over one PostgreSQL database: the guard is evaluated under the
// store's row lock on an index caught up to the locked revision, so a write committed by another
// node (even one this node has not heard of: its notifications are cut) is always seen, and a
// guarded grant racing a revoking write from the other node never commits on stale state.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TupleKey } from '../../src/domain/types.js';
import type { WriteInput } from '../../src/engine/contract.js';
import { LatchService } from '../../src/engine/service.js';
import { AppError } from '../../src/errors.js';
import { openPostgresStorage } from '../../src/storage/postgres/index.js';
import { databasePerFile } from '../support/postgres.js';
import { config, MODEL } from '../support/pg-node.js';
import { nodeStorage } from '../support/replicas.js';

const pgdb = databasePerFile();
const ROUNDS = 40;
let a: LatchService;
let b: LatchService;

beforeAll(async () => {
  if (!pgdb.run) return;
  // Node A hears nothing from the database (no NOTIFY, no poll): only its own writes and the
  // guarded write's catch-up move its index.
  a = new LatchService(
    nodeStorage(await openPostgresStorage({ url: pgdb.url, poolSize: 4 }), { events: false }),
    config,
    () => undefined,
  );
  b = new LatchService(await openPostgresStorage({ url: pgdb.url, poolSize: 4 }), config, () => undefined);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
});

const key = (object: string, relation: string, user: string): TupleKey => ({ object, relation, user });
const plain = (storeId: string, writes: TupleKey[], deletes: TupleKey[]): WriteInput => ({
  storeId,
  writes,
  deletes,
  onDuplicate: 'error',
  onMissing: 'error',
});
/** Grant bob viewer on `doc` only while anne may view it (she owns it). */
const guardedGrant = (storeId: string, doc: string): WriteInput => ({
  ...plain(storeId, [key(doc, 'viewer', 'user:bob')], []),
  preconditions: [{ kind: 'check', tupleKey: key(doc, 'viewer', 'user:anne'), contextualTuples: [], expect: true }],
});

describe.runIf(pgdb.run)('guarded writes across two PostgreSQL nodes', () => {
  it("a node that missed another node's revoke still refuses the guarded grant", async () => {
    const s = (await b.createStore('stale')).id;
    await b.writeModel(s, MODEL);
    await a.write(plain(s, [key('doc:1', 'owner', 'user:anne')], []));
    await b.write(plain(s, [], [key('doc:1', 'owner', 'user:anne')]));
    // A has not heard of the revoke: a MINIMIZE_LATENCY Check on A still answers from revision 1.
    const stale = await a.check({
      storeId: s,
      tupleKey: key('doc:1', 'viewer', 'user:anne'),
      contextualTuples: [],
      consistency: 'MINIMIZE_LATENCY',
    });
    expect(stale.allowed).toBe(true);
    const err = await a.write(guardedGrant(s, 'doc:1')).catch((e: unknown) => e);
    expect((err as AppError).code).toBe('write_precondition_failed');
    const bob = await b.read({
      storeId: s,
      filter: { object: 'doc:1', relation: 'viewer' },
      consistency: 'HIGHER_CONSISTENCY',
      pageSize: 10,
    });
    expect(bob.items).toEqual([]);
    expect(await b.readChanges({ storeId: s, pageSize: 100 }).then((p) => p.items.length)).toBe(2);
  });

  it("guarded writes to many stores at once, each catching up, never starve the pool's catch-up reads", async () => {
    const small = new LatchService(
      nodeStorage(await openPostgresStorage({ url: pgdb.url, poolSize: 2 }), { events: false }),
      config,
      () => undefined,
    );
    try {
      const stores = await Promise.all(
        Array.from({ length: 6 }, (_, i) => b.createStore(`pool-${i}`).then((x) => x.id)),
      );
      for (const s of stores) {
        await b.writeModel(s, MODEL);
        await small.write(plain(s, [key('doc:0', 'owner', 'user:carl')], []));
        await b.write(plain(s, [key('doc:1', 'owner', 'user:anne')], [])); // unheard of on `small`
      }
      const outs = await Promise.all(stores.map((s) => small.write(guardedGrant(s, 'doc:1'))));
      expect(outs.map((o) => o.revision)).toEqual(stores.map(() => 3));
    } finally {
      await small.close();
    }
  });

  it('a guarded grant on A racing a revoke on B commits only before the revoke', async () => {
    const s = (await b.createStore('race')).id;
    await b.writeModel(s, MODEL);
    const outcomes = { granted: 0, refused: 0 };
    for (let i = 0; i < ROUNDS; i++) {
      const doc = `doc:${i}`;
      await b.write(plain(s, [key(doc, 'owner', 'user:anne')], []));
      const [grant, revoke] = await Promise.allSettled([
        a.write(guardedGrant(s, doc)),
        b.write(plain(s, [], [key(doc, 'owner', 'user:anne')])),
      ]);
      if (revoke.status !== 'fulfilled') throw revoke.reason;
      if (grant.status === 'fulfilled') {
        // The grant's guard saw anne as owner: the revoke must have committed after it.
        expect(grant.value.revision).toBeLessThan(revoke.value.revision);
        outcomes.granted++;
      } else {
        expect((grant.reason as AppError).code).toBe('write_precondition_failed');
        const bob = await b.read({
          storeId: s,
          filter: { object: doc, relation: 'viewer' },
          consistency: 'HIGHER_CONSISTENCY',
          pageSize: 10,
        });
        expect(bob.items).toEqual([]);
        outcomes.refused++;
      }
    }
    // Every round either granted before the revoke or refused; the changelog agrees: no grant
    // committed after its document's revoke.
    const changes = await b.readChanges({ storeId: s, pageSize: 1000 });
    const revokedAt = new Map<string, number>();
    changes.items.forEach((c, at) => {
      if (c.operation === 'TUPLE_OPERATION_DELETE') revokedAt.set(c.tuple_key.object, at);
      else if (c.tuple_key.relation === 'viewer') expect(revokedAt.has(c.tuple_key.object)).toBe(false);
    });
    expect(revokedAt.size).toBe(ROUNDS);
    expect(outcomes.granted + outcomes.refused).toBe(ROUNDS);
  });
});
