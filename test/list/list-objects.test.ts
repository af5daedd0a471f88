// ListObjects over the compact index (src/engine/evaluation/list/list-objects.ts through
// src/engine/evaluation/list/open.ts): the lazy walk against the reference evaluator while writes
// and deletes go through the overlay and background merges, contextual tuples with objects the
// index has never seen, and the streaming contract (pin for the whole stream, unpin on early
// stop, on the deadline, and at the end; other work runs between slices).

import { describe, expect, it, vi } from 'vitest';
import type { JsonObject, TupleKey } from '../../src/domain/types.js';
import { AppError } from '../../src/errors.js';
import { listObjects, MemoryTupleView, overlayView } from '../oracle/reference.js';
import { openObjectWalk, streamWalk } from '../../src/engine/evaluation/list/open.js';
import { StoreIndex, type IndexSnapshot } from '../../src/index/store-index.js';
import type { CompiledModel } from '../../src/model/types.js';
import { Rng } from '../oracle/generate.js';
import { timersDue } from '../support/wait.js';
import { model, tk } from '../walker/helpers.js';

const m = model(`model
  schema 1.1
type user
type group
  relations
    define member: [user with c, group#member]
type folder
  relations
    define parent: [folder]
    define viewer: [user, group#member] or viewer from parent
type doc
  relations
    define parent: [folder]
    define owner: [user]
    define blocked: [user]
    define viewer: ([user, group#member] or owner or viewer from parent) but not blocked
condition c(p: int) {
  p > 0
}
`);

const key = (t: TupleKey): string => `${t.object}#${t.relation}@${t.user}`;

function randomTuple(rng: Rng, fresh = false): TupleKey {
  const u = `user:u${rng.int(5)}`;
  const g = `group:g${rng.int(4)}`;
  const f = `folder:f${rng.int(6)}`;
  const d = fresh && rng.chance(0.5) ? `doc:new${rng.int(3)}` : `doc:d${rng.int(10)}`;
  switch (rng.int(9)) {
    case 0: {
      const ctx: JsonObject | undefined = rng.chance(0.8) ? { p: rng.chance(0.7) ? 1 : -1 } : undefined;
      return { object: g, relation: 'member', user: u, condition: ctx ? { name: 'c', context: ctx } : { name: 'c' } };
    }
    case 1:
      return { object: g, relation: 'member', user: `group:g${rng.int(4)}#member` };
    case 2:
      return { object: f, relation: 'parent', user: `folder:f${rng.int(6)}` };
    case 3:
      return { object: f, relation: 'viewer', user: rng.chance(0.5) ? u : `${g}#member` };
    case 4:
      return { object: d, relation: 'parent', user: f };
    case 5:
      return { object: d, relation: 'owner', user: u };
    case 6:
      return { object: d, relation: 'blocked', user: u };
    default:
      return { object: d, relation: 'viewer', user: rng.chance(0.5) ? u : `${g}#member` };
  }
}

type Answer = string[] | 'error';

function reference(
  model: CompiledModel,
  live: readonly TupleKey[],
  contextual: TupleKey[],
  context: JsonObject | undefined,
  q: { type: string; relation: string; user: string },
): Answer {
  try {
    const view = overlayView(new MemoryTupleView(live), contextual);
    return listObjects({ model, view, context, resolveDepth: 25, deadline: Date.now() + 60_000 }, q, Infinity).sort();
  } catch (e) {
    if (e instanceof AppError && (e.numeric === 2000 || e.numeric === 2002)) return 'error';
    throw e;
  }
}

function onIndex(
  snapshot: IndexSnapshot,
  contextual: TupleKey[],
  context: JsonObject | undefined,
  q: { type: string; relation: string; user: string },
  confirm?: 'walker' | 'reference',
  confirmAll?: boolean,
): Answer {
  try {
    const walk = openObjectWalk(
      { snapshot, model: m, contextual, context, resolveDepth: 25, deadline: Date.now() + 60_000, confirm, confirmAll },
      q,
    );
    const got = [...walk];
    expect(new Set(got).size).toBe(got.length);
    return got.sort();
  } catch (e) {
    if (e instanceof AppError && (e.numeric === 2000 || e.numeric === 2002)) return 'error';
    throw e;
  }
}

