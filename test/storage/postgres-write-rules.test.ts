// The write rules on PostgreSQL against their specification, src/storage/write-plan.ts (the path
// of the memory and LevelDB backends; docs/architecture.md, "One specification of the write
// rules"), on random writes: repeated keys, conditions, expiries, both existence rules, tuples
// already stored.
//
// - Every function that can take a write — latch_write's set path (distinct keys), its key-by-key
//   path, latch_write_all (distinct keys, rules 'error') — called directly on its own store with the
//   same stored state and the same instant gives the same error (name and index), or the same rows,
//   revision, changelog, revision time and NOTIFY payload as the others.
// - The production routing (PgStorage.writeTuples) gives the same answer or error (code and
//   message), the same tuples and the same ReadChanges as the memory backend.

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RelationshipCondition, TupleKey } from '../../src/domain/types.js';
import { AppError } from '../../src/errors.js';
import { openMemoryStorage } from '../../src/storage/memory.js';
import { openPostgresStorage, type PgStorage } from '../../src/storage/postgres/index.js';
import { WRITE, WRITE_ALL, writeArguments } from '../../src/storage/postgres/tuples.js';
import type { Storage, TupleWrite } from '../../src/storage/types.js';
import { Rng } from '../oracle/generate.js';
import { databasePerFile } from '../support/postgres.js';

const pgdb = databasePerFile();
const CASES = Number(process.env.LATCH_WRITE_RULE_CASES ?? 150);
const SEED = Number(process.env.LATCH_WRITE_RULE_SEED ?? 20261127);
const NODE = 'rules-node';

const OBJECTS = ['doc:1', 'doc:2', 'folder:1'];
const USERS = ['user:anne', 'user:bob', 'group:x#member'];
const CONDITIONS: readonly (RelationshipCondition | undefined)[] = [
  undefined,
  { name: 'c1' },
  { name: 'c1', context: { a: 1 } },
  { name: 'c2', context: {} },
];
const EXPIRIES = [undefined, '2099-01-01T00:00:00.000Z', '2098-06-01T12:00:00.000Z'];

function randomKey(rng: Rng, withExtras: boolean): TupleKey {
  const key: TupleKey = { object: rng.pick(OBJECTS), relation: rng.pick(['viewer', 'owner']), user: rng.pick(USERS) };
  if (!withExtras) return key;
  const condition = rng.pick(CONDITIONS);
  const expires = rng.pick(EXPIRIES);
  return { ...key, ...(condition ? { condition } : {}), ...(expires ? { expires_at: expires } : {}) };
}

/** A random stored state and a random Write over a pool of 18 keys (so repeats and hits are common). */
function randomCase(rng: Rng): { stored: TupleKey[]; write: TupleWrite } {
  const stored = new Map<string, TupleKey>();
  for (let i = rng.int(6); i > 0; i--) {
    const t = randomKey(rng, true);
    stored.set(`${t.object}#${t.relation}@${t.user}`, t);
  }
  const list = (n: number, extras: boolean): TupleKey[] => Array.from({ length: n }, () => randomKey(rng, extras));
  // Deletes mostly of stored tuples, so that writes with deletes also succeed under 'error'.
  const kept = [...stored.values()].map(({ object, relation, user }) => ({ object, relation, user }));
  const deletes = list(rng.int(4), false).map((t) => (kept.length > 0 && rng.int(4) > 0 ? rng.pick(kept) : t));
  return {
    stored: [...stored.values()],
    write: {
      deletes,
      writes: list(rng.int(4), true),
      onDuplicate: rng.pick(['error', 'ignore'] as const),
      onMissing: rng.pick(['error', 'ignore'] as const),
    },
  };
}

type Outcome =
  | { readonly error: string }
  | { readonly revision: number; readonly deleted: readonly string[]; readonly written: readonly string[] };

const str = (t: TupleKey): string => `${t.object}#${t.relation}@${t.user}`;

async function seeded(storage: Storage, stored: readonly TupleKey[]): Promise<string> {
  const store = await storage.createStore('rules');
  if (stored.length > 0)
    await storage.writeTuples(store.id, { deletes: [], writes: stored, onDuplicate: 'error', onMissing: 'error' });
  return store.id;
}

async function outcome(storage: Storage, store: string, write: TupleWrite): Promise<Outcome> {
  try {
    const r = await storage.writeTuples(store, write);
    return { revision: r.revision, deleted: r.deleted.map(str), written: r.written.map(str) };
  } catch (err) {
    if (err instanceof AppError) return { error: `${err.code}: ${err.message}` };
    throw err;
  }
}

/** Every tuple of a store (key, condition, expiry) and its ReadChanges, in their orders. */
async function contents(storage: Storage, store: string): Promise<unknown> {
  const tuples = [];
  let after: string | undefined;
  do {
    const page = await storage.readTuples(store, {}, { pageSize: 100, after });
    tuples.push(...page.items.map((t) => t.key));
    after = page.next;
  } while (after);
  const changes = [];
  after = undefined;
  for (;;) {
    const page = await storage.readChanges(store, { pageSize: 100, after });
    if (page.items.length === 0) break;
    changes.push(...page.items.map((c) => [c.operation, c.tuple_key]));
    after = page.next;
  }
  return { tuples, changes };
}

