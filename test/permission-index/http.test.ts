// Permission index endpoints against a real server: create, list (paged), get, the ReadExpansions
// stream (initial set, live events, freshness, resume with `from`, close on delete), and bad
// input: unknown index → 404 index_id_not_found; `from` malformed, of another index or too old,
// a model mismatch, a missing model id, a conditioned relation → 400 with a message.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, start } from '../http/helpers.js';
import { dslToModel } from '../../src/model/dsl.js';

type Server = Awaited<ReturnType<typeof start>>;

const DSL = `model
  schema 1.1
type user
type group
  relations
    define member: [user, group#member]
type folder
  relations
    define viewer: [user, group#member] or viewer from parent
    define parent: [folder]
type doc
  relations
    define parent: [folder]
    define blocked: [user]
    define viewer: ([user, group#member] or viewer from parent) but not blocked
    define guest: [user with office]
condition office(ip: string) {
  ip == "10.0.0.1"
}
`;

interface Line {
  result?: {
    expansion?: { id: string; operation: string; user: string; relation: string; object: string; revision: number };
    freshness?: { id: string; revision: number; timestamp: string };
    heartbeat?: { timestamp: string };
    closed?: { reason: string };
  };
  error?: { code: number; message: string };
}

/** An open ReadExpansions stream, read line by line. */
class Stream {
  readonly abort = new AbortController();
  readonly lines: Line[] = [];
  private waiters: (() => void)[] = [];
  ended = false;
  status = 0;

  static async open(base: string, path: string): Promise<Stream> {
    const s = new Stream();
    const r = await fetch(base + path, { signal: s.abort.signal });
    s.status = r.status;
    void s.pump(r.body as ReadableStream<Uint8Array>);
    return s;
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const dec = new TextDecoder();
    let buf = '';
    try {
      for await (const chunk of body) {
        buf += dec.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buf.indexOf('\n')) !== -1) {
          this.lines.push(JSON.parse(buf.slice(0, nl)) as Line);
          buf = buf.slice(nl + 1);
        }
        this.wake();
      }
    } catch {
      // aborted
    }
    this.ended = true;
    this.wake();
  }

  private wake(): void {
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w();
  }

  async next(): Promise<Line | undefined> {
    while (this.lines.length === 0 && !this.ended) await new Promise<void>((r) => this.waiters.push(r));
    return this.lines.shift();
  }

  /** Lines until one matches (heartbeats skipped), returning the ones before it and it. */
  async until(pred: (l: Line) => boolean): Promise<Line[]> {
    const out: Line[] = [];
    for (;;) {
      const l = await this.next();
      if (!l) throw new Error(`stream ended; got ${JSON.stringify(out)}`);
      if (l.result?.heartbeat) continue;
      out.push(l);
      if (pred(l)) return out;
    }
  }

  close(): void {
    this.abort.abort();
  }
}

const text = (l: Line): string => {
  const e = l.result?.expansion;
  return e ? `${e.operation} ${e.object}#${e.relation}@${e.user}` : JSON.stringify(l);
};

let s: Server;
let store: string;
let model: string;

async function write(writes: string[], deletes: string[] = []): Promise<number> {
  const key = (t: string) => {
    const at = t.indexOf('@');
    const hash = t.indexOf('#');
    return { object: t.slice(0, hash), relation: t.slice(hash + 1, at), user: t.slice(at + 1) };
  };
  const body: Record<string, unknown> = {};
  if (writes.length) body.writes = { tuple_keys: writes.map(key) };
  if (deletes.length) body.deletes = { tuple_keys: deletes.map(key) };
  const r = await call(s.base, 'POST', `/stores/${store}/write`, body);
  expect(r.status, r.text).toBe(200);
  return Number(r.headers.get('latch-revision'));
}

async function createIndex(
  relations: { object_type: string; relation: string }[],
  name = 'doc#viewer',
): Promise<string> {
  const r = await call(s.base, 'POST', `/stores/${store}/indexes`, { name, relations });
  expect(r.status, r.text).toBe(201);
  const id = (r.json as { index_id: string }).index_id;
  for (;;) {
    const g = await call(s.base, 'GET', `/stores/${store}/indexes/${id}`);
    const status = (g.json as { status: string }).status;
    if (status === 'ACTIVE') return id;
    expect(status).toBe('BUILDING');
  }
}

