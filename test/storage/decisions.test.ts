// The decision records (src/storage/decisions.ts), one suite run against every backend — memory,
// LevelDB (reopened: the byte count and the settings persist) and PostgreSQL — and the decision
// log's queue, retention and size cap over them (src/api/decisions/log.ts).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DecisionLog } from '../../src/api/decisions/log.js';
import { encodeTime, ulid, ulidTime } from '../../src/domain/ids.js';
import { batchId, decisionIdOf, openDecisionRecords, type DecisionRecords } from '../../src/storage/decisions.js';
import { openPostgresStorage } from '../../src/storage/postgres/index.js';
import { databasePerFile } from '../support/postgres.js';

const pgdb = databasePerFile();
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
  // The file leaves the process's decision-id clock no later than the real one (see decision()).
  expect(ulidTime(batchId(Date.now()))).toBeLessThanOrEqual(Date.now());
});

const STORE_A = '01JAAAAAAAAAAAAAAAAAAAAAAA';
const STORE_B = '01JBBBBBBBBBBBBBBBBBBBBBBB';
/** Without a setting of its own (PostgreSQL keeps the first test's settings of A and B). */
const STORE_C = '01JCCCCCCCCCCCCCCCCCCCCCCC';
const STORE_D = '01JDDDDDDDDDDDDDDDDDDDDDDD';

function decision(
  storeId: string,
  time: number,
  allowed: boolean,
): { storeId: string; batch: string; id: string; json: string[] } {
  // A batch id that carries exactly `time` (a fixed tag and counter), made without batchId:
  // batchId's clock is process-wide and never goes back, so a time ahead of now given to it would
  // stamp every later decision of this process with that time — other files' too, when they share
  // the worker, whose searches up to now then found nothing.
  const batch = `${encodeTime(time)}TESTS00000000100`;
  const id = decisionIdOf(batch, 0);
  const line = [
    time,
    'c1',
    'Check',
    '01JMMMMMMMMMMMMMMMMMMMMMMM',
    3,
    0,
    ['user:anne', 'viewer', 'doc:1', 0, 0],
    allowed ? 1 : 0,
  ];
  return { storeId, batch, id, json: [JSON.stringify(line)] };
}

interface Backend {
  readonly name: string;
  readonly run: boolean;
  /** Opens the records; `again` reopens the same data. */
  open(again?: boolean): Promise<DecisionRecords>;
}

let levelDir = '';
const backends: Backend[] = [
  { name: 'memory', run: true, open: () => openDecisionRecords(undefined) },
  {
    name: 'leveldb',
    run: true,
    async open(again) {
      if (!again) {
        levelDir = await mkdtemp(join(tmpdir(), 'latch-decisions-'));
        dirs.push(levelDir);
      }
      return openDecisionRecords(join(levelDir, 'decisions'));
    },
  },
  {
    name: 'postgres',
    run: pgdb.run,
    async open() {
      const storage = await openPostgresStorage({ url: pgdb.url, poolSize: 2, reclaim: false });
      await storage.close(); // the schema (latch_decisions) exists now
      return openDecisionRecords(undefined, { url: pgdb.url });
    },
  },
];

