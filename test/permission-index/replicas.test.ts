// Permission indexes on two `latch serve` processes over one PostgreSQL database: an index created
// through node A is served by node B too (its definition is shared, its materialised set is built
// from B's own tuple index), a write acknowledged by A appears as an event on B's stream with the
// id A's stream gives it, and a stream resumed on B from an id A sent loses and repeats nothing.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, hasPostgres, type TestDatabase } from '../support/postgres.js';
import { json, startLatch, type LatchProcess } from '../ops/process.js';

const run = hasPostgres();
let db: TestDatabase;
const nodes: LatchProcess[] = [];

const MODEL = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'group',
      relations: { member: { this: {} } },
      metadata: {
        relations: {
          member: { directly_related_user_types: [{ type: 'user' }, { type: 'group', relation: 'member' }] },
        },
      },
    },
    {
      type: 'doc',
      relations: { viewer: { this: {} } },
      metadata: {
        relations: {
          viewer: { directly_related_user_types: [{ type: 'user' }, { type: 'group', relation: 'member' }] },
        },
      },
    },
  ],
};

interface Event {
  expansion?: { id: string; operation: string; user: string; object: string };
  freshness?: { id: string; revision: number };
  closed?: { reason: string };
}

/** Reads a stream's events (heartbeats left out) as they come. */
class Reader {
  readonly events: Event[] = [];
  private wake: (() => void) | undefined;
  readonly abort = new AbortController();
  status = 0;

  static async open(url: string): Promise<Reader> {
    const r = new Reader();
    const res = await fetch(url, { signal: r.abort.signal });
    r.status = res.status;
    void r.pump(res.body as ReadableStream<Uint8Array>);
    return r;
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const dec = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of body) {
        buf += dec.decode(chunk, { stream: true });
        for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n')) {
          const line = JSON.parse(buf.slice(0, nl)) as { result?: Event & { heartbeat?: unknown } };
          buf = buf.slice(nl + 1);
          if (line.result && !line.result.heartbeat) this.events.push(line.result);
        }
        this.wake?.();
      }
    } catch {
      // aborted
    }
  }

  /** Waits until an event satisfies `pred`. */
  async until(pred: (e: Event) => boolean): Promise<void> {
    while (!this.events.some(pred)) await new Promise<void>((r) => (this.wake = r));
  }
}

beforeAll(async () => {
  if (!run) return;
  db = await createTestDatabase();
  const args = ['--datastore', 'postgres', '--postgres-url', db.url, '--poll-interval', '100', '--workers', '0'];
  for (const n of await Promise.all([startLatch(args), startLatch(args)])) nodes.push(n);
}, 120_000);

afterAll(async () => {
  for (const n of nodes) n.proc.kill('SIGKILL');
  await Promise.all(nodes.map((n) => n.exited));
  if (run) await db.drop();
});

describe.runIf(run)('permission indexes on PostgreSQL replicas', () => {
  it("a write on node A appears on node B's stream with the same id; B resumes from A's ids", async () => {
    const [a, b] = nodes as [LatchProcess, LatchProcess];
    const store = (await json(a.base, 'POST', '/stores', { name: 'pi-replicas' })).body.id as string;
    const model = (await json(a.base, 'POST', `/stores/${store}/authorization-models`, MODEL)).body
      .authorization_model_id as string;
    const write = async (base: string, ...t: [string, string, string][]): Promise<void> => {
      const r = await json(base, 'POST', `/stores/${store}/write`, {
        writes: { tuple_keys: t.map(([object, relation, user]) => ({ object, relation, user })) },
      });
      expect(r.status).toBe(200);
    };
    await write(a.base, ['group:eng', 'member', 'user:anne'], ['doc:1', 'viewer', 'group:eng#member']);
    const created = await json(a.base, 'POST', `/stores/${store}/indexes`, {
      name: 'doc#viewer',
      relations: [{ object_type: 'doc', relation: 'viewer' }],
    });
    expect(created.status).toBe(201);
    const id = created.body.index_id as string;
    const path = `/stores/${store}/indexes/${id}/expansions?authorization_model_id=${model}&heartbeat_ms=200`;

    const onA = await Reader.open(a.base + path);
    const onB = await Reader.open(b.base + path);
    expect([onA.status, onB.status]).toEqual([200, 200]);
    for (const r of [onA, onB]) await r.until((e) => e.freshness !== undefined);
    const initial = (r: Reader): string[] =>
      r.events.filter((e) => e.expansion).map((e) => `${e.expansion?.object}@${e.expansion?.user}`);
    expect(initial(onB)).toEqual(['doc:1@user:anne']);
    expect(initial(onA)).toEqual(initial(onB));

    await write(a.base, ['group:eng', 'member', 'user:bob']);
    await write(a.base, ['doc:2', 'viewer', 'group:eng#member']);
    const live = (r: Reader): string[] =>
      r.events
        .filter((e) => e.expansion && !e.expansion.id.includes('.s'))
        .map((e) => `${e.expansion?.id} ${e.expansion?.object}@${e.expansion?.user}`);
    for (const r of [onA, onB]) await r.until(() => live(r).length === 3);
    expect(live(onB)).toEqual(live(onA));
    expect(live(onB).map((x) => x.split(' ')[1])).toEqual(['doc:1@user:bob', 'doc:2@user:anne', 'doc:2@user:bob']);

    // Resume on B right after the first live id A sent: the rest, exactly once.
    const firstId = live(onA)[0]?.split(' ')[0] ?? '';
    const resumed = await Reader.open(`${b.base}${path}&from=${firstId}`);
    expect(resumed.status).toBe(200);
    await resumed.until((e) => e.expansion?.object === 'doc:2' && e.expansion.user === 'user:bob');
    expect(live(resumed)).toEqual(live(onA).slice(1));
    for (const r of [onA, onB, resumed]) r.abort.abort();

    // Deleted through B: A's GetIndex says 404 at once (the definition is shared).
    expect((await json(b.base, 'DELETE', `/stores/${store}/indexes/${id}`)).status).toBe(204);
    expect((await json(a.base, 'GET', `/stores/${store}/indexes/${id}`)).status).toBe(404);
  }, 120_000);
});
