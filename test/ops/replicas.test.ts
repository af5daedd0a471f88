// Three `latch serve` processes over one PostgreSQL database (reached through a TCP proxy, so the
// database can be made unreachable and reachable again): writes through one node are seen at once
// by HIGHER_CONSISTENCY and Latch-Min-Revision queries on the others; concurrent writers on all
// three leave every node equal to a single-node replay; kill -9 of a node mid-burst loses nothing
// acknowledged and the restarted node catches up; during a database outage the nodes answer 503
// `unavailable` to whatever needs the database, keep answering MINIMIZE_LATENCY Checks from their
// indexes, and reconnect by themselves.
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { QUERY_FILES } from '../conformance/engine.js';
import { runReplicated } from '../conformance/replica.js';
import { LatchService } from '../../src/engine/service.js';

import { openStorage } from '../../src/storage/index.js';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/postgres.js';
import { send } from '../support/http-client.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { DOC_MODEL, json, readAll, startLatch, type LatchProcess } from './process.js';
import { DEFAULT_ENGINE_CONFIG } from '../../src/engine/config.js';

const run = hasPostgres();
let db: TestDatabase;
let proxy: TcpProxy;
let url = '';
const nodes: LatchProcess[] = [];

/** One node: PostgreSQL through the proxy, a 100 ms poll (events may be lost during an outage). */
function startNode(): Promise<LatchProcess> {
  return startLatch(['--datastore', 'postgres', '--postgres-url', url, '--poll-interval', '100', '--workers', '0']);
}

beforeAll(async () => {
  if (!run) return;
  db = await createTestDatabase();
  const target = new URL(db.url);
  proxy = await TcpProxy.open({ host: target.hostname, port: Number(target.port) });
  url = proxy.url(db.url);
  for (const n of await Promise.all([startNode(), startNode(), startNode()])) nodes.push(n);
}, 120_000);

afterAll(async () => {
  // LATCH_TEST_LOGS=dir keeps each node's log for a post-mortem.
  const logs = process.env.LATCH_TEST_LOGS;
  if (logs) nodes.forEach((n, i) => writeFileSync(path.join(logs, `replica-node-${i}.log`), n.stderr()));
  for (const n of nodes) n.proc.kill('SIGKILL');
  await Promise.all(nodes.map((n) => n.exited));
  await proxy?.stop();
  if (run) await db.drop();
});

const key = (object: string, user: string): { user: string; relation: string; object: string } => ({
  user,
  relation: 'viewer',
  object,
});

async function newStore(base: string, name: string): Promise<string> {
  const store = (await json(base, 'POST', '/stores', { name })).body.id as string;
  expect((await json(base, 'POST', `/stores/${store}/authorization-models`, DOC_MODEL)).status).toBe(201);
  return store;
}

async function check(
  base: string,
  store: string,
  k: { user: string; relation: string; object: string },
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await send(`${base}/stores/${store}/check`, {
    method: 'POST',
    body: JSON.stringify({ tuple_key: k, ...extra }),
    headers: { 'content-type': 'application/json', ...headers },
  });
  return { status: r.status, body: r.text ? (JSON.parse(r.text) as Record<string, unknown>) : {} };
}

/** A write of `writes` (and `deletes`); its status, body and Latch-Revision. */
async function write(
  base: string,
  store: string,
  writes: object[],
  deletes: object[] = [],
): Promise<{ status: number; body: Record<string, unknown>; revision: number | undefined }> {
  const body: Record<string, unknown> = {};
  if (writes.length) body.writes = { tuple_keys: writes };
  if (deletes.length) body.deletes = { tuple_keys: deletes };
  const r = await json(base, 'POST', `/stores/${store}/write`, body);
  const h = r.headers.get('latch-revision');
  return { ...r, revision: h === null ? undefined : Number(h) };
}

/** While the database is unreachable: what each kind of request gets from every node. */
async function outage(store: string): Promise<void> {
  const statuses = new Map<string, number[]>();
  const note = (what: string, status: number): void =>
    void (statuses.get(what) ?? statuses.set(what, []).get(what))?.push(status);
  for (let round = 0; round < 10; round++) {
    for (const n of nodes) {
      const plain = await check(n.base, store, key('doc:before', 'user:anne'), { consistency: 'MINIMIZE_LATENCY' });
      note('minimize', plain.status);
      if (plain.status === 200) expect(plain.body.allowed).toBe(true);
      note(
        'higher',
        (await check(n.base, store, key('doc:before', 'user:anne'), { consistency: 'HIGHER_CONSISTENCY' })).status,
      );
      const w = await write(n.base, store, [key(`doc:during${round}`, 'user:anne')]);
      note('write', w.status);
      if (w.status !== 200) expect(w.body.code).toBe('unavailable');
      note('read', (await json(n.base, 'POST', `/stores/${store}/read`, {})).status);
    }
  }
  expect(new Set(statuses.get('minimize'))).toEqual(new Set([200]));
  expect(new Set(statuses.get('higher'))).toEqual(new Set([503]));
  expect(new Set(statuses.get('write'))).toEqual(new Set([503]));
  expect(new Set(statuses.get('read'))).toEqual(new Set([503]));
  for (const n of nodes) expect(n.proc.exitCode).toBeNull();
}

