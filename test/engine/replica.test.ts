// Several nodes over one datastore (src/engine/state/revision-feed.ts): two or three LatchService objects over
// ONE shared storage object are nodes in one process. Each node's indexes follow the change log
// one whole revision at a time; HIGHER_CONSISTENCY and minRevision queries wait for the revision
// they need; writes, models and store deletions made through one node reach the others.
import { afterEach, describe, expect, it } from 'vitest';
import type { TupleKey } from '../../src/domain/types.js';
import { AppError } from '../../src/errors.js';
import { LatchService } from '../../src/engine/service.js';
import type { CheckInput, EngineConfig } from '../../src/engine/contract.js';
import { openStorage } from '../../src/storage/index.js';
import type { Storage } from '../../src/storage/types.js';
import { node, type NodeView } from '../support/replicas.js';
import type { AuthorizationModelInput } from '../../src/domain/types.js';
import { MODEL as MODEL_JSON } from '../http/helpers.js';
import { DEFAULT_ENGINE_CONFIG } from '../../src/engine/config.js';

const MODEL = MODEL_JSON as unknown as AuthorizationModelInput;

const silent = (): void => undefined;
const open: LatchService[] = [];
let shared: Storage | undefined;

async function cluster(views: NodeView[], config: Partial<EngineConfig> = {}): Promise<LatchService[]> {
  shared = await openStorage({});
  const s = shared;
  const nodes = views.map((v) => node(s, v, config));
  open.push(...nodes);
  return nodes;
}

afterEach(async () => {
  for (const n of open.splice(0)) await n.close();
  await shared?.close();
  shared = undefined;
});

const tk = (object: string, relation: string, user: string): TupleKey => ({ object, relation, user });

function checkOf(storeId: string, key: TupleKey, extra: Partial<CheckInput> = {}): CheckInput {
  return { storeId, tupleKey: key, contextualTuples: [], consistency: 'MINIMIZE_LATENCY', ...extra };
}

async function setup(nodes: LatchService[]): Promise<string> {
  const a = nodes[0] as LatchService;
  const store = await a.createStore('s');
  await a.writeModel(store.id, MODEL);
  return store.id;
}

function write(
  node: LatchService,
  storeId: string,
  writes: TupleKey[],
  deletes: TupleKey[] = [],
): Promise<{ revision: number }> {
  return node.write({ storeId, writes, deletes, onDuplicate: 'error', onMissing: 'error' });
}

