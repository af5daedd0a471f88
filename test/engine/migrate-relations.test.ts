// Relation migrations on every backend (memory, LevelDB, PostgreSQL): a model that renames
// document#reader to document#viewer ships with its data. At each step the impact of the pending
// model change is zero on every relation both models define (`can_read`, the one applications
// ask), the renamed relation's pairs move from reader to viewer one for one, and the live model's
// answers never move; writes and deletes made to reader mid-migration are carried over; a step
// interrupted and resumed from its cursor ends in the same state; finish is refused until the new
// model is the latest, then deletes the old tuples.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AuthorizationModelInput, TupleKey } from '../../src/domain/types.js';
import type { ImpactLine, MigrateInput, MigrateOutput } from '../../src/engine/contract.js';
import { LatchService } from '../../src/engine/service.js';
import { AppError } from '../../src/errors.js';
import { dslToModel } from '../../src/model/dsl.js';
import { openStorage } from '../../src/storage/index.js';
import type { Storage } from '../../src/storage/types.js';
import { databasePerFile } from '../support/postgres.js';
import { config } from '../support/pg-node.js';

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
      const dir = await mkdtemp(join(tmpdir(), 'latch-migrate-'));
      dirs.push(dir);
      return openStorage({ path: dir });
    },
  ],
];
if (pgdb.run) BACKENDS.push(['postgres', () => openStorage({ postgres: { url: pgdb.url, poolSize: 4 } })]);

const model = (rel: string): AuthorizationModelInput =>
  dslToModel(`model
  schema 1.1
type user
type group
  relations
    define member: [user]
type document
  relations
    define owner: [user]
    define ${rel}: [user, group#member]
    define can_read: ${rel} or owner
`);
const OLD = model('reader');
const NEW = model('viewer');
const MAP = [{ objectType: 'document', from: 'reader', to: 'viewer' }];
const DOCS = 30;
const USERS = ['user:u0', 'user:u1', 'user:u2', 'user:u3'];

const k = (object: string, relation: string, user: string): TupleKey => ({ object, relation, user });

function seed(): TupleKey[] {
  const t: TupleKey[] = [k('group:g', 'member', 'user:u3')];
  for (let d = 0; d < DOCS; d++) {
    t.push(k(`document:${d}`, 'reader', USERS[d % 3] as string));
    if (d % 4 === 0) t.push(k(`document:${d}`, 'reader', 'group:g#member'));
    if (d % 5 === 0) t.push(k(`document:${d}`, 'owner', 'user:u1'));
  }
  return t;
}

async function impact(n: LatchService, storeId: string, candidate: AuthorizationModelInput, baseModelId?: string) {
  const { lines } = await n.impact({ storeId, candidate, baseModelId, sampleSize: 5, assertions: false });
  const pairs: Extract<ImpactLine, { kind: 'gained' | 'lost' }>[] = [];
  let summary: Extract<ImpactLine, { kind: 'summary' }> | undefined;
  for await (const l of lines) {
    if (l.kind === 'gained' || l.kind === 'lost') pairs.push(l);
    if (l.kind === 'summary') summary = l;
  }
  if (!summary) throw new Error('no summary');
  const of = (rel: string) => summary?.relations.find((r) => r.relation === rel && r.object_type === 'document');
  const moved = (kind: 'gained' | 'lost', rel: string): string[] =>
    pairs
      .filter((p) => p.kind === kind && p.relation === rel)
      .map((p) => `${p.object}@${p.user}`)
      .sort();
  return { summary, of, moved };
}

/** can_read of every (document, user) under the model given, as a sorted list of allowed pairs. */
async function canRead(n: LatchService, storeId: string, modelId: string): Promise<string[]> {
  const out: string[] = [];
  for (let d = 0; d < DOCS + 2; d++)
    for (const user of USERS) {
      const r = await n.check({
        storeId,
        modelId,
        tupleKey: k(`document:${d}`, 'can_read', user),
        contextualTuples: [],
        consistency: 'HIGHER_CONSISTENCY',
      });
      if (r.allowed) out.push(`document:${d}@${user}`);
    }
  return out;
}

async function run(n: LatchService, input: MigrateInput): Promise<MigrateOutput[]> {
  const steps: MigrateOutput[] = [];
  let cursor = input.cursor;
  for (;;) {
    const out = await n.migrateRelations({ ...input, cursor });
    steps.push(out);
    cursor = out.cursor;
    if (out.done) return steps;
  }
}