describe('ListObjects on the index', () => {
  it('agrees with the reference evaluator through writes, deletes, merges and contextual tuples', async () => {
    const rng = new Rng(20240611);
    const live = new Map<string, TupleKey>();
    for (let i = 0; i < 40; i++) {
      const t = randomTuple(rng);
      live.set(key(t), t);
    }
    const ix = StoreIndex.build(live.values(), 1, { mergeThreshold: 24, retireAfterMs: 60_000 });
    let compared = 0;
    let nonEmpty = 0;
    let errors = 0;
    for (let round = 2; round < 160; round++) {
      const written: TupleKey[] = [];
      const deleted: TupleKey[] = [];
      for (let i = 0; i < 3; i++) {
        const t = randomTuple(rng);
        if (!live.has(key(t)) && !written.some((w) => key(w) === key(t))) written.push(t);
      }
      const existing = [...live.values()];
      if (existing.length > 0 && rng.chance(0.6)) deleted.push(existing[rng.int(existing.length)] as TupleKey);
      for (const t of deleted) live.delete(key(t));
      for (const t of written) live.set(key(t), t);
      ix.apply({
        revision: round,
        timestamp: new Date().toISOString(),
        written,
        deleted: deleted.map((t) => ({ object: t.object, relation: t.relation, user: t.user })),
      });
      if (round % 10 === 0) await new Promise((r) => setTimeout(r, 5)); // let background merges run
      const snapshot = ix.snapshot();
      for (let i = 0; i < 6; i++) {
        const type = rng.pick(['doc', 'folder', 'group']);
        const relation =
          type === 'group' ? 'member' : rng.pick(type === 'doc' ? ['viewer', 'owner', 'parent'] : ['viewer', 'parent']);
        const user = rng.pick([
          `user:u${rng.int(5)}`,
          `group:g${rng.int(4)}#member`,
          `folder:f${rng.int(6)}`,
          `folder:f${rng.int(6)}#viewer`,
          'doc:new1#viewer',
        ]);
        const contextual = rng.chance(0.3) ? [randomTuple(rng, true), randomTuple(rng, true)] : [];
        const context = rng.chance(0.7) ? { p: 1 } : undefined;
        const q = { type, relation, user };
        const want = reference(m, [...live.values()], contextual, context, q);
        for (const confirm of [undefined, 'walker', 'reference'] as const) {
          for (const confirmAll of [false, true]) {
            expect(
              onIndex(snapshot, contextual, context, q, confirm, confirmAll),
              `${JSON.stringify({ q, contextual, context, confirm, confirmAll })}`,
            ).toEqual(want);
          }
        }
        compared++;
        if (want === 'error') errors++;
        else if (want.length > 0) nonEmpty++;
      }
    }
    ix.close();
    expect(compared).toBe(948);
    // The generator must produce every kind of outcome, or the comparison proves little.
    expect(nonEmpty).toBeGreaterThan(100);
    expect(errors).toBeGreaterThan(5);
  });

  it('stops the walk at the objects wanted (lazy) and yields each object once', () => {
    const tuples: TupleKey[] = [tk('group:all#member@user:anne[c {"p":1}]')];
    for (let i = 0; i < 50_000; i++) tuples.push(tk(`doc:${i}#viewer@group:all#member`));
    const ix = StoreIndex.build(tuples, 1);
    const snapshot = ix.snapshot();
    let confirmed = 0;
    const walk = openObjectWalk(
      { snapshot, model: m, contextual: [], resolveDepth: 25, deadline: Date.now() + 60_000 },
      { type: 'doc', relation: 'viewer', user: 'user:anne' },
    );
    const first: string[] = [];
    for (const o of walk) {
      first.push(o);
      if (++confirmed === 10) break;
    }
    expect(first).toHaveLength(10);
    const all = [
      ...openObjectWalk(
        { snapshot, model: m, contextual: [], resolveDepth: 25, deadline: Date.now() + 60_000 },
        { type: 'doc', relation: 'viewer', user: 'user:anne' },
      ),
    ];
    expect(new Set(all).size).toBe(50_000);
    for (const o of first) expect(all).toContain(o);
    ix.close();
  });
});

