// Read by user through the engine: the shape `{object: "T:", user[, relation]}` answers in
// (relation, object id) order with the same pages and cursors on every backend, whether the
// datastore serves it from its own index (PostgreSQL) or the engine from the store's in-memory
// index (LevelDB and memory keep no by-user keys). A random differential against a reference
// model covers usersets, wildcards, conditions, expiries, non-ASCII names and deletes; delete by
// filter of that shape goes through the same path; stale by-user keys of an older version are
// dropped at open.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuthorizationModelInput, TupleKey } from '../../src/domain/types.js';
import { DEFAULT_ENGINE_CONFIG } from '../../src/engine/config.js';
import { LatchService } from '../../src/engine/service.js';
import { key, NO_BY_USER_KEYS, userPosition } from '../../src/storage/codec.js';
import { openLevelKv, openLevelStorage } from '../../src/storage/level.js';
import { openMemoryStorage } from '../../src/storage/memory.js';
import { openPostgresStorage } from '../../src/storage/postgres/index.js';
import type { Storage, TupleFilter } from '../../src/storage/types.js';
import { databasePerFile } from '../support/postgres.js';
import { readShapes, type ReadTarget } from '../storage/read-shapes.js';

/** Each relation of these types takes every user shape the tests write, with or without a condition. */
const USERS = [
  { type: 'user' },
  { type: 'user', wildcard: {} },
  { type: 'group', relation: 'member' },
  { type: 'doc' },
].flatMap((u) => [u, { ...u, condition: 'office' }]);
const related = (relations: readonly string[]) => ({
  relations: Object.fromEntries(relations.map((r) => [r, { this: {} }])),
  metadata: { relations: Object.fromEntries(relations.map((r) => [r, { directly_related_user_types: USERS }])) },
});
const MODEL = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    { type: 'group', ...related(['member']) },
    { type: 'doc', ...related(['viewer', 'editor', 'owner']) },
    { type: 'docs', ...related(['viewer']) },
    { type: 'folder', ...related(['viewer', 'editor', 'owner', 'parent']) },
  ],
  conditions: {
    office: { name: 'office', expression: 'ip == "10.0.0.1"', parameters: { ip: { type_name: 'TYPE_NAME_STRING' } } },
  },
} as unknown as AuthorizationModelInput;
type Kind = 'memory' | 'leveldb' | 'postgres';
const KINDS: Kind[] = ['memory', 'leveldb', 'postgres'];

const pgdb = databasePerFile();
const dirs: string[] = [];
const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function levelDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'latch-read-by-user-'));
  dirs.push(dir);
  return dir;
}

async function open(kind: Kind): Promise<Storage> {
  if (kind === 'memory') return openMemoryStorage();
  if (kind === 'leveldb') return openLevelStorage(levelDir());
  return openPostgresStorage({ url: pgdb.url, poolSize: 2 });
}

interface Opened {
  readonly latch: LatchService;
  readonly storage: Storage;
  readonly store: string;
}

async function engine(kind: Kind): Promise<Opened> {
  const storage = await open(kind);
  const latch = new LatchService(storage, { ...DEFAULT_ENGINE_CONFIG, maxTuplesPerWrite: 1000 });
  closers.push(() => latch.close());
  const store = (await latch.createStore(`read-by-user-${kind}`)).id;
  await latch.writeModel(store, MODEL);
  return { latch, storage, store };
}

const write = (o: Opened, writes: readonly TupleKey[], deletes: readonly TupleKey[] = []) =>
  o.latch.write({ storeId: o.store, writes, deletes, onDuplicate: 'error', onMissing: 'error' });

/** Every page of `filter` at `pageSize`, as the tuples' strings and values. */
async function pages(o: Opened, filter: TupleFilter, pageSize: number): Promise<TupleKey[]> {
  const out: TupleKey[] = [];
  let after: string | undefined;
  for (let guard = 0; guard < 10_000; guard++) {
    const page = await o.latch.read({ storeId: o.store, filter, pageSize, after, consistency: 'UNSPECIFIED' });
    out.push(...page.items.map((t) => t.key));
    if (!page.next) return out;
    expect(page.items).toHaveLength(pageSize);
    after = page.next;
  }
  throw new Error('no end of pages');
}