beforeAll(async () => {
  s = await start();
  store = ((await call(s.base, 'POST', '/stores', { name: 'indexes' })).json as { id: string }).id;
  const m = await call(s.base, 'POST', `/stores/${store}/authorization-models`, JSON.stringify(dslToModel(DSL)));
  model = (m.json as { authorization_model_id: string }).authorization_model_id;
  await write([
    'group:eng#member@user:anne',
    'doc:1#viewer@group:eng#member',
    'doc:2#parent@folder:a',
    'folder:a#viewer@user:bob',
  ]);
});
afterAll(async () => s.close());

describe('permission index endpoints', () => {
  it('creates, gets and lists indexes in the Okta shape, paged', async () => {
    const id = await createIndex([{ object_type: 'doc', relation: 'viewer' }]);
    const g = await call(s.base, 'GET', `/stores/${store}/indexes/${id}`);
    expect(g.status).toBe(200);
    expect(g.json).toMatchObject({
      index_id: id,
      name: 'doc#viewer',
      status: 'ACTIVE',
      models: [{ model_id: model }],
      relations: [{ object_type: 'doc', relation: 'viewer' }],
      expansions_count: 2,
    });
    const body = g.json as Record<string, unknown>;
    for (const f of [
      'total_ingested_changes',
      'expansions_events_count',
      'expansion_factor',
      'freshness',
      'created_at',
      'updated_at',
    ])
      expect(body).toHaveProperty(f);
    const more = [
      await createIndex([{ object_type: 'folder', relation: 'viewer' }], 'f'),
      await createIndex([{ object_type: 'group', relation: 'member' }], 'g'),
    ];
    const first = await call(s.base, 'GET', `/stores/${store}/indexes?page_size=2`);
    const p1 = first.json as { indexes: { index_id: string }[]; continuation_token: string };
    expect(p1.indexes.map((i) => i.index_id)).toEqual([id, more[0]]);
    expect(p1.continuation_token).not.toBe('');
    const second = await call(
      s.base,
      'GET',
      `/stores/${store}/indexes?page_size=2&continuation_token=${p1.continuation_token}`,
    );
    const p2 = second.json as { indexes: { index_id: string }[]; continuation_token: string };
    expect(p2.indexes.map((i) => i.index_id)).toEqual([more[1]]);
    expect(p2.continuation_token).toBe('');
    for (const x of more) expect((await call(s.base, 'DELETE', `/stores/${store}/indexes/${x}`)).status).toBe(204);
    expect((await call(s.base, 'GET', `/stores/${store}/indexes/${more[0] as string}`)).status).toBe(404);
    expect((await call(s.base, 'DELETE', `/stores/${store}/indexes/${id}`)).status).toBe(204);
  });

  it('streams the current set, then live INSERT/DELETE events with freshness; resumes after an id', async () => {
    const id = await createIndex([{ object_type: 'doc', relation: 'viewer' }]);
    const path = `/stores/${store}/indexes/${id}/expansions?authorization_model_id=${model}&heartbeat_ms=200`;
    const st = await Stream.open(s.base, path);
    expect(st.status).toBe(200);
    const initial = await st.until((l) => l.result?.freshness !== undefined);
    expect(initial.slice(0, -1).map(text).sort()).toEqual([
      'INSERT doc:1#viewer@user:anne',
      'INSERT doc:2#viewer@user:bob',
    ]);
    const fresh = initial[initial.length - 1]?.result?.freshness;
    expect(fresh?.id).toMatch(new RegExp(`^${id}\\.\\d+\\.e$`));

    // A member added deep in the hierarchy: exactly the triple it grants. A block: its removal.
    const r1 = await write(['group:eng#member@group:ops#member', 'group:ops#member@user:carl']);
    const r2 = await write(['doc:2#blocked@user:bob']);
    const live = await st.until((l) => l.result?.freshness?.revision === r2);
    const events = live.filter((l) => l.result?.expansion);
    expect(events.map(text)).toEqual(['INSERT doc:1#viewer@user:carl', 'DELETE doc:2#viewer@user:bob']);
    expect(events.map((l) => l.result?.expansion?.id)).toEqual([`${id}.${r1}.0`, `${id}.${r2}.0`]);
    st.close();

    // Resume right after the first event: only the second comes again, with the same id.
    const again = await Stream.open(s.base, `${path}&from=${id}.${r1}.0`);
    const resumed = await again.until((l) => l.result?.expansion !== undefined);
    expect(resumed.map((l) => l.result?.expansion?.id)).toEqual([`${id}.${r2}.0`]);
    again.close();

    // Deleting the index closes its streams with the reason.
    const third = await Stream.open(s.base, `${path}&from=${fresh?.id ?? ''}`);
    await third.until((l) => l.result?.expansion !== undefined);
    expect((await call(s.base, 'DELETE', `/stores/${store}/indexes/${id}`)).status).toBe(204);
    const end = await third.until((l) => l.result?.closed !== undefined);
    expect(end[end.length - 1]?.result?.closed?.reason).toBe('index deleted');
    third.close();
  });

  it('answers bad input with the documented status, code and message', async () => {
    const id = await createIndex([{ object_type: 'doc', relation: 'viewer' }]);
    const other = await createIndex([{ object_type: 'folder', relation: 'viewer' }], 'other');
    const base = `/stores/${store}/indexes`;
    const unknown = await call(s.base, 'GET', `${base}/01ARZ3NDEKTSV4RRFFQ69G5FAV`);
    expect(unknown.status).toBe(404);
    expect(unknown.json).toMatchObject({ code: 'index_id_not_found' });
    const unknownStream = await call(
      s.base,
      'GET',
      `${base}/01ARZ3NDEKTSV4RRFFQ69G5FAV/expansions?authorization_model_id=${model}`,
    );
    expect(unknownStream.status).toBe(404);
    expect((await call(s.base, 'DELETE', `${base}/01ARZ3NDEKTSV4RRFFQ69G5FAV`)).status).toBe(404);

    const bad = async (query: string): Promise<void> => {
      const r = await call(s.base, 'GET', `${base}/${id}/expansions?${query}`);
      expect(r.status, r.text).toBe(400);
      // A streamed endpoint refuses as OpenFGA streams do: gRPC INVALID_ARGUMENT (3), validation_error's code.
      expect((JSON.parse(r.text) as { error: { code: number } }).error.code, query).toBe(3);
    };
    await bad(''); // no model id
    await bad(`authorization_model_id=01ARZ3NDEKTSV4RRFFQ69G5FAV`); // not the index's model
    await bad(`authorization_model_id=${model}&from=garbage`); // not an event id
    await bad(`authorization_model_id=${model}&from=${other}.1.0`); // another index's event
    await bad(`authorization_model_id=${model}&from=${id}.1.s3`); // an entry of the initial set
    await bad(`authorization_model_id=${model}&from=${id}.1.0`); // older than the ring

    const conditioned = await call(s.base, 'POST', base, {
      name: 'x',
      relations: [{ object_type: 'doc', relation: 'guest' }],
    });
    expect(conditioned.status).toBe(400);
    expect(conditioned.json).toMatchObject({ code: 'validation_error' });
    const noRelation = await call(s.base, 'POST', base, {
      name: 'x',
      relations: [{ object_type: 'doc', relation: 'nope' }],
    });
    expect(noRelation.status).toBe(400);
    const empty = await call(s.base, 'POST', base, { name: 'x', relations: [] });
    expect(empty.status).toBe(400);
    const badModel = await call(s.base, 'POST', base, {
      name: 'x',
      relations: [{ object_type: 'doc', relation: 'viewer' }],
      authorization_model_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV',
    });
    expect(badModel.status).toBe(400);
    expect(badModel.json).toMatchObject({ code: 'authorization_model_not_found' });
    expect((await call(s.base, 'GET', `${base}?page_size=101`)).status).toBe(400);
    expect((await call(s.base, 'GET', `/stores/01ARZ3NDEKTSV4RRFFQ69G5FAV/indexes`)).status).toBe(404);
    for (const x of [id, other]) await call(s.base, 'DELETE', `${base}/${x}`);
  });
});