describe('following one datastore', () => {
  it('a write through A is seen at once by HIGHER_CONSISTENCY and minRevision queries on B, and by B after its catch-up', async () => {
    const [a, b] = (await cluster([{}, { events: false }])) as [LatchService, LatchService];
    const s = await setup([a, b]);
    const key = tk('doc:1', 'viewer', 'user:anne');
    expect((await b.check(checkOf(s, key))).allowed).toBe(false); // loads B's index at revision 0
    const { revision } = await write(a, s, [key]);
    expect(revision).toBe(1);
    // B hears nothing (events off, no poll): the local index is still at revision 0 …
    expect((await b.check(checkOf(s, key))).allowed).toBe(false);
    // … but HIGHER_CONSISTENCY reads the committed revision and waits for it.
    expect((await b.check(checkOf(s, key, { consistency: 'HIGHER_CONSISTENCY' }))).allowed).toBe(true);
    const other = tk('doc:2', 'viewer', 'user:bob');
    const w2 = await write(a, s, [other]);
    expect((await b.check(checkOf(s, other, { minRevision: w2.revision }))).allowed).toBe(true);
    expect(b.checkSync(checkOf(s, other))?.allowed).toBe(true);
    for (const q of [
      () =>
        b.listObjects({
          storeId: s,
          type: 'doc',
          relation: 'viewer',
          user: 'user:anne',
          contextualTuples: [],
          consistency: 'MINIMIZE_LATENCY',
          minRevision: 2,
        }),
    ])
      expect((await q()).objects).toEqual(['doc:1']);
  });

  it('an event moves B without any query asking', async () => {
    const [a, b] = (await cluster([{}, {}])) as [LatchService, LatchService];
    const s = await setup([a, b]);
    await b.check(checkOf(s, tk('doc:1', 'viewer', 'user:anne')));
    await write(a, s, [tk('doc:1', 'viewer', 'user:anne')]);
    await b.caughtUp();
    expect(b.checkSync(checkOf(s, tk('doc:1', 'viewer', 'user:anne')))?.allowed).toBe(true);
    expect(b.stats().replication.revisionsApplied).toBe(1);
    // The event's arrival → the revision applied from the log: timed once, on B only (A applied its own write).
    expect(b.stats().replication.applyLag.count).toBe(1);
    expect(a.stats().replication.applyLag.count).toBe(0);
  });

  it('a query never sees half of a revision, even while the log is read one change per turn', async () => {
    const [a, b] = (await cluster([{}, { events: false, slowLog: true }])) as [LatchService, LatchService];
    const s = await setup([a, b]);
    await b.check(checkOf(s, tk('doc:0', 'viewer', 'user:anne')));
    const n = 30;
    for (let i = 0; i < n; i++)
      await write(a, s, [
        tk(`doc:${i}`, 'owner', 'user:anne'),
        tk(`doc:${i}`, 'viewer', 'user:bob'),
        tk(`doc:${i}`, 'viewer', 'user:carl'),
      ]);
    // Observe B between every turn while it catches up: each revision is all there or absent.
    let done = false;
    const seen: number[] = [];
    const watch = (async () => {
      while (!done) {
        let complete = 0;
        for (let i = 0; i < n; i++) {
          const parts = ['user:anne', 'user:bob', 'user:carl'].map(
            (u) => b.checkSync(checkOf(s, tk(`doc:${i}`, 'viewer', u)))?.allowed,
          );
          const count = parts.filter(Boolean).length;
          expect([0, 3]).toContain(count);
          if (count === 3) complete++;
        }
        seen.push(complete);
        await new Promise<void>((r) => setImmediate(r));
      }
    })();
    await b.caughtUp();
    done = true;
    await watch;
    for (let i = 0; i < n; i++)
      expect(b.checkSync(checkOf(s, tk(`doc:${i}`, 'viewer', 'user:carl')))?.allowed).toBe(true);
    // Revisions arrive in order: the number of complete revisions never goes down, and B saw
    // intermediate states (the interleaving really happened).
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1] as number);
    expect(new Set(seen).size).toBeGreaterThan(2);
  });

  it("a local write whose revision is not the next one first applies the other node's revisions", async () => {
    const [a, b] = (await cluster([{}, { events: false }])) as [LatchService, LatchService];
    const s = await setup([a, b]);
    await b.check(checkOf(s, tk('doc:1', 'viewer', 'user:anne')));
    await write(a, s, [tk('doc:1', 'viewer', 'user:anne')]);
    await write(a, s, [tk('doc:2', 'viewer', 'user:anne')], []);
    const { revision } = await write(b, s, [tk('doc:3', 'viewer', 'user:anne')], [tk('doc:1', 'viewer', 'user:anne')]);
    expect(revision).toBe(3);
    const allowed = (i: number): boolean | undefined =>
      b.checkSync(checkOf(s, tk(`doc:${i}`, 'viewer', 'user:anne')))?.allowed;
    expect([allowed(1), allowed(2), allowed(3)]).toEqual([false, true, true]);
  });

  it("a delete by filter whose revision is not the next one first applies the other node's revisions", async () => {
    const [a, b] = (await cluster([{}, { events: false }])) as [LatchService, LatchService];
    const s = await setup([a, b]);
    await b.check(checkOf(s, tk('doc:1', 'viewer', 'user:anne')));
    await write(a, s, [tk('doc:1', 'viewer', 'user:anne'), tk('doc:2', 'viewer', 'user:anne')]);
    const out = await b.deleteTuples({ storeId: s, filter: { object: 'doc:1' }, dryRun: false, limit: 1000 });
    expect(out.revision).toBe(2);
    const allowed = (i: number): boolean | undefined =>
      b.checkSync(checkOf(s, tk(`doc:${i}`, 'viewer', 'user:anne')))?.allowed;
    expect([allowed(1), allowed(2)]).toEqual([false, true]);
  });

  it('a revision asked for but never committed ends at the deadline with throttled_timeout_error', async () => {
    const [a] = (await cluster([{}], { checkDeadlineMs: 30 })) as [LatchService];
    const s = await setup([a]);
    const err = await a
      .check(checkOf(s, tk('doc:1', 'viewer', 'user:anne'), { minRevision: 5 }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('throttled_timeout_error');
  });

  it('a model written through A becomes the latest on B: by event, or by HIGHER_CONSISTENCY when the event is lost', async () => {
    const [a, b, c] = (await cluster([{}, {}, { events: false }])) as [LatchService, LatchService, LatchService];
    const s = await setup([a, b, c]);
    const first = (await b.check(checkOf(s, tk('doc:1', 'viewer', 'user:anne')))).modelId;
    expect((await c.check(checkOf(s, tk('doc:1', 'viewer', 'user:anne')))).modelId).toBe(first);
    const next = await a.writeModel(s, MODEL);
    expect(next > first).toBe(true);
    expect((await b.check(checkOf(s, tk('doc:1', 'viewer', 'user:anne')))).modelId).toBe(next);
    // C missed the event: MINIMIZE_LATENCY keeps its cached latest, HIGHER_CONSISTENCY reads the new one.
    expect((await c.check(checkOf(s, tk('doc:1', 'viewer', 'user:anne')))).modelId).toBe(first);
    expect(
      (await c.check(checkOf(s, tk('doc:1', 'viewer', 'user:anne'), { consistency: 'HIGHER_CONSISTENCY' }))).modelId,
    ).toBe(next);
    expect((await c.check(checkOf(s, tk('doc:1', 'viewer', 'user:anne')))).modelId).toBe(next);
  });

  it('a store deleted through A is gone on B (by event, or by the poll when the event is lost)', async () => {
    const [a, b, c] = (await cluster([{}, {}, { events: false }])) as [LatchService, LatchService, LatchService];
    const s = await setup([a, b, c]);
    await write(a, s, [tk('doc:1', 'viewer', 'user:anne')]);
    for (const n of [b, c]) expect((await n.check(checkOf(s, tk('doc:1', 'viewer', 'user:anne')))).allowed).toBe(true);
    await a.deleteStore(s);
    const code = (p: Promise<unknown>): Promise<unknown> =>
      p.then(
        () => 'answered',
        (e: unknown) => (e as AppError).code,
      );
    expect(await code(b.check(checkOf(s, tk('doc:1', 'viewer', 'user:anne'))))).toBe('store_id_not_found');
    expect(c.checkSync(checkOf(s, tk('doc:1', 'viewer', 'user:anne')))?.allowed).toBe(true); // C has not heard yet
    await c.caughtUp();
    expect(c.checkSync(checkOf(s, tk('doc:1', 'viewer', 'user:anne')))).toBeUndefined();
    expect(await code(c.check(checkOf(s, tk('doc:1', 'viewer', 'user:anne'))))).toBe('store_id_not_found');
  });

  it('a node that restarts catches up from its checkpoint and the log', async () => {
    const [a, b] = (await cluster([{}, {}])) as [LatchService, LatchService];
    const s = await setup([a, b]);
    await write(b, s, [tk('doc:1', 'viewer', 'user:anne')]);
    await b.close(); // writes a checkpoint at revision 1
    open.splice(open.indexOf(b), 1);
    await write(a, s, [tk('doc:2', 'viewer', 'user:anne')], [tk('doc:1', 'viewer', 'user:anne')]);
    const again = node(shared as Storage);
    open.push(again);
    await again.ready();
    expect((await again.check(checkOf(s, tk('doc:1', 'viewer', 'user:anne')))).allowed).toBe(false);
    expect((await again.check(checkOf(s, tk('doc:2', 'viewer', 'user:anne')))).allowed).toBe(true);
    expect(again.stats().indexes.loads.count).toBe(1);
  });
});