describe.runIf(pgdb.run)('PostgreSQL write rules against write-plan.ts', () => {
  let storage: PgStorage;
  let client: pg.Client;
  const payloads: string[] = [];

  beforeAll(async () => {
    storage = await openPostgresStorage({ url: pgdb.url, poolSize: 2, reclaim: false });
    client = new pg.Client({ connectionString: pgdb.url });
    await client.connect();
    client.on('notification', (n) => {
      if (n.payload !== undefined) payloads.push(n.payload);
    });
    await client.query('LISTEN latch_events');
  });
  afterAll(async () => {
    await client?.end();
    await storage?.close();
  });

  /** The rows, revisions and changes of `store` after `base`, with the store's id and revision made relative. */
  async function state(store: string, base: number, ms: number): Promise<unknown> {
    const rows = async (sql: string): Promise<unknown[][]> =>
      (await client.query({ text: sql, values: [store], rowMode: 'array' })).rows as unknown[][];
    const rel = (r: unknown): number => Number(r) - base;
    const at = (v: unknown): string => (Number(v) === ms ? 'now' : 'before');
    return {
      tuples: (
        await rows(
          `SELECT object, relation, "user", condition, expires_ms, written_ms FROM latch_tuples WHERE store_key = (SELECT key FROM latch_stores WHERE id = $1) ORDER BY object, relation, "user"`,
        )
      ).map(([o, r, u, c, e, w]) => [o, r, u, c, e, at(w)]),
      changes: (
        await rows(
          `SELECT revision, seq, deleted, object, object_type, relation, "user", condition, ms, expires_ms FROM latch_changes WHERE store_id = $1 ORDER BY revision, seq`,
        )
      )
        .filter(([r]) => Number(r) > base)
        .map(([r, ...rest]) => [rel(r), ...rest.slice(0, 7), at(rest[7]), rest[8]]),
      revisions: (await rows(`SELECT revision, ms FROM latch_revisions WHERE store_id = $1 ORDER BY revision`))
        .filter(([r]) => Number(r) > base)
        .map(([r, m]) => [rel(r), at(m)]),
      store: (await rows(`SELECT revision, last_ms FROM latch_stores WHERE id = $1`)).map(([r, m]) => [rel(r), at(m)]),
    };
  }

  /** The NOTIFY payloads for `store` received since `from`, with the store id and revision made relative. */
  async function notified(store: string, base: number, from: number): Promise<unknown[]> {
    await client.query('SELECT 1'); // notifications of committed statements arrive before this answer
    return payloads
      .slice(from)
      .map((p) => JSON.parse(p) as { s: string; r: number })
      .filter((p) => p.s === store && p.r > base) // not the seeding write's, which may arrive late
      .map((p) => ({ ...p, s: 'S', r: p.r - base }));
  }

  it('every function gives the same result as the others, and the routing the same as write-plan.ts', async () => {
    const memory = await openMemoryStorage();
    const rng = new Rng(SEED);
    let applied = 0;
    let refused = 0;
    let viaAll = 0;
    let repeated = 0;
    let notifying = 0;
    for (let n = 0; n < CASES; n++) {
      const { stored, write } = randomCase(rng);
      const context = `case ${n} (seed ${SEED}): ${JSON.stringify({ stored, write })}`;

      // The production routing against the specification.
      const specStore = await seeded(memory, stored);
      const pgStore = await seeded(storage, stored);
      const spec = await outcome(memory, specStore, write);
      expect(await outcome(storage, pgStore, write), context).toEqual(spec);
      expect(await contents(storage, pgStore), context).toEqual(await contents(memory, specStore));
      if ('error' in spec) refused++;
      else applied++;

      // Each function directly, on its own store with the same state and instant.
      const args = writeArguments(write);
      const now = Date.now() + 3_600_000; // after every stored tuple's time: the write's own instant
      const calls: { name: string; query: { text: string; name: string; rowMode: 'array' }; head: unknown[] }[] = [
        {
          name: 'latch_write key by key',
          query: WRITE,
          head: [now, write.onDuplicate === 'error', write.onMissing === 'error', NODE, false],
        },
      ];
      if (args.distinct)
        calls.push({
          name: 'latch_write set path',
          query: WRITE,
          head: [now, write.onDuplicate === 'error', write.onMissing === 'error', NODE, true],
        });
      else repeated++;
      if (args.whole) {
        calls.push({ name: 'latch_write_all', query: WRITE_ALL, head: [now, NODE] });
        viaAll++;
      }
      const results = [];
      for (const call of calls) {
        const store = await seeded(storage, stored);
        const base = await storage.revision(store);
        const from = payloads.length;
        let answer: unknown;
        try {
          const r = await client.query({
            ...call.query,
            values: [store, ...call.head, ...args.deletes, ...args.writes],
          });
          const row = r.rows[0] as unknown[];
          answer = { revision: Number(row[0]) - base, ms: Number(row[1]) === now ? 'now' : row[1] };
        } catch (err) {
          if (!(err instanceof pg.DatabaseError) || err.code !== 'P0001') throw err;
          answer = { raised: err.message, detail: err.detail };
        }
        results.push({
          name: call.name,
          result: { answer, state: await state(store, base, now), payloads: await notified(store, base, from) },
        });
      }
      if ((results[0]?.result.payloads.length ?? 0) > 0) notifying++;
      for (const r of results.slice(1))
        expect(r.result, `${context}\n${r.name} vs ${results[0]?.name}`).toEqual(results[0]?.result);
    }
    // The random cases reach every path: applied and refused writes, repeated keys, latch_write_all,
    // commit events compared.
    expect([applied, refused, repeated, viaAll, notifying].every((c) => c > CASES / 20)).toBe(true);
    await memory.close();
  }, 300_000);
});