describe.each(backends)('decision records on $name', (b) => {
  it.runIf(b.run)('stores, finds, scans in time order, prunes by age and by size, keeps settings', async () => {
    let r = await b.open();
    const t0 = Date.now();
    const rows = [decision(STORE_A, t0, true), decision(STORE_B, t0 + 1, false), decision(STORE_A, t0 + 2, false)];
    // Three batches (the pruning index has one entry per batch and store).
    let added = 0;
    for (const row of rows) added += await r.append([row]);
    expect(added).toBeGreaterThan(0);
    expect(r.bytes).toBe(added);
    const [a0, b0, a1] = rows as [(typeof rows)[0], (typeof rows)[0], (typeof rows)[0]];
    expect(await r.get(STORE_A, a0.id)).toEqual({
      id: a0.id,
      timestamp: new Date(t0).toISOString(),
      store_id: STORE_A,
      client_id: 'c1',
      operation: 'Check',
      authorization_model_id: '01JMMMMMMMMMMMMMMMMMMMMMMM',
      revision: 3,
      instant: 0,
      request: {
        tuple_key: { user: 'user:anne', relation: 'viewer', object: 'doc:1' },
        contextual_tuples: [],
        context: null,
      },
      answer: { allowed: true },
    });
    // Another store's id, an unknown one and a malformed one are all absent.
    expect(await r.get(STORE_A, b0.id)).toBeUndefined();
    expect(await r.get(STORE_A, ulid(t0 + 5))).toBeUndefined();
    expect(await r.get(STORE_A, 'not-a-ulid')).toBeUndefined();
    const asc = await r.scan({ storeId: STORE_A, startMs: t0, endMs: t0 + 10, descending: false, limit: 10 });
    expect(asc.map((s) => s.record.id)).toEqual([a0.id, a1.id]);
    const desc = await r.scan({ storeId: STORE_A, startMs: t0, endMs: t0 + 10, descending: true, limit: 10 });
    expect(desc.map((s) => s.record.id)).toEqual([a1.id, a0.id]);
    const after = await r.scan({
      storeId: STORE_A,
      startMs: t0,
      endMs: t0 + 10,
      after: a0.id,
      descending: false,
      limit: 10,
    });
    expect(after.map((s) => s.record.id)).toEqual([a1.id]);
    await r.setSampling(STORE_A, 0.25);
    await r.setSampling(STORE_B, 1);
    await r.setSampling(STORE_B, undefined);
    if (b.name !== 'memory') {
      await r.close();
      r = await b.open(true);
      expect(r.bytes).toBe(added);
    }
    expect([...(await r.settings())]).toEqual([[STORE_A, 0.25]]);
    // By age: the first decision only.
    expect(await r.prune(t0 + 1, Number.MAX_SAFE_INTEGER)).toBe(1);
    expect(await r.get(STORE_A, a0.id)).toBeUndefined();
    // By size: the oldest go until the rest fit.
    expect(await r.prune(0, r.bytes - 1)).toBe(1);
    expect(await r.get(STORE_B, b0.id)).toBeUndefined();
    expect(await r.get(STORE_A, a1.id)).toBeDefined();
    expect(await r.prune(0, 0)).toBe(1);
    expect(r.bytes).toBe(0);
    await r.close();
  });

  it.runIf(b.run)('the log encodes every string and number exactly, interleaved stores included', async () => {
    const records = await b.open();
    const log = await DecisionLog.open(records, { sampling: 1 });
    const odd = ['plain', 'quo"te', 'back\\slash', 'tab\there', 'nul\u0000', 'é ü 日本', '\u007f', '\ud800 lone', '😀'];
    const want: { store: string; user: string; allowed: boolean; revision: number; context: unknown }[] = [];
    for (let i = 0; i < 40; i++) {
      const store = i % 3 === 0 ? STORE_D : STORE_C;
      const user = `user:${odd[i % odd.length] as string}`;
      const context = i % 4 === 0 ? { s: odd[(i + 1) % odd.length] as string, n: i / 3 } : undefined;
      const revision = i === 7 ? 2 ** 40 + 1 : i;
      const contextual = i % 5 === 0 ? [{ object: 'doc:"x"', relation: 'viewer', user: 'user:ü' }] : [];
      log.check(
        `client ${odd[i % odd.length] as string}`,
        'Check',
        {
          storeId: store,
          tupleKey: { user, relation: 'viewer', object: `doc:${i}` },
          contextualTuples: contextual,
          context,
        },
        { allowed: i % 2 === 0, modelId: 'm', revision, instant: i === 9 ? 1.5 : 0 },
      );
      want.push({ store, user, allowed: i % 2 === 0, revision, context: context ?? null });
    }
    await log.flush();
    const got: unknown[] = [];
    for (const store of [STORE_C, STORE_D]) {
      const rows = await records.scan({
        storeId: store,
        startMs: 0,
        endMs: Date.now() + 120_000,
        limit: 100,
        descending: false,
      });
      for (const { record } of rows) {
        const i = Number((record.request.tuple_key as { object: string }).object.slice(4));
        expect(record.client_id).toBe(`client ${odd[i % odd.length] as string}`);
        expect(record.instant).toBe(i === 9 ? 1.5 : 0);
        expect(record.request.contextual_tuples).toEqual(
          i % 5 === 0 ? [{ object: 'doc:"x"', relation: 'viewer', user: 'user:ü' }] : [],
        );
        got[i] = {
          store,
          user: (record.request.tuple_key as { user: string }).user,
          allowed: record.answer.allowed,
          revision: record.revision,
          context: record.request.context,
        };
      }
    }
    expect(got).toEqual(want);
    await log.close();
  });

  it.runIf(b.run)('the log stays within its size cap under sustained recording', async () => {
    const records = await b.open();
    const cap = 64 * 1024;
    const log = await DecisionLog.open(records, { sampling: 1, maxBytes: cap });
    const q = {
      storeId: STORE_C,
      tupleKey: { user: 'user:anne', relation: 'viewer', object: 'doc:1' },
      contextualTuples: [],
    };
    let peak = 0;
    for (let round = 0; round < 20; round++) {
      for (let i = 0; i < 100; i++)
        log.check('c1', 'Check', q, { allowed: i % 2 === 0, modelId: 'm', revision: round });
      await log.flush();
      peak = Math.max(peak, records.bytes);
      expect(records.bytes).toBeLessThanOrEqual(cap);
    }
    expect(log.stats).toMatchObject({ recorded: 2000, dropped: 0 });
    expect(peak).toBeGreaterThan(cap / 2);
    await log.close();
  });
});

describe('the decision log queue', () => {
  it('a full queue drops and counts, never blocks; sampling 0 records nothing', async () => {
    const log = await DecisionLog.open(await openDecisionRecords(undefined), { sampling: 1, queueMax: 10 });
    const q = {
      storeId: STORE_A,
      tupleKey: { user: 'user:anne', relation: 'viewer', object: 'doc:1' },
      contextualTuples: [],
    };
    for (let i = 0; i < 25; i++) log.check('', 'Check', q, { allowed: true, modelId: 'm' });
    expect(log.stats).toMatchObject({ queued: 10, dropped: 15 });
    await log.flush();
    expect(log.stats).toMatchObject({ queued: 0, recorded: 10, dropped: 15 });
    await log.setSampling(STORE_A, 0);
    expect(log.active).toBe(true); // the server's default still samples other stores
    log.check('', 'Check', q, { allowed: true, modelId: 'm' });
    expect(log.stats.queued).toBe(0);
    await log.close();
    const off = await DecisionLog.open(await openDecisionRecords(undefined), {});
    expect(off.active).toBe(false);
    await off.setSampling(STORE_B, 0.5);
    expect(off.active).toBe(true);
    expect(off.rate(STORE_B)).toBe(0.5);
    expect(off.rate(STORE_A)).toBe(0);
    await off.close();
  });
});
