// The permission index in the service: a build that spans many event-loop turns while writes
// land stays exact; the event ring's bound (a `from` older than the ring is refused, a consumer
// that falls behind is closed); a build past its triple bound ends FAILED with a reason and its
// streams close with it; a wildcard stays `user:*`.

import { afterEach, describe, expect, it } from 'vitest';
import type { TupleKey } from '../../src/domain/types.js';
import { active, diff, fixture, Folded, oracle, snapshotSet, type Fixture } from './harness.js';

const DSL = `model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type doc
  relations
    define blocked: [user]
    define viewer: [user, user:*, group#member] but not blocked
`;

let f: Fixture | undefined;
afterEach(async () => {
  await f?.latch.close();
  f = undefined;
});

const write = (fx: Fixture, writes: TupleKey[], deletes: TupleKey[] = []) =>
  fx.latch.write({ storeId: fx.storeId, writes, deletes, onDuplicate: 'error', onMissing: 'error' });

describe('permission index in the service', () => {
  it('stays exact when writes land while it builds over many turns', async () => {
    f = await fixture(DSL);
    const docs = 2000;
    for (let d = 0; d < docs; d += 100) {
      await write(
        f,
        Array.from({ length: 100 }, (_, i) => ({
          object: `doc:${d + i}`,
          relation: 'viewer',
          user: `group:${(d + i) % 40}#member`,
        })),
      );
    }
    for (let g = 0; g < 40; g++)
      await write(
        f,
        Array.from({ length: 20 }, (_, i) => ({
          object: `group:${g}`,
          relation: 'member',
          user: `user:${(g * 7 + i) % 100}`,
        })),
      );
    const info = await f.latch.createPermissionIndex({
      storeId: f.storeId,
      name: 'v',
      relations: [{ object_type: 'doc', relation: 'viewer' }],
    });
    let during = 0;
    for (let i = 0; ; i++) {
      const now = await f.latch.getPermissionIndex(f.storeId, info.record.id);
      if (now.status !== 'BUILDING') break;
      during++;
      await write(f, [
        { object: `group:${i % 40}`, relation: 'member', user: `user:late-${i}` },
        { object: `doc:${(i * 37) % docs}`, relation: 'blocked', user: `user:${(i * 7) % 100}` },
      ]);
      await new Promise((r) => setImmediate(r));
    }
    expect(during).toBeGreaterThan(2); // the build really overlapped writes
    await active(f, info.record.id);
    await f.latch.permissionIndexesCaughtUp(f.storeId);
    const objects = Array.from({ length: docs }, (_, d) => `doc:${d}`);
    expect(
      diff(
        await snapshotSet(f, info.record.id),
        await oracle(f, objects, [{ object_type: 'doc', relation: 'viewer' }], ['user']),
      ),
    ).toEqual([]);
  }, 120_000);

  it("sends each revision's freshness right after its last event, not after the backlog", async () => {
    f = await fixture(DSL);
    const info = await f.latch.createPermissionIndex({
      storeId: f.storeId,
      name: 'v',
      relations: [{ object_type: 'doc', relation: 'viewer' }],
    });
    await active(f, info.record.id);
    const ac = new AbortController();
    const events = f.latch.expansions(
      { storeId: f.storeId, indexId: info.record.id, modelId: f.modelId, heartbeatMs: 60_000, lifetimeMs: 60_000 },
      ac.signal,
    );
    const stream = events[Symbol.asyncIterator]();
    // The (empty) initial set ends with a freshness event.
    for (let e = await stream.next(); e.value?.kind !== 'freshness'; e = await stream.next())
      expect(e.done).toBe(false);
    // Three revisions applied while the consumer reads nothing; each then ends with its freshness.
    const revisions: number[] = [];
    for (let r = 0; r < 3; r++) {
      const out = await write(f, [
        { object: `doc:${r}`, relation: 'viewer', user: 'user:a' },
        { object: `doc:${r}`, relation: 'viewer', user: 'user:b' },
      ]);
      revisions.push(out.revision);
    }
    await f.latch.permissionIndexesCaughtUp(f.storeId);
    const seen: string[] = [];
    const last = revisions[revisions.length - 1] as number;
    for (let done = false; !done;) {
      const e = (await stream.next()).value;
      if (e?.kind === 'expansion') seen.push(`${e.event.revision} ${e.event.user}`);
      else if (e?.kind === 'freshness') {
        seen.push(`${e.revision} fresh`);
        expect(e.at).toBeGreaterThan(0);
        done = e.revision >= last;
      }
    }
    ac.abort();
    await stream.return?.(undefined);
    expect(seen).toEqual(revisions.flatMap((r) => [`${r} user:a`, `${r} user:b`, `${r} fresh`]));
  });

  it('keeps a bounded ring: a from older than it is refused; a wildcard stays user:*', async () => {
    f = await fixture(DSL, { config: { permissionIndex: { ringSize: 5 } } });
    await write(f, [{ object: 'doc:1', relation: 'viewer', user: 'user:*' }]);
    const info = await f.latch.createPermissionIndex({
      storeId: f.storeId,
      name: 'v',
      relations: [{ object_type: 'doc', relation: 'viewer' }],
    });
    await active(f, info.record.id);
    expect([...(await snapshotSet(f, info.record.id))]).toEqual(['doc:1#viewer@user:*']);
    const ac = new AbortController();
    const folded = new Folded(
      f.latch.expansions(
        { storeId: f.storeId, indexId: info.record.id, modelId: f.modelId, heartbeatMs: 1000, lifetimeMs: 60_000 },
        ac.signal,
      ),
    );
    let last = 0;
    // One event per write, each read before the next write (a burst past the ring would close the
    // consumer: the writes are acknowledged before the index maintains them).
    for (let i = 0; i < 8; i++) {
      last = (await write(f, [{ object: `doc:${i + 10}`, relation: 'viewer', user: `user:${i}` }])).revision;
      await folded.reach(last);
    }
    expect(folded.ids).toHaveLength(8);
    ac.abort();
    await folded.done;
    const first = folded.ids[0]?.split('.').map(Number) as [number, number];
    const old = f.latch.expansions({
      storeId: f.storeId,
      indexId: info.record.id,
      modelId: f.modelId,
      from: { revision: first[0], position: first[1] },
      heartbeatMs: 1000,
      lifetimeMs: 60_000,
    });
    await expect(old[Symbol.asyncIterator]().next()).rejects.toMatchObject({ code: 'validation_error' });
    // The last five are still there: resuming after the third gives the rest.
    const third = folded.ids[3]?.split('.').map(Number) as [number, number];
    const ac2 = new AbortController();
    const resumed = new Folded(
      f.latch.expansions(
        {
          storeId: f.storeId,
          indexId: info.record.id,
          modelId: f.modelId,
          from: { revision: third[0], position: third[1] },
          heartbeatMs: 1000,
          lifetimeMs: 60_000,
        },
        ac2.signal,
      ),
    );
    await resumed.reach(last);
    expect(resumed.ids).toEqual(folded.ids.slice(4));
    ac2.abort();
    await resumed.done;
  });

  it('an expired grant leaves the index when the sweeper deletes it', async () => {
    let now = Date.parse('2026-06-01T00:00:00Z');
    f = await fixture(DSL, { clock: () => now, expirySweepMs: 0 });
    await write(f, [
      { object: 'group:eng', relation: 'member', user: 'user:anne', expires_at: new Date(now + 60_000).toISOString() },
      { object: 'doc:1', relation: 'viewer', user: 'group:eng#member' },
      { object: 'doc:1', relation: 'viewer', user: 'user:bob' },
    ]);
    const info = await f.latch.createPermissionIndex({
      storeId: f.storeId,
      name: 'v',
      relations: [{ object_type: 'doc', relation: 'viewer' }],
    });
    await active(f, info.record.id);
    expect([...(await snapshotSet(f, info.record.id))].sort()).toEqual([
      'doc:1#viewer@user:anne',
      'doc:1#viewer@user:bob',
    ]);
    const ac = new AbortController();
    const folded = new Folded(
      f.latch.expansions(
        { storeId: f.storeId, indexId: info.record.id, modelId: f.modelId, heartbeatMs: 1000, lifetimeMs: 60_000 },
        ac.signal,
      ),
    );
    now += 61_000;
    const service = f.latch as unknown as { sweepExpired(): Promise<number> };
    expect(await service.sweepExpired()).toBe(1);
    await f.latch.permissionIndexesCaughtUp(f.storeId);
    const revision = (await f.latch.getPermissionIndex(f.storeId, info.record.id)).revision;
    await folded.reach(revision);
    expect([...folded.set]).toEqual(['doc:1#viewer@user:bob']);
    expect([...(await snapshotSet(f, info.record.id))]).toEqual(['doc:1#viewer@user:bob']);
    ac.abort();
    await folded.done;
  });

  it('a build past its bound ends FAILED with the reason; its streams close with it', async () => {
    f = await fixture(DSL, { config: { permissionIndex: { maxTriples: 3 } } });
    await write(
      f,
      Array.from({ length: 5 }, (_, i) => ({ object: `doc:${i}`, relation: 'viewer', user: `user:${i}` })),
    );
    const info = await f.latch.createPermissionIndex({
      storeId: f.storeId,
      name: 'v',
      relations: [{ object_type: 'doc', relation: 'viewer' }],
    });
    await expect(active(f, info.record.id)).rejects.toThrow(/more than 3 triples/);
    const got = await f.latch.getPermissionIndex(f.storeId, info.record.id);
    expect(got).toMatchObject({ status: 'FAILED', reason: 'more than 3 triples', expansions: 0 });
    const events = [];
    for await (const e of f.latch.expansions({
      storeId: f.storeId,
      indexId: info.record.id,
      modelId: f.modelId,
      heartbeatMs: 1000,
      lifetimeMs: 60_000,
    }))
      events.push(e);
    expect(events[events.length - 1]).toEqual({ kind: 'closed', reason: 'index failed: more than 3 triples' });
  });
});