describe.runIf(run)('three latch processes over one PostgreSQL database', () => {
  it('a write through A is seen at once by HIGHER_CONSISTENCY and Latch-Min-Revision queries on B and C', async () => {
    const [a, b, c] = nodes as [LatchProcess, LatchProcess, LatchProcess];
    const store = await newStore(a.base, 'visible');
    for (let i = 0; i < 20; i++) {
      const w = await write(a.base, store, [key(`doc:v${i}`, 'user:anne')]);
      expect(w.status).toBe(200);
      expect(w.revision).toBe(3 * i + 1);
      for (const n of [b, c]) {
        expect(
          (await check(n.base, store, key(`doc:v${i}`, 'user:anne'), { consistency: 'HIGHER_CONSISTENCY' })).body,
        ).toEqual({ allowed: true, resolution: '' });
      }
      const w2 = await write(b.base, store, [], [key(`doc:v${i}`, 'user:anne')]);
      expect(w2.revision).toBe(w.revision === undefined ? undefined : w.revision + 1);
      for (const n of [a, c]) {
        expect(
          (await check(n.base, store, key(`doc:v${i}`, 'user:anne'), {}, { 'Latch-Min-Revision': String(w2.revision) }))
            .body,
        ).toEqual({ allowed: false, resolution: '' });
      }
      expect((await write(c.base, store, [key(`doc:v${i}`, 'user:anne')])).revision).toBe((w2.revision ?? 0) + 1);
    }
  });

  it("concurrent writers on all three nodes: every node's tuples, change log and answers equal a single-node replay", async () => {
    const store = await newStore((nodes[0] as LatchProcess).base, 'concurrent');
    const universe: { user: string; relation: string; object: string }[] = [];
    for (let d = 0; d < 10; d++)
      for (const u of ['user:a', 'user:b', 'user:c', 'user:d', 'user:e']) universe.push(key(`doc:${d}`, u));
    let seed = 11;
    const rnd = (n: number): number => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) % n;
    };
    const acked: { revision: number; writes: typeof universe; deletes: typeof universe }[] = [];
    const writer = async (base: string): Promise<void> => {
      for (let i = 0; i < 40; i++) {
        const picked = new Map<string, (typeof universe)[number]>();
        for (let k = 1 + rnd(3); k > 0; k--) {
          const t = universe[rnd(universe.length)] as (typeof universe)[number];
          picked.set(t.object + t.user, t);
        }
        const keys = [...picked.values()];
        const deletes = keys.filter(() => rnd(3) === 0);
        const writes = keys.filter((t) => !deletes.includes(t));
        const r = await write(base, store, writes, deletes);
        if (r.status === 200) acked.push({ revision: r.revision ?? -1, writes, deletes });
        else expect(r.body.code).toBe('write_failed_due_to_invalid_input'); // lost a race with another node: not acknowledged
      }
    };
    await Promise.all(nodes.flatMap((n) => [writer(n.base), writer(n.base)]));
    expect(acked.length).toBeGreaterThan(60);
    acked.sort((x, y) => x.revision - y.revision);
    expect(acked.map((w) => w.revision)).toEqual(acked.map((_, i) => i + 1));

    const replay = new LatchService(await openStorage({}), { ...DEFAULT_ENGINE_CONFIG, workers: 0 }, () => undefined);
    try {
      const rs = (await replay.createStore('replay')).id;
      await replay.writeModel(rs, DOC_MODEL);
      for (const w of acked)
        await replay.write({
          storeId: rs,
          writes: w.writes,
          deletes: w.deletes,
          onDuplicate: 'error',
          onMissing: 'error',
        });
      const expected = await Promise.all(
        universe.map(
          async (t) =>
            (await replay.check({ storeId: rs, tupleKey: t, contextualTuples: [], consistency: 'MINIMIZE_LATENCY' }))
              .allowed,
        ),
      );
      const expectedTuples = new Set(universe.filter((_, i) => expected[i]).map((t) => `${t.object}#viewer@${t.user}`));
      const replayLog: string[] = [];
      for (
        let after: string | undefined, page;
        (page = await replay.readChanges({ storeId: rs, pageSize: 100, after })).items.length > 0;
        after = page.next
      ) {
        replayLog.push(...page.items.map((c) => `${c.operation} ${c.tuple_key.object}@${c.tuple_key.user}`));
      }
      const last = String(acked.length);
      for (const n of nodes) {
        expect(await readAll(n.base, store)).toEqual(expectedTuples);
        const log: string[] = [];
        let token = '';
        for (;;) {
          const r = await json(
            n.base,
            'GET',
            `/stores/${store}/changes?page_size=100${token ? `&continuation_token=${token}` : ''}`,
          );
          const changes = r.body.changes as { operation: string; tuple_key: { object: string; user: string } }[];
          if (changes.length === 0) break;
          log.push(...changes.map((c) => `${c.operation} ${c.tuple_key.object}@${c.tuple_key.user}`));
          token = r.body.continuation_token as string;
        }
        expect(log).toEqual(replayLog);
        const answers = await Promise.all(
          universe.map(async (t) => (await check(n.base, store, t, {}, { 'Latch-Min-Revision': last })).body.allowed),
        );
        expect(answers).toEqual(expected);
      }
    } finally {
      await replay.close();
    }
  }, 120_000);

  it('kill -9 of a node mid-burst, then restart: nothing acknowledged is lost and it catches up', async () => {
    const store = await newStore((nodes[0] as LatchProcess).base, 'kill');
    const acked: string[] = [];
    let top = 0;
    let stop = false;
    let n = 0;
    const writer = async (node: number): Promise<void> => {
      while (!stop) {
        const k = key(`doc:k${n++}`, `user:w${node}`);
        try {
          const r = await write((nodes[node] as LatchProcess).base, store, [k]);
          if (r.status === 200) {
            acked.push(`${k.object}#viewer@${k.user}`);
            top = Math.max(top, r.revision ?? 0);
          }
        } catch {
          if (node === 2) return; // the killed node's connection went away: those writes are not acknowledged
        }
      }
    };
    const writers = [0, 0, 1, 1, 2, 2, 2].map((i) => writer(i));
    const acknowledged = (n: number): Promise<void> =>
      vi.waitFor(() => expect(acked.length).toBeGreaterThanOrEqual(n), { timeout: 120_000, interval: 10 });
    await acknowledged(150);
    const victim = nodes[2] as LatchProcess;
    victim.proc.kill('SIGKILL');
    expect(await victim.exited).toBeNull();
    await acknowledged(300);
    nodes[2] = await startNode();
    await acknowledged(400);
    stop = true;
    await Promise.all(writers);
    const everything = await readAll((nodes[0] as LatchProcess).base, store);
    for (const t of acked) expect(everything.has(t)).toBe(true);
    // The restarted node catches up: it answers from an index holding every acknowledged write.
    for (const t of acked) {
      const [object, user] = t.split('#viewer@') as [string, string];
      expect(
        (
          await check(
            (nodes[2] as LatchProcess).base,
            store,
            key(object, user),
            {},
            { 'Latch-Min-Revision': String(top) },
          )
        ).body.allowed,
      ).toBe(true);
    }
    expect(await readAll((nodes[2] as LatchProcess).base, store)).toEqual(everything);
  }, 180_000);

  it('the database unreachable under load: 503 unavailable for what needs it, MINIMIZE_LATENCY Checks answered, reconnect by themselves', async () => {
    const [a, b] = nodes as [LatchProcess, LatchProcess];
    const store = await newStore(a.base, 'outage');
    const before = await write(a.base, store, [key('doc:before', 'user:anne')]);
    expect(before.status).toBe(200);
    for (const n of nodes) {
      expect(
        (
          await check(
            n.base,
            store,
            key('doc:before', 'user:anne'),
            {},
            { 'Latch-Min-Revision': String(before.revision) },
          )
        ).body.allowed,
      ).toBe(true);
    }
    await proxy.stop();
    try {
      await outage(store);
    } finally {
      await proxy.start();
    }
    // Reconnection is the nodes' own: keep writing until one succeeds (bounded), then everything works.
    await vi.waitFor(
      async () => expect((await write(b.base, store, [key('doc:after', 'user:anne')])).status).toBe(200),
      { timeout: 60_000, interval: 50 },
    );
    for (const n of nodes) {
      await vi.waitFor(
        async () =>
          expect(
            await check(n.base, store, key('doc:after', 'user:anne'), { consistency: 'HIGHER_CONSISTENCY' }),
          ).toEqual({ status: 200, body: { allowed: true, resolution: '' } }),
        { timeout: 60_000, interval: 50 },
      );
      expect(
        (await check(n.base, store, key('doc:before', 'user:anne'), { consistency: 'HIGHER_CONSISTENCY' })).body
          .allowed,
      ).toBe(true);
    }
    expect(proxy.accepted).toBeGreaterThan(3);
  }, 180_000);
});

describe.runIf(run)('conformance across processes', () => {
  it('the OpenFGA query suites pass through node B with their tuples written through node A', async () => {
    const dir =
      process.env.LATCH_CONFORMANCE_DIR ??
      path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../shared/conformance');
    if (!existsSync(path.join(dir, 'openfga'))) {
      if (process.env.CI === 'true') throw new Error(`conformance data not found at ${dir}`);
      return;
    }
    // The two suite files at once (each on stores of its own).
    const results = (
      await Promise.all(
        QUERY_FILES.map((file) =>
          runReplicated((nodes[0] as LatchProcess).base, (nodes[1] as LatchProcess).base, dir, { file }),
        ),
      )
    ).flat();
    expect(results.map((r) => r.file)).toEqual(QUERY_FILES.map((f) => `replica:${f}`));
    for (const r of results) {
      expect(r.failures.map((f) => `${f.name}: ${f.message}`)).toEqual([]);
      expect(r.passed).toBeGreaterThan(0);
    }
  }, 600_000);
});