describe('concurrent writers on three nodes', () => {
  it("every node's answers equal a single-node replay of the acknowledged writes", async () => {
    const nodes = await cluster([{}, { events: false }, { slowLog: true }]);
    const s = await setup(nodes);
    const docs = 6;
    const users = ['user:a', 'user:b', 'user:c', 'user:d'];
    const relations = ['owner', 'viewer'];
    const universe: TupleKey[] = [];
    for (let d = 0; d < docs; d++)
      for (const r of relations) for (const u of users) universe.push(tk(`doc:${d}`, r, u));
    // A seeded generator (mulberry32): the same choices every run.
    let seed = 42;
    const rnd = (n: number): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) % n;
    };
    const acked: { revision: number; writes: TupleKey[]; deletes: TupleKey[] }[] = [];
    const writer = async (node: LatchService, count: number): Promise<void> => {
      for (let i = 0; i < count; i++) {
        const picked = new Map<string, TupleKey>();
        for (let k = 1 + rnd(3); k > 0; k--) {
          const t = universe[rnd(universe.length)] as TupleKey;
          picked.set(`${t.object}#${t.relation}@${t.user}`, t);
        }
        const keys = [...picked.values()];
        const deletes = keys.filter(() => rnd(3) === 0);
        const writes = keys.filter((t) => !deletes.includes(t));
        // Strict modes: a write that conflicts with another node's is refused (not acknowledged),
        // so every acknowledged write made a revision of its own.
        try {
          const out = await node.write({ storeId: s, writes, deletes, onDuplicate: 'error', onMissing: 'error' });
          acked.push({ revision: out.revision, writes, deletes });
        } catch (err) {
          if (!(err instanceof AppError) || err.code !== 'write_failed_due_to_invalid_input') throw err;
        }
      }
    };
    await Promise.all(nodes.map((n) => writer(n, 40)));
    for (const n of nodes) await n.caughtUp();

    // The replay: one node over a fresh datastore, the acknowledged writes in revision order.
    const replayStorage = await openStorage({});
    const replay = new LatchService(replayStorage, { ...DEFAULT_ENGINE_CONFIG, workers: 0 }, silent);
    open.push(replay);
    const rs = (await replay.createStore('replay')).id;
    await replay.writeModel(rs, MODEL);
    const changed = [...acked].sort((x, y) => x.revision - y.revision);
    for (const w of changed) {
      const out = await replay.write({
        storeId: rs,
        writes: w.writes,
        deletes: w.deletes,
        onDuplicate: 'error',
        onMissing: 'error',
      });
      expect(out.revision).toBe(w.revision);
    }

    // Changelog order: the same changes, in the same order, as the replay's.
    const log = async (node: LatchService, storeId: string): Promise<string[]> => {
      const out: string[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await node.readChanges({ storeId, pageSize: 100, after });
        out.push(
          ...page.items.map((c) => `${c.operation} ${c.tuple_key.object}#${c.tuple_key.relation}@${c.tuple_key.user}`),
        );
        if (page.items.length === 0 || !page.next || page.next === after) break;
        after = page.next;
      }
      return out;
    };
    expect(await log(nodes[0] as LatchService, s)).toEqual(await log(replay, rs));
    for (const n of nodes) {
      const answers = universe.map((t) => n.checkSync(checkOf(s, t))?.allowed);
      const expected = await Promise.all(universe.map(async (t) => (await replay.check(checkOf(rs, t))).allowed));
      expect(answers).toEqual(expected);
    }
    expect(acked.length).toBeGreaterThan(30);
    const revisions = changed.map((w) => w.revision);
    expect(revisions).toEqual(Array.from({ length: revisions.length }, (_, i) => i + 1)); // no gaps
  });
});
