// Stores placed across `latch serve --placement` processes on one PostgreSQL database: each node
// holds about K/N of the stores; every node answers every store the same (the others forward);
// kill -9 of a node under writes and Checks loses no acknowledged write, and every request gets
// its answer or a clean 503 with Retry-After while the dead node's stores are re-replicated; a
// joining node takes its share; a drained node ends up holding nothing and still forwards.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bounds, placement } from '../../src/cluster/rendezvous.js';
import { runCli } from '../../src/cli/commands.js';
import { ChannelError, LatchChannelClient, channelUrlOf } from '../../src/client/index.js';
import { Db, PgClusterRegistry } from '../../src/storage/postgres/index.js';
import type { ClusterMember } from '../../src/storage/types.js';
import { send } from '../support/http-client.js';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/postgres.js';
import { DOC_MODEL, json, startLatch, type LatchProcess } from '../ops/process.js';

const run = hasPostgres();
const K = 2;
const STORES = 24;
let db: TestDatabase;
let dbh: Db;
let registry: PgClusterRegistry;
const nodes: LatchProcess[] = [];
/** Nodes no longer running (killed). */
const dead = new Set<LatchProcess>();
const stores: string[] = [];
/** Every tuple written and acknowledged, per store: `doc:x|user:y`. */
const truth = new Map<string, Set<string>>();

const idOf = (n: LatchProcess): string => `127.0.0.1:${n.port}`;
const alive = (): LatchProcess[] => nodes.filter((n) => !dead.has(n));

function startNode(): Promise<LatchProcess> {
  return startLatch([
    ...['--datastore', 'postgres', '--postgres-url', db.url, '--placement', '--replicas', String(K)],
    ...['--placement-lease', '1500', '--workers', '0', '--poll-interval', '200', '--cache-size', '0'],
  ]);
}

let seed = 7;
function rnd(n: number): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) % n;
}
const pick = <T>(list: readonly T[]): T => list[rnd(list.length)] as T;

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

async function post(base: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const r = await send(base + path, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
  });
  return { status: r.status, body: r.text ? (JSON.parse(r.text) as Record<string, unknown>) : {}, headers: r.headers };
}

const check = (base: string, store: string, object: string, user: string, extra: Record<string, unknown> = {}) =>
  post(base, `/stores/${store}/check`, { tuple_key: { object, relation: 'viewer', user }, ...extra });

/**
 * Resolves once placement has settled over the live, non-draining members: every store is
 * served (ready) by exactly its K owners under bounded placement, and by no other node.
 */
async function settled(expectMembers: number): Promise<ClusterMember[]> {
  let members: ClusterMember[] = [];
  await vi.waitFor(
    async () => {
      members = (await registry.members()).filter((m) => m.leaseLeftMs > 0);
      expect(members).toHaveLength(expectMembers);
      const candidates = members.filter((m) => !m.draining);
      const placed = placement(await registry.storeIds(), candidates, K);
      for (const s of stores) {
        const want = [...(placed.get(s) ?? [])].sort();
        const have = members.filter((m) => m.ready.includes(s)).map((m) => m.nodeId);
        expect(have.sort()).toEqual(want);
      }
    },
    { timeout: 90_000, interval: 100 },
  );
  return members;
}

beforeAll(async () => {
  if (!run) return;
  db = await createTestDatabase();
  dbh = new Db({ url: db.url, poolSize: 2 });
  registry = new PgClusterRegistry(dbh);
  // The first node creates the schema; the others start once it has.
  nodes.push(await startNode());
  nodes.push(...(await Promise.all([startNode(), startNode(), startNode()])));
  // startLatch waits for /healthz, which answers before placement's first heartbeat; until that
  // heartbeat a node knows no owner for any store and answers its requests 503 with Retry-After,
  // as documented. /readyz turns 200 once the node has joined and loaded what it owns: a client
  // (or a load balancer) sends store requests from then on, and so does this test.
  for (const n of nodes)
    await vi.waitFor(async () => expect((await fetch(`${n.base}/readyz`)).status).toBe(200), {
      timeout: 30_000,
      interval: 50,
    });
}, 180_000);

afterAll(async () => {
  for (const n of nodes) n.proc.kill('SIGKILL');
  await Promise.all(nodes.map((n) => n.exited));
  await dbh?.close();
  if (run) await db.drop();
});