for (const kind of KINDS) {
  describe.runIf(kind !== 'postgres' || pgdb.run)(`read by user through the engine: ${kind}`, () => {
    let o: Opened;
    beforeEach(async () => {
      o = await engine(kind);
    });

    readShapes((): ReadTarget => ({
      write: (tuples) => write(o, tuples),
      read: (filter, page) => o.latch.read({ storeId: o.store, filter, ...page, consistency: 'UNSPECIFIED' }),
      byUserOrder: true,
    }));

    it('pages of the by-user shape list the random reference exactly, across writes and deletes', async () => {
      let seed = 7;
      const next = (n: number): number => {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        return seed % n;
      };
      const users = ['user:anne', 'user:bob', 'user:*', 'group:eng#member', 'user:\u00fcml', 'group:\u00e9#member'];
      const relations = ['viewer', 'editor', 'owner'];
      const stored = new Map<string, TupleKey>();
      const id = (t: TupleKey): string => `${t.object}#${t.relation}@${t.user}`;
      for (let round = 0; round < 6; round++) {
        const writes: TupleKey[] = [];
        for (let i = 0; i < 150; i++) {
          const t: TupleKey = {
            object: `${next(4) === 0 ? 'folder' : 'doc'}:${next(3) === 0 ? '\u00e9' : ''}${next(60)}`,
            relation: relations[next(relations.length)] as string,
            user: users[next(users.length)] as string,
            ...(next(5) === 0 ? { condition: { name: 'office', context: { ip: `10.0.0.${next(9)}` } } } : {}),
            ...(next(7) === 0 ? { expires_at: new Date(Date.now() + 86_400_000 * (1 + next(300))).toISOString() } : {}),
          };
          if (stored.has(id(t)) || writes.some((w) => id(w) === id(t))) continue;
          writes.push(t);
        }
        const held = [...stored.values()];
        const deletes = held.filter(() => next(4) === 0).slice(0, 40);
        await write(
          o,
          writes,
          deletes.map(({ object, relation, user }) => ({ object, relation, user })),
        );
        for (const t of deletes) stored.delete(id(t));
        for (const t of writes) stored.set(id(t), t);
        for (const user of users)
          for (const relation of [undefined, 'viewer', 'owner'])
            for (const type of ['doc', 'folder']) {
              const filter = { object: `${type}:`, user, relation };
              const want = [...stored.values()]
                .filter(
                  (t) => t.user === user && t.object.startsWith(`${type}:`) && (!relation || t.relation === relation),
                )
                .sort((a, b) => (userPosition(a) < userPosition(b) ? -1 : 1));
              for (const pageSize of [1, 7, 100]) expect(await pages(o, filter, pageSize)).toEqual(want);
            }
      }
    });

    it('a cursor taken before a write resumes after its position at the new revision', async () => {
      const many = Array.from({ length: 250 }, (_, i) => ({
        object: `doc:${String(i).padStart(3, '0')}`,
        relation: 'viewer',
        user: 'user:anne',
      }));
      await write(o, many);
      const filter = { object: 'doc:', user: 'user:anne' };
      const first = await o.latch.read({ storeId: o.store, filter, pageSize: 100, consistency: 'UNSPECIFIED' });
      expect(first.items.map((t) => t.key.object)).toEqual(many.slice(0, 100).map((t) => t.object));
      // Between the pages: one tuple before the cursor and one after it go, one after it comes.
      await write(
        o,
        [{ object: 'doc:300', relation: 'viewer', user: 'user:anne' }],
        [many[5] as TupleKey, many[150] as TupleKey],
      );
      const rest: string[] = [];
      let after = first.next;
      while (after) {
        const page = await o.latch.read({ storeId: o.store, filter, pageSize: 100, after, consistency: 'UNSPECIFIED' });
        rest.push(...page.items.map((t) => t.key.object));
        after = page.next;
      }
      expect(rest).toEqual([...many.slice(100, 150), ...many.slice(151)].map((t) => t.object).concat('doc:300'));
    });

    it('delete by filter of the by-user shape removes exactly the matches, in pages of its limit', async () => {
      const tuples: TupleKey[] = [];
      for (let i = 0; i < 30; i++) {
        tuples.push({ object: `doc:${i}`, relation: i % 2 ? 'viewer' : 'editor', user: 'user:anne' });
        tuples.push({ object: `doc:${i}`, relation: 'viewer', user: 'user:bob' });
        tuples.push({ object: `folder:${i}`, relation: 'viewer', user: 'user:anne' });
      }
      await write(o, tuples);
      const filter = { objectType: 'doc', relation: 'viewer', user: 'user:anne' };
      const dry = await o.latch.deleteTuples({ storeId: o.store, filter, dryRun: true, limit: 100 });
      const want = tuples.filter(
        (t) => t.object.startsWith('doc:') && t.relation === 'viewer' && t.user === 'user:anne',
      );
      const sorted = [...want].sort((a, b) => (userPosition(a) < userPosition(b) ? -1 : 1));
      expect(dry).toMatchObject({ tuples: sorted, more: false });
      const deleted: TupleKey[] = [];
      for (let more = true; more;) {
        const d = await o.latch.deleteTuples({ storeId: o.store, filter, dryRun: false, limit: 4 });
        deleted.push(...d.tuples);
        more = d.more;
      }
      expect(deleted).toEqual(sorted);
      const left = await pages(o, { object: 'doc:', user: 'user:anne' }, 100);
      expect(left.map((t) => t.relation)).toEqual(Array(15).fill('editor'));
      expect(await pages(o, { object: 'doc:', user: 'user:bob' }, 100)).toHaveLength(30);
      expect(await pages(o, { object: 'folder:', user: 'user:anne' }, 100)).toHaveLength(30);
    });
  });
}

