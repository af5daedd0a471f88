// Guarded writes on every backend (memory, LevelDB, PostgreSQL): each precondition shape holds or
// fails; a failed one answers 409 write_precondition_failed with its index and writes nothing (the
// store's tuples, changelog and revision read back unchanged); the guard sees every earlier
// acknowledged write of the store, even one still in flight when the guarded write was sent.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { TupleKey } from '../../src/domain/types.js';
import type { WriteInput, WritePrecondition } from '../../src/engine/contract.js';
import { LatchService } from '../../src/engine/service.js';
import { AppError } from '../../src/errors.js';
import { openStorage } from '../../src/storage/index.js';
import type { Storage } from '../../src/storage/types.js';
import { databasePerFile } from '../support/postgres.js';
import { config, MODEL } from '../support/pg-node.js';

const pgdb = databasePerFile();
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const BACKENDS: [string, () => Promise<Storage>][] = [
  ['memory', () => openStorage({})],
  [
    'leveldb',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'latch-guarded-'));
      dirs.push(dir);
      return openStorage({ path: dir });
    },
  ],
];
if (pgdb.run) BACKENDS.push(['postgres', () => openStorage({ postgres: { url: pgdb.url, poolSize: 4 } })]);

const key = (object: string, relation: string, user: string): TupleKey => ({ object, relation, user });
const grantBob = (storeId: string, preconditions: WritePrecondition[]): WriteInput => ({
  storeId,
  writes: [key('doc:1', 'viewer', 'user:bob')],
  deletes: [],
  onDuplicate: 'error',
  onMissing: 'error',
  preconditions,
});
const annMayView = (expect: boolean): WritePrecondition => ({
  kind: 'check',
  tupleKey: key('doc:1', 'viewer', 'user:anne'),
  contextualTuples: [],
  expect,
});

async function precondition(p: Promise<unknown>): Promise<number | undefined> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  const e = err as AppError;
  expect(e.code).toBe('write_precondition_failed');
  expect(e.status).toBe(409);
  return e.toBody()['precondition_index' as keyof ReturnType<AppError['toBody']>] as unknown as number;
}

describe.each(BACKENDS)('guarded writes on %s', (_name, open) => {
  async function withStore(fn: (n: LatchService, storeId: string) => Promise<void>): Promise<void> {
    const n = new LatchService(await open(), config, () => undefined);
    try {
      const s = (await n.createStore('guarded')).id;
      await n.writeModel(s, MODEL);
      await n.write({
        storeId: s,
        writes: [key('doc:1', 'owner', 'user:anne')],
        deletes: [],
        onDuplicate: 'error',
        onMissing: 'error',
      });
      await fn(n, s);
    } finally {
      await n.close();
    }
  }

  /** Everything a failed guarded write must have left alone. */
  async function state(n: LatchService, storeId: string): Promise<unknown> {
    const tuples = await n.read({ storeId, filter: {}, consistency: 'HIGHER_CONSISTENCY', pageSize: 100 });
    const changes = await n.readChanges({ storeId, pageSize: 100 });
    return { tuples: tuples.items.map((t) => t.key), changes: changes.items.map((c) => [c.operation, c.tuple_key]) };
  }

  it('a check precondition that holds lets the write apply; one that fails writes nothing', () =>
    withStore(async (n, s) => {
      const before = await state(n, s);
      expect(await precondition(n.write(grantBob(s, [annMayView(false)])))).toBe(0);
      expect(await state(n, s)).toEqual(before);
      const out = await n.write(grantBob(s, [annMayView(true)]));
      expect(out.written).toBe(1);
      expect(out.revision).toBe(2);
    }));

  it('tuple_exists and tuple_absent: the first failing one is named by its index', () =>
    withStore(async (n, s) => {
      const before = await state(n, s);
      const owner = key('doc:1', 'owner', 'user:anne');
      const other = key('doc:1', 'owner', 'user:carl');
      const failing: [WritePrecondition[], number][] = [
        [[{ kind: 'tuple_exists', tuple: other }], 0],
        [
          [
            { kind: 'tuple_exists', tuple: owner },
            { kind: 'tuple_absent', tuple: owner },
          ],
          1,
        ],
        [[annMayView(true), { kind: 'tuple_absent', tuple: other }, { kind: 'tuple_exists', tuple: other }], 2],
      ];
      for (const [guards, index] of failing) expect(await precondition(n.write(grantBob(s, guards)))).toBe(index);
      expect(await state(n, s)).toEqual(before);
      const ok = await n.write(
        grantBob(s, [{ kind: 'tuple_exists', tuple: owner }, { kind: 'tuple_absent', tuple: other }, annMayView(true)]),
      );
      expect(ok.written).toBe(1);
    }));

  it('the guard sees an earlier write sent just before it, still in flight', () =>
    withStore(async (n, s) => {
      const revoke = n.write({
        storeId: s,
        writes: [],
        deletes: [key('doc:1', 'owner', 'user:anne')],
        onDuplicate: 'error',
        onMissing: 'error',
      });
      const guarded = n.write(grantBob(s, [annMayView(true)]));
      await revoke;
      // On memory and LevelDB the store's write order puts the guard after the revoke; on
      // PostgreSQL either may take the row lock first: the guard then fails, or commits first.
      const r = await guarded.then(
        (o) => o.revision,
        (e: unknown) => e,
      );
      if (typeof r === 'number') expect(_name).toBe('postgres');
      else expect((r as AppError).code).toBe('write_precondition_failed');
    }));

  it('a malformed check precondition is refused before anything is evaluated', () =>
    withStore(async (n, s) => {
      const bad: WritePrecondition = {
        kind: 'check',
        tupleKey: key('doc:1', 'no_such', 'user:anne'),
        contextualTuples: [],
        expect: true,
      };
      const err = await n.write(grantBob(s, [bad])).catch((e: unknown) => e);
      expect((err as AppError).status).toBe(400);
      expect(
        await n.check({
          storeId: s,
          tupleKey: key('doc:1', 'viewer', 'user:bob'),
          contextualTuples: [],
          consistency: 'HIGHER_CONSISTENCY',
        }),
      ).toMatchObject({ allowed: false });
    }));
});