describe.runIf(run)('stores placed across four latch processes (K = 2)', () => {
  it('spreads the stores: each node holds about K/N of them, and reports ready', async () => {
    for (let i = 0; i < STORES; i++) {
      const base = (nodes[i % nodes.length] as LatchProcess).base;
      const id = (await json(base, 'POST', '/stores', { name: `store-${i}` })).body.id as string;
      stores.push(id);
      const model = await json(base, 'POST', `/stores/${id}/authorization-models`, DOC_MODEL);
      expect(model.status, JSON.stringify(model.body)).toBe(201);
      const set = new Set<string>();
      const keys: { object: string; relation: string; user: string }[] = [];
      for (let t = 0; t < 12; t++) {
        const k = `doc:${rnd(6)}|user:${rnd(5)}`;
        if (set.has(k)) continue;
        set.add(k);
        const [object, user] = k.split('|') as [string, string];
        keys.push({ object, relation: 'viewer', user });
      }
      const w = await json(base, 'POST', `/stores/${id}/write`, { writes: { tuple_keys: keys } });
      expect(w.status, JSON.stringify(w.body)).toBe(200);
      truth.set(id, set);
    }
    const members = await settled(4);
    const share = (STORES * K) / members.length;
    // Bounded placement: none above ceil(K·S/N·(1 + ε)), computed alike by every node.
    const bound = bounds(STORES, members, K);
    for (const m of members) {
      expect(m.ready.length).toBeGreaterThanOrEqual(Math.floor(share * 0.4));
      expect(m.ready.length).toBeLessThanOrEqual(bound.get(m.nodeId) as number);
    }
    expect(members.reduce((sum, m) => sum + m.ready.length, 0)).toBe(STORES * K);
    for (const n of nodes) {
      await vi.waitFor(async () => expect((await fetch(`${n.base}/readyz`)).status).toBe(200), { timeout: 30_000 });
      const held = members.find((m) => m.nodeId === idOf(n))?.ready.length;
      // A node drops a store it no longer owns only once the new owners report it ready, and
      // asynchronously: one that briefly held an extra store (a lease renewed late at load, while
      // the stores were created) still counts it for a moment after the placement settled.
      await vi.waitFor(
        async () => {
          const metrics = await (await fetch(`${n.base}/metrics`)).text();
          expect(Number(/^latch_index_stores (\d+)$/m.exec(metrics)?.[1])).toBe(held);
          expect(metrics).toMatch(/^latch_placement_forwards_total \d+$/m);
        },
        { timeout: 30_000, interval: 100 },
      );
    }
  }, 180_000);

  it('every node answers every store the same: a cross-node differential over random Checks', async () => {
    const members = await settled(4);
    let differences = 0;
    for (let i = 0; i < 100; i++) {
      const store = pick(stores);
      const object = `doc:${rnd(6)}`;
      const user = `user:${rnd(5)}`;
      const expected = truth.get(store)?.has(`${object}|${user}`) === true;
      const holders = members.filter((m) => m.ready.includes(store)).map((m) => m.nodeId);
      for (const n of nodes) {
        const r = await check(n.base, store, object, user);
        expect(r.status).toBe(200);
        if (r.body.allowed !== expected) differences++;
        expect(holders).toContain(r.headers.get('latch-served-by'));
      }
    }
    expect(differences).toBe(0);
    // Consistency tokens keep their meaning across forwarding: a Write's Latch-Revision, sent as
    // Latch-Min-Revision to any other node, sees the write.
    const store = stores[0] as string;
    for (const [i, n] of nodes.entries()) {
      const w = await post(n.base, `/stores/${store}/write`, {
        writes: { tuple_keys: [{ object: `doc:token${i}`, relation: 'viewer', user: 'user:tok' }] },
      });
      expect(w.status).toBe(200);
      truth.get(store)?.add(`doc:token${i}|user:tok`);
      const revision = w.headers.get('latch-revision') as string;
      expect(Number(revision)).toBeGreaterThan(0);
      const other = nodes[(i + 1) % nodes.length] as LatchProcess;
      const r = await post(
        other.base,
        `/stores/${store}/check`,
        { tuple_key: { object: `doc:token${i}`, relation: 'viewer', user: 'user:tok' } },
        { 'Latch-Min-Revision': revision },
      );
      expect(r.body.allowed).toBe(true);
    }
  }, 120_000);

  it('the msgpack channel: a store another node serves is refused with its URL, answered the same there', async () => {
    const members = await settled(4);
    const entry = nodes[0] as LatchProcess;
    const client = await LatchChannelClient.connect(channelUrlOf(entry.base));
    const clients = [client];
    try {
      let refused = 0;
      for (const store of stores) {
        const [first] = [...(truth.get(store) ?? [])];
        const [object, user] = (first as string).split('|') as [string, string];
        const key = { object, relation: 'viewer', user };
        const here = members.find((m) => m.nodeId === idOf(entry))?.ready.includes(store) === true;
        if (here) {
          expect(await client.check(store, key)).toBe(true);
          continue;
        }
        refused++;
        // Plain checks (grouped, dictionary form) and the general request form are refused alike.
        const err = await client.check(store, key).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ChannelError);
        const e = err as ChannelError;
        expect([e.status, e.code]).toEqual([421, 'store_served_elsewhere']);
        const owner = members.find((m) => m.url === e.nodeUrl);
        expect(owner?.ready).toContain(store);
        const read = await client.request('read', store, {});
        expect([read.status, read.error?.code, read.error?.node_url]).toEqual([
          421,
          'store_served_elsewhere',
          e.nodeUrl,
        ]);
        const there = await LatchChannelClient.connect(channelUrlOf(e.nodeUrl as string));
        clients.push(there);
        expect(await there.check(store, key)).toBe(true);
        expect(await there.check(store, { ...key, user: 'user:nobody' })).toBe(false);
      }
      expect(refused).toBeGreaterThan(0);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  }, 120_000);

  it('kill -9 of a node under writes and Checks: nothing acknowledged lost, every answer 200 or a clean 503', async () => {
    const victim = nodes[1] as LatchProcess;
    const entries = nodes.filter((n) => n !== victim);
    const acked: { store: string; object: string; user: string }[] = [];
    const outcomes = new Map<string, number>();
    const unclean: string[] = [];
    let stop = false;
    let n = 0;
    const note = (r: Answer, what: string): boolean => {
      const key = `${what} ${r.status}`;
      outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      if (r.status === 200) return true;
      if (r.status !== 503 || r.body.code !== 'unavailable' || !r.headers.get('retry-after'))
        unclean.push(`${what} ${r.status} ${JSON.stringify(r.body)}`);
      return false;
    };
    const loop = async (entry: LatchProcess): Promise<void> => {
      while (!stop) await step(entry).catch((err: unknown) => void unclean.push(`request failed: ${String(err)}`));
    };
    const step = async (entry: LatchProcess): Promise<void> => {
      {
        const store = pick(stores);
        const object = `doc:k${n++}`;
        const user = `user:${rnd(5)}`;
        const w = await post(entry.base, `/stores/${store}/write`, {
          writes: { tuple_keys: [{ object, relation: 'viewer', user }] },
        });
        if (note(w, 'write')) acked.push({ store, object, user });
        const probe = pick(stores);
        note(await check(entry.base, probe, `doc:${rnd(6)}`, `user:${rnd(5)}`), 'check');
      }
    };
    const loops = [...entries, ...entries].map((e) => loop(e));
    await vi.waitFor(() => expect(acked.length).toBeGreaterThanOrEqual(40), { timeout: 60_000, interval: 20 });
    victim.proc.kill('SIGKILL');
    await victim.exited;
    dead.add(victim);
    const before = acked.length;
    await settled(3);
    await vi.waitFor(() => expect(acked.length).toBeGreaterThanOrEqual(before + 40), { timeout: 60_000, interval: 20 });
    stop = true;
    await Promise.all(loops);
    expect(unclean).toEqual([]);
    expect(outcomes.get('check 200')).toBeGreaterThan(0);
    for (const a of acked) {
      truth.get(a.store)?.add(`${a.object}|${a.user}`);
      const r = await check(pick(entries).base, a.store, a.object, a.user, { consistency: 'HIGHER_CONSISTENCY' });
      expect(r.body.allowed).toBe(true);
    }
  }, 180_000);

  it('a node that joins takes its share', async () => {
    const joined = await startNode();
    nodes.push(joined);
    const members = await settled(4);
    const mine = members.find((m) => m.nodeId === idOf(joined));
    expect(mine?.ready.length).toBeGreaterThanOrEqual(Math.floor(((STORES * K) / 4) * 0.4));
    const store = mine?.ready[0] as string;
    const r = await check(joined.base, store, 'doc:none', 'user:none');
    expect(r.status).toBe(200);
    expect(r.headers.get('latch-served-by')).toBe(idOf(joined));
  }, 180_000);

  it('a drained node ends up holding nothing, and still answers by forwarding', async () => {
    const target = alive()[0] as LatchProcess;
    const out: string[] = [];
    const io = { out: (t: string) => void out.push(t), err: (t: string) => void out.push(t), env: {}, errIsTTY: false };
    expect(await runCli(['cluster', 'drain', idOf(target), '--postgres-url', db.url], io)).toBe(0);
    const members = await settled(4);
    expect(members.find((m) => m.nodeId === idOf(target))?.ready).toEqual([]);
    for (const store of stores.slice(0, 6)) {
      const [first] = [...(truth.get(store) ?? [])];
      const [object, user] = (first as string).split('|') as [string, string];
      const r = await check(target.base, store, object, user);
      expect(r.body.allowed).toBe(true);
      expect(r.headers.get('latch-served-by')).not.toBe(idOf(target));
    }
    out.length = 0;
    expect(await runCli(['cluster', 'status', '--postgres-url', db.url], io)).toBe(0);
    const status = JSON.parse(out.join('')) as {
      members: { node_id: string; draining: boolean }[];
      under_replicated: string[];
    };
    expect(status.under_replicated).toEqual([]);
    expect(status.members.find((m) => m.node_id === idOf(target))?.draining).toBe(true);
  }, 180_000);
});
