// Decisions the msgpack channel and the listing streams make (docs/audit.md): each check of a
// grouped `check` frame and of a `check-ids` request is a Check decision (sampled like BatchCheck
// items; a failed check is none), a StreamedListObjects answer is one decision, and the explain of
// a recorded listing gives every returned object (ListObjects) or user (ListUsers) its why chain,
// bounded with a `truncated` flag, next to the replay-equality flag.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LatchChannelClient } from '../../src/client/index.js';
import { MAX_LISTED_WHYS } from '../../src/api/decisions/replay.js';
import { call, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
interface Decision {
  id: string;
  client_id: string;
  operation: string;
  revision: number;
  request: Record<string, unknown>;
  answer: Record<string, unknown>;
}
interface Why {
  object?: string;
  user?: string;
  reason: { allowed: boolean; chain: { kind: string; label: string }[] };
}
interface Explained {
  equal: boolean;
  whys?: { results: Why[]; truncated: boolean };
}

let server: Server;
let client: LatchChannelClient;

async function decisions(store: string): Promise<Decision[]> {
  const r = await call(server.base, 'GET', `/stores/${store}/decisions`);
  expect(r.status).toBe(200);
  return (r.json as { decisions: Decision[] }).decisions;
}

async function explained(store: string, id: string): Promise<Explained> {
  const r = await call(server.base, 'GET', `/stores/${store}/decisions/${id}/explain`);
  expect(r.status).toBe(200);
  return r.json as Explained;
}

const key = (user: string, object: string) => ({ user, relation: 'viewer', object });

beforeAll(async () => {
  server = await start({ decisionLog: { sampling: 1 } });
  client = await LatchChannelClient.connect(`ws://127.0.0.1:${server.port}/stream`);
});

afterAll(async () => {
  client.close();
  await server.close();
});

describe('decisions of the msgpack channel', () => {
  it('records each check of a grouped frame as a searchable, explainable Check decision', async () => {
    const store = await storeWithModel(server.base, 'channel-group');
    const w = await call(server.base, 'POST', `/stores/${store}/write`, {
      writes: { tuple_keys: [key('user:anne', 'doc:1'), key('group:eng#member', 'doc:2')] },
    });
    expect(w.status).toBe(200);
    const asked = [key('user:anne', 'doc:1'), key('user:bob', 'doc:1'), key('group:eng#member', 'doc:2')];
    const answers = await client.batch([
      ...asked.map((tuple_key) => ({ op: 'check', store_id: store, body: { tuple_key } })),
      { op: 'check', store_id: store, body: { tuple_key: { ...asked[0], relation: 'nope' } } },
    ]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 400]);
    const all = await decisions(store);
    expect(all.map((d) => d.operation)).toEqual(['Check', 'Check', 'Check']);
    // The group's own correlation ids are not the client's: none is recorded.
    expect(all.map((d) => d.request)).toEqual(
      asked.map((tuple_key) => ({ tuple_key, contextual_tuples: [], context: null })),
    );
    expect(all.map((d) => d.answer)).toEqual([{ allowed: true }, { allowed: false }, { allowed: true }]);
    for (const d of all) expect((await explained(store, d.id)).equal).toBe(true);
  });

  it("records the connection's client id on every channel decision, BatchCheck items included", async () => {
    const store = await storeWithModel(server.base, 'channel-client');
    const w = await call(server.base, 'POST', `/stores/${store}/write`, {
      writes: { tuple_keys: [key('user:anne', 'doc:1')] },
    });
    expect(w.status).toBe(200);
    const [grouped, batch] = await client.batch([
      { op: 'check', store_id: store, body: { tuple_key: key('user:anne', 'doc:1') } },
      {
        op: 'batch-check',
        store_id: store,
        body: { checks: [{ tuple_key: key('user:bob', 'doc:1'), correlation_id: 'b' }] },
      },
    ]);
    expect([grouped?.status, batch?.status]).toEqual([200, 200]);
    const all = await decisions(store);
    expect(all.map((d) => d.operation).sort()).toEqual(['BatchCheck', 'Check']);
    // Mode none admits every caller as `anonymous`, on HTTP and at the channel's upgrade alike.
    expect(all.map((d) => d.client_id)).toEqual(['anonymous', 'anonymous']);
  });

  it('records each answered check of a check-ids request; a failed check is no decision', async () => {
    const store = await storeWithModel(server.base, 'channel-ids');
    const w = await call(server.base, 'POST', `/stores/${store}/write`, {
      writes: { tuple_keys: [key('user:anne', 'doc:1')] },
    });
    expect(w.status).toBe(200);
    const asked = [
      key('user:anne', 'doc:1'),
      key('user:bob', 'doc:1'),
      { ...key('user:anne', 'doc:1'), relation: 'nope' },
    ];
    const r = await client.checkMany(store, asked);
    expect([...r.results.subarray(0, 2)]).toEqual([1, 0]);
    expect(r.errors.get(2)?.code).toBe('validation_error');
    const all = await decisions(store);
    expect(all.map((d) => [d.operation, d.request.tuple_key, d.answer])).toEqual([
      ['Check', asked[0], { allowed: true }],
      ['Check', asked[1], { allowed: false }],
    ]);
    expect(all.every((d) => d.revision === 1)).toBe(true);
    for (const d of all) expect((await explained(store, d.id)).equal).toBe(true);
  });
});