describe.each(BACKENDS)('relation migration on %s', (_name, open) => {
  it('renames document#reader to document#viewer with zero impact at each step', async () => {
    const n = new LatchService(await open(), config, () => undefined);
    try {
      const s = (await n.createStore('migrate')).id;
      const m1 = await n.writeModel(s, OLD);
      const tuples = seed();
      for (let i = 0; i < tuples.length; i += 50)
        await n.write({
          storeId: s,
          writes: tuples.slice(i, i + 50),
          deletes: [],
          onDuplicate: 'error',
          onMissing: 'error',
        });
      const live = await canRead(n, s, m1);
      expect(live.length).toBeGreaterThan(DOCS);

      // Before the copy: shipping the new model would lose access.
      const before = await impact(n, s, NEW);
      expect(before.of('can_read')?.lost).toBeGreaterThan(0);

      // Dry run: counts, nothing written.
      const dry = await run(n, { storeId: s, maps: MAP, mode: 'dry_run', candidate: NEW, limit: 7 });
      expect(dry.reduce((x, o) => x + o.matching, 0)).toBe(tuples.filter((t) => t.relation === 'reader').length);
      expect(dry.reduce((x, o) => x + o.copied, 0)).toBe(0);
      expect(dry.every((o) => o.rejected === 0)).toBe(true);
      const revision = dry[0]?.revision;

      // Copy, interrupted after one small step and resumed from its cursor.
      const first = await n.migrateRelations({ storeId: s, maps: MAP, mode: 'copy', candidate: NEW, limit: 10 });
      expect(first.done).toBe(false);
      expect(first.copied).toBe(10);
      expect(first.revision).toBeGreaterThan(revision ?? 0);
      // Meanwhile the application writes and deletes reader tuples (still the live relation).
      await n.write({
        storeId: s,
        writes: [k('document:30', 'reader', 'user:u2'), k('document:31', 'reader', 'user:u0')],
        deletes: [k('document:0', 'reader', 'user:u0'), k('document:29', 'reader', 'user:u2')],
        onDuplicate: 'error',
        onMissing: 'error',
      });
      const rest = await run(n, {
        storeId: s,
        maps: MAP,
        mode: 'copy',
        candidate: NEW,
        limit: 25,
        cursor: first.cursor,
      });
      expect(rest.at(-1)?.phase).toBe('carry');
      expect(rest.reduce((x, o) => x + o.carried, 0)).toBeGreaterThan(0);

      // The live model's answers did not move; the new model would answer the same.
      const liveNow = await canRead(n, s, m1);
      const after = await impact(n, s, NEW);
      expect(after.of('can_read')).toMatchObject({ gained: 0, lost: 0, undetermined: 0 });
      expect(after.moved('lost', 'reader')).toEqual(after.moved('gained', 'viewer'));
      expect(after.moved('lost', 'reader').length).toBeGreaterThan(0);
      expect(after.summary.rejected_tuples).toBe(tuples.filter((t) => t.relation === 'reader').length);

      // More writes to reader, carried by a later copy step.
      await n.write({
        storeId: s,
        writes: [k('document:1', 'reader', 'user:u3')],
        deletes: [],
        onDuplicate: 'error',
        onMissing: 'error',
      });
      const again = await run(n, {
        storeId: s,
        maps: MAP,
        mode: 'copy',
        candidate: NEW,
        limit: 100,
        cursor: rest.at(-1)?.cursor,
      });
      expect(again.reduce((x, o) => x + o.carried, 0)).toBe(1);
      expect((await impact(n, s, NEW)).of('can_read')).toMatchObject({ gained: 0, lost: 0 });

      // Finish is refused while the latest model still defines reader.
      const refused = await n
        .migrateRelations({ storeId: s, maps: MAP, mode: 'finish', limit: 100, cursor: again.at(-1)?.cursor })
        .catch((e: unknown) => e);
      expect((refused as AppError).code).toBe('validation_error');

      // Ship the new model, finish: the old tuples go, answers are those the old model gave.
      const liveBeforeFinish = await canRead(n, s, m1);
      const m2 = await n.writeModel(s, NEW);
      const done = await run(n, { storeId: s, maps: MAP, mode: 'finish', limit: 20, cursor: again.at(-1)?.cursor });
      expect(done.at(-1)?.phase).toBe('done');
      const left = await n.read({
        storeId: s,
        filter: { object: 'document:', relation: 'reader' },
        consistency: 'HIGHER_CONSISTENCY',
        pageSize: 10,
      });
      expect(left.items).toEqual([]);
      expect(await canRead(n, s, m2)).toEqual(liveBeforeFinish);
      const end = await impact(n, s, NEW, m2);
      expect(end.summary).toMatchObject({ gained: 0, lost: 0, rejected_tuples: 0 });
      expect(liveNow).not.toEqual(live); // the mid-migration writes did change the answers
    } finally {
      await n.close();
    }
  });
});