describe('streamed ListObjects', () => {
  const build = (n: number): StoreIndex => {
    const tuples: TupleKey[] = [tk('group:all#member@user:anne[c {"p":1}]')];
    for (let i = 0; i < n; i++) tuples.push(tk(`doc:${i}#viewer@group:all#member`));
    return StoreIndex.build(tuples, 1, { retireAfterMs: 20 });
  };
  const q = { type: 'doc', relation: 'viewer', user: 'user:anne' };
  const walkOf = (snapshot: IndexSnapshot, deadline: number): Generator<string, void> =>
    openObjectWalk({ snapshot, model: m, contextual: [], resolveDepth: 25, deadline }, q);

  it('flows results while other work runs, and unpins at the end', async () => {
    // 20,000 objects: a walk far longer than one 5 ms slice, so the event loop must run between.
    const n = 20_000;
    const ix = build(n);
    const snapshot = ix.snapshot();
    const deadline = Date.now() + 60_000;
    let otherWorkRan = -1;
    let received = 0;
    let notDocs = 0;
    let pinnedAtFirst = -1;
    setImmediate(() => (otherWorkRan = received));
    for await (const o of streamWalk(walkOf(snapshot, deadline), snapshot, deadline)) {
      if (!o.startsWith('doc:')) notDocs++;
      if (received === 0) pinnedAtFirst = snapshot.pinCount;
      received++;
    }
    expect([received, notDocs, pinnedAtFirst]).toEqual([n, 0, 1]);
    // The event loop ran other work after the first results and before the last one.
    expect(otherWorkRan).toBeGreaterThan(0);
    expect(otherWorkRan).toBeLessThan(n);
    expect(snapshot.pinCount).toBe(0);
    ix.close();
  });

  it('keeps its snapshot alive while running; unpins when the consumer stops early', async () => {
    const ix = build(5_000);
    const snapshot = ix.snapshot();
    const deadline = Date.now() + 60_000;
    const it = streamWalk(walkOf(snapshot, deadline), snapshot, deadline)[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    expect(snapshot.pinCount).toBe(1);
    // A newer revision retires the streamed snapshot; its memory must stay while the stream runs.
    ix.apply({ revision: 2, timestamp: new Date().toISOString(), written: [tk('doc:x#viewer@user:bob')], deleted: [] });
    expect(ix.snapshot()).not.toBe(snapshot);
    await timersDue(); // the retire timer (due now) has run: the pin alone keeps the memory
    expect(snapshot.released).toBe(false);
    let more = 0;
    for (let i = 0; i < 100; i++) if (!(await it.next()).done) more++;
    expect(more).toBe(100);
    await it.return?.(undefined);
    expect(snapshot.pinCount).toBe(0);
    await vi.waitFor(() => expect(snapshot.released).toBe(true)); // the last unpin releases it
    ix.close();
  });

  it('unpins when the deadline passes while the consumer is stalled, and then ends', async () => {
    const ix = build(5_000);
    const snapshot = ix.snapshot();
    walkOf(snapshot, Date.now() + 60_000).next(); // warm (program, walker instance): the first item must come before the deadline
    const deadline = Date.now() + 300;
    const it = streamWalk(walkOf(snapshot, deadline), snapshot, deadline)[Symbol.asyncIterator]();
    expect((await it.next()).done).toBe(false);
    expect(snapshot.pinCount).toBe(1);
    await vi.waitFor(() => expect(snapshot.pinCount).toBe(0), { timeout: 30_000, interval: 20 });
    expect((await it.next()).done).toBe(true);
    expect(snapshot.pinCount).toBe(0);
    ix.close();
  });
});