describe('listing decisions', () => {
  it('records a StreamedListObjects answer and explains each object with its chain', async () => {
    const store = await storeWithModel(server.base, 'streamed');
    const w = await call(server.base, 'POST', `/stores/${store}/write`, {
      writes: {
        tuple_keys: [
          key('user:anne', 'doc:1'),
          { user: 'user:anne', relation: 'owner', object: 'doc:2' },
          { user: 'user:anne', relation: 'member', object: 'group:eng' },
          key('group:eng#member', 'doc:3'),
        ],
      },
    });
    expect(w.status).toBe(200);
    const body = { type: 'doc', relation: 'viewer', user: 'user:anne' };
    const res = await fetch(`${server.base}/stores/${store}/streamed-list-objects`, {
      method: 'POST',
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(200);
    const streamed = (await res.text())
      .split('\n')
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { result: { object: string } }).result.object);
    expect(streamed.sort()).toEqual(['doc:1', 'doc:2', 'doc:3']);
    const [d] = await decisions(store);
    expect(d?.operation).toBe('StreamedListObjects');
    expect((d?.answer.objects as string[]).sort()).toEqual(['doc:1', 'doc:2', 'doc:3']);
    const e = await explained(store, d?.id ?? '');
    expect(e.equal).toBe(true);
    expect(e.whys?.truncated).toBe(false);
    const chains = new Map(e.whys?.results.map((x) => [x.object, x.reason]));
    expect([...chains.keys()].sort()).toEqual(['doc:1', 'doc:2', 'doc:3']);
    for (const reason of chains.values()) expect(reason.allowed).toBe(true);
    expect(chains.get('doc:1')?.chain.at(-1)).toEqual({ kind: 'tuple', label: 'doc:1#viewer@user:anne' });
    expect(chains.get('doc:2')?.chain.at(-1)).toEqual({ kind: 'tuple', label: 'doc:2#owner@user:anne' });
    expect(chains.get('doc:3')?.chain.at(-1)).toEqual({ kind: 'tuple', label: 'group:eng#member@user:anne' });
  });

  it('explains each ListUsers user, and the first MAX_LISTED_WHYS ListObjects objects with truncated', async () => {
    const store = await storeWithModel(server.base, 'listings');
    const many = Array.from({ length: MAX_LISTED_WHYS + 5 }, (_, i) => key('user:carl', `doc:${i}`));
    for (let at = 0; at < many.length; at += 50) {
      const w = await call(server.base, 'POST', `/stores/${store}/write`, {
        writes: { tuple_keys: many.slice(at, at + 50) },
      });
      expect(w.status).toBe(200);
    }
    const w = await call(server.base, 'POST', `/stores/${store}/write`, {
      writes: { tuple_keys: [key('user:anne', 'doc:0'), key('group:eng#member', 'doc:0')] },
    });
    expect(w.status).toBe(200);
    const lo = await call(server.base, 'POST', `/stores/${store}/list-objects`, {
      type: 'doc',
      relation: 'viewer',
      user: 'user:carl',
    });
    expect((lo.json as { objects: string[] }).objects.length).toBe(many.length);
    const lu = await call(server.base, 'POST', `/stores/${store}/list-users`, {
      object: { type: 'doc', id: '0' },
      relation: 'viewer',
      user_filters: [{ type: 'user' }],
    });
    expect(lu.status).toBe(200);
    const [objects, users] = await decisions(store);
    const eo = await explained(store, objects?.id ?? '');
    expect(eo.equal).toBe(true);
    expect(eo.whys?.truncated).toBe(true);
    expect(eo.whys?.results.length).toBe(MAX_LISTED_WHYS);
    const answered = objects?.answer.objects as string[];
    expect(eo.whys?.results.map((x) => x.object)).toEqual(answered.slice(0, MAX_LISTED_WHYS));
    for (const x of eo.whys?.results ?? []) {
      expect(x.reason.allowed).toBe(true);
      expect(x.reason.chain.at(-1)).toEqual({ kind: 'tuple', label: `${x.object ?? ''}#viewer@user:carl` });
    }
    const eu = await explained(store, users?.id ?? '');
    expect(eu.equal).toBe(true);
    expect(eu.whys?.truncated).toBe(false);
    expect(eu.whys?.results.map((x) => x.user).sort()).toEqual(['user:anne', 'user:carl']);
    for (const x of eu.whys?.results ?? [])
      expect(x.reason.chain.at(-1)).toEqual({ kind: 'tuple', label: `doc:0#viewer@${x.user ?? ''}` });
  });
});