describe('by-user keys of an older version', () => {
  it('are dropped at open; the tuples and every other key stay', async () => {
    const dir = levelDir();
    const first = await openLevelStorage(dir);
    const store = (await first.createStore('older')).id;
    const tuples = Array.from({ length: 2500 }, (_, i) => ({
      object: `doc:${i}`,
      relation: 'viewer',
      user: 'user:anne',
    }));
    await first.writeTuples(store, { writes: tuples, deletes: [], onDuplicate: 'error', onMissing: 'error' });
    const keys = await first.countStoreKeys(store);
    await first.close();
    // What an older version left: one by-user key per tuple, with the tuple's value, and no
    // marker (an empty directory's first open stored it: this version never writes those keys).
    const kv = await openLevelKv(dir);
    const marker = key.meta(NO_BY_USER_KEYS);
    expect(await kv.get(marker)).toBeDefined();
    const value = await kv.get(key.tuple(store, tuples[0] as TupleKey));
    await kv.batch(
      [
        { type: 'del', key: marker },
        ...tuples.map((t) => ({
          type: 'put' as const,
          key: key.byUser(store) + userPosition(t),
          value: value as Uint8Array,
        })),
      ],
      true,
    );
    await kv.close();
    const again = await openLevelStorage(dir);
    await again.settled();
    expect(await again.countStoreKeys(store)).toBe(keys);
    const page = await again.readTuples(store, { object: 'doc:', user: 'user:anne' }, { pageSize: 5000 });
    expect(page.items).toHaveLength(2500);
    await again.close();
    // The open that found some stored no marker; the next finds none and stores it.
    const check = await openLevelKv(dir);
    expect(await check.get(marker)).toBeUndefined();
    await check.close();
    const last = await openLevelStorage(dir);
    await last.close();
    const after = await openLevelKv(dir);
    expect(await after.get(marker)).toBeDefined();
    await after.close();
  });
});
