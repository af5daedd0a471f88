// Group commit on PostgreSQL (src/storage/postgres/group-writer.ts, latch_write_group): concurrent
// Writes of one store go as one call, each with its own revision and its own outcome.
//
// - latch_write_group gives, Write by Write, the same outcome (error name and index, or result)
//   and leaves the same rows and changelog as the same Writes sent one by one through the single
//   Write functions, on random Writes (some of which fail).
// - A failing Write in a group fails alone; its neighbours commit with consecutive revisions.
// - Concurrent writers through PgStorage: revisions dense, acknowledged in revision order; two
//   nodes writing one store together see one changelog.

import { afterEach, describe, expect, it, vi } from 'vitest';
import type { TupleKey } from '../../src/domain/types.js';
import { AppError } from '../../src/errors.js';
import { writeGroup } from '../../src/storage/postgres/group-writer.js';
import { openPostgresStorage, type PgStorage } from '../../src/storage/postgres/index.js';
import { writeTuples } from '../../src/storage/postgres/tuples.js';
import type { RevisionChange, TupleWrite } from '../../src/storage/types.js';
import { Rng } from '../oracle/generate.js';
import { databasePerFile } from '../support/postgres.js';

const pgdb = databasePerFile();
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const c of closers.splice(0).reverse()) await c();
});

async function open(): Promise<PgStorage> {
  const s = await openPostgresStorage({ url: pgdb.url, poolSize: 4 });
  closers.push(() => s.close());
  return s;
}

const key = (i: number, rel = 'viewer'): TupleKey => ({ object: `doc:${i % 5}`, relation: rel, user: `user:u${i}` });

function randomWrite(rng: Rng): TupleWrite {
  const list = (n: number): TupleKey[] =>
    Array.from({ length: n }, () => {
      const t = key(rng.int(12), rng.pick(['viewer', 'owner']));
      return rng.int(4) === 0 ? { ...t, condition: { name: 'c', context: { n: rng.int(2) } } } : t;
    });
  return {
    deletes: list(rng.int(3)).map(({ object, relation, user }) => ({ object, relation, user })),
    writes: list(rng.int(4)),
    onDuplicate: rng.pick(['error', 'ignore'] as const),
    onMissing: rng.pick(['error', 'ignore'] as const),
  };
}

type Outcome =
  { error: string; message: string } | { revision: number; deleted: readonly TupleKey[]; written: readonly TupleKey[] };

const outcomeOf = (e: unknown): Outcome => {
  if (!(e instanceof AppError)) throw e;
  return { error: e.code, message: e.message };
};

async function changes(s: PgStorage, id: string): Promise<RevisionChange[]> {
  const out: RevisionChange[] = [];
  for await (const c of s.changesSince(id, 0)) out.push(c);
  return out;
}

describe.runIf(pgdb.run)('group commit on PostgreSQL', () => {
  it('latch_write_group gives each Write the outcome, rows and changelog the single Write functions give', async () => {
    const s = await open();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.parse('2026-01-01T10:00:00.000Z'));
    const rng = new Rng(20261202);
    let failures = 0;
    for (let round = 0; round < 6; round++) {
      const [a, b] = [(await s.createStore('single')).id, (await s.createStore('group')).id];
      const writes = Array.from({ length: 40 }, () => randomWrite(rng));
      const one: Outcome[] = [];
      for (const w of writes)
        one.push(
          await writeTuples(s.db, a, w, 'n').then(
            (r) => ({ revision: r.revision, deleted: r.deleted, written: r.written }),
            outcomeOf,
          ),
        );
      const grouped: Outcome[] = [];
      for (let at = 0; at < writes.length;) {
        const n = 1 + rng.int(9);
        for (const o of await writeGroup(s.db, b, writes.slice(at, at + n), 'n'))
          grouped.push(
            o.ok
              ? { revision: o.result.revision, deleted: o.result.deleted, written: o.result.written }
              : outcomeOf(o.error),
          );
        at += n;
      }
      expect(grouped).toEqual(one);
      failures += one.filter((o) => 'error' in o).length;
      expect(await changes(s, b)).toEqual(await changes(s, a));
      const rows = async (id: string): Promise<unknown[]> =>
        (await s.readTuples(id, {}, { pageSize: 1000 })).items.map((t) => t.key);
      expect(await rows(b)).toEqual(await rows(a));
    }
    // The random Writes exercised both outcomes.
    expect(failures).toBeGreaterThan(10);
  });

  it('a failing Write in a group fails alone; its neighbours commit with consecutive revisions', async () => {
    const s = await open();
    const id = (await s.createStore('neighbours')).id;
    await s.writeTuples(id, { writes: [key(1)], deletes: [], onDuplicate: 'error', onMissing: 'error' });
    const w = (t: TupleKey): TupleWrite => ({ writes: [t], deletes: [], onDuplicate: 'error', onMissing: 'error' });
    const out = await writeGroup(s.db, id, [w(key(2)), w(key(1)), w(key(3))], 'n');
    expect(out.map((o) => (o.ok ? o.result.revision : (o.error as AppError).code))).toEqual([
      2,
      'write_failed_due_to_invalid_input',
      3,
    ]);
    expect(await s.revision(id)).toBe(3);
    const users = (await s.readTuples(id, {}, { pageSize: 10 })).items.map((t) => t.key.user);
    expect(users).toEqual(['user:u1', 'user:u2', 'user:u3'].sort());
  });

  it('concurrent writers on two nodes: revisions dense, acknowledged in order per node, one changelog', async () => {
    const [n1, n2] = [await open(), await open()];
    const id = (await n1.createStore('concurrent')).id;
    const acks: [PgStorage, number][] = [];
    const writer = async (node: PgStorage, w: number): Promise<void> => {
      for (let i = 0; i < 6; i++) {
        const t = key(w * 100 + i);
        const bad = i === 3 && w % 2 === 0; // a delete of a tuple that does not exist: fails alone
        const write: TupleWrite = bad
          ? { writes: [], deletes: [key(9999)], onDuplicate: 'error', onMissing: 'error' }
          : { writes: [t], deletes: [], onDuplicate: 'error', onMissing: 'error' };
        const r = await node.writeTuples(id, write).catch((e: unknown) => e);
        if (bad) expect((r as AppError).code).toBe('write_failed_due_to_invalid_input');
        else acks.push([node, (r as { revision: number }).revision]);
      }
    };
    await Promise.all(Array.from({ length: 8 }, (_, w) => writer(w % 2 ? n2 : n1, w)));
    const revisions = acks.map(([, r]) => r);
    const good = 8 * 6 - 4;
    expect([...revisions].sort((x, y) => x - y)).toEqual(Array.from({ length: good }, (_, i) => i + 1));
    for (const node of [n1, n2]) {
      const mine = acks.filter(([n]) => n === node).map(([, r]) => r);
      expect(mine).toEqual([...mine].sort((x, y) => x - y));
    }
    const log = await changes(n1, id);
    expect(log).toHaveLength(good);
    expect(log.map((c) => c.revision)).toEqual(Array.from({ length: good }, (_, i) => i + 1));
    expect(await changes(n2, id)).toEqual(log);
  });
});
