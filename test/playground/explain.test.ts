// POST /stores/{id}/check/explain over HTTP (LevelDB in a temp dir): the reference evaluator's
// answer with its trace, the same answer as Check on every case, the same validation errors as
// Check, evaluation errors inside the trace, and Check's route and body unchanged.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../src/main.js';

interface Node {
  kind: string;
  label: string;
  outcome: string;
  error?: string;
  children?: Node[];
}

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
      type: 'folder',
      relations: { viewer: { this: {} } },
      metadata: {
        relations: {
          viewer: { directly_related_user_types: [{ type: 'user' }, { type: 'group', relation: 'member' }] },
        },
      },
    },
    {
      type: 'doc',
      relations: {
        parent: { this: {} },
        owner: { this: {} },
        blocked: { this: {} },
        viewer: {
          union: {
            child: [
              { this: {} },
              { computedUserset: { relation: 'owner' } },
              { tupleToUserset: { tupleset: { relation: 'parent' }, computedUserset: { relation: 'viewer' } } },
            ],
          },
        },
        can_view: {
          difference: {
            base: { computedUserset: { relation: 'viewer' } },
            subtract: { computedUserset: { relation: 'blocked' } },
          },
        },
        audited: { intersection: { child: [{ computedUserset: { relation: 'viewer' } }, { this: {} }] } },
      },
      metadata: {
        relations: {
          parent: { directly_related_user_types: [{ type: 'folder' }] },
          owner: { directly_related_user_types: [{ type: 'user' }] },
          blocked: { directly_related_user_types: [{ type: 'user' }] },
          viewer: {
            directly_related_user_types: [
              { type: 'user' },
              { type: 'user', wildcard: {} },
              { type: 'user', condition: 'office' },
            ],
          },
          audited: { directly_related_user_types: [{ type: 'user' }] },
        },
      },
    },
  ],
  conditions: {
    office: { name: 'office', expression: 'ip == "10.0.0.1"', parameters: { ip: { type_name: 'TYPE_NAME_STRING' } } },
  },
};

const TUPLES = [
  { user: 'user:anne', relation: 'member', object: 'group:eng' },
  { user: 'group:eng#member', relation: 'member', object: 'group:all' },
  { user: 'group:all#member', relation: 'viewer', object: 'folder:root' },
  { user: 'folder:root', relation: 'parent', object: 'doc:1' },
  { user: 'user:bob', relation: 'owner', object: 'doc:1' },
  { user: 'user:bob', relation: 'blocked', object: 'doc:1' },
  { user: 'user:*', relation: 'viewer', object: 'doc:public' },
  { user: 'user:carl', relation: 'viewer', object: 'doc:2', condition: { name: 'office' } },
  { user: 'user:anne', relation: 'audited', object: 'doc:1' },
];

describe('POST /stores/{id}/check/explain', () => {
  let server: RunningServer;
  let dir: string;
  let base: string;
  let store: string;
  const post = async (path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
    const r = await fetch(base + path, { method: 'POST', body: JSON.stringify(body) });
    return { status: r.status, json: (await r.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'latch-explain-'));
    server = await startServer({ host: '127.0.0.1', port: 0, dataDir: dir });
    base = `http://127.0.0.1:${server.port}`;
    store = (await post('/stores', { name: 'explain' })).json.id as string;
    expect((await post(`/stores/${store}/authorization-models`, MODEL)).status).toBe(201);
    expect((await post(`/stores/${store}/write`, { writes: { tuple_keys: TUPLES } })).status).toBe(200);
  });
  afterAll(async () => {
    await server?.close(1000);
    await rm(dir, { recursive: true, force: true });
  });

  const explain = async (
    user: string,
    relation: string,
    object: string,
    extra: Record<string, unknown> = {},
  ): Promise<{ allowed: boolean; tree: Node }> => {
    const r = await post(`/stores/${store}/check/explain`, { tuple_key: { user, relation, object }, ...extra });
    expect(r.status).toBe(200);
    expect(r.json.truncated_nodes).toBe(0);
    return r.json as unknown as { allowed: boolean; tree: Node };
  };
  const chain = (n: Node): string[] => {
    const out: string[] = [];
    for (
      let c: Node | undefined = n;
      c && c.outcome === 'allowed';
      c = c.children?.find((x) => x.outcome === 'allowed')
    )
      out.push(`${c.kind} ${c.label}`);
    return out;
  };

  it('gives the same answer as Check on every user, relation and object of the store', async () => {
    const users = ['user:anne', 'user:bob', 'user:carl', 'user:dan', 'group:eng#member', 'group:all#member'];
    const objects = ['doc:1', 'doc:2', 'doc:public', 'folder:root'];
    let allowed = 0;
    let cases = 0;
    for (const user of users) {
      for (const object of objects) {
        const relations = object.startsWith('doc:')
          ? ['viewer', 'can_view', 'owner', 'blocked', 'audited']
          : ['viewer'];
        for (const relation of relations) {
          const check = await post(`/stores/${store}/check`, {
            tuple_key: { user, relation, object },
            context: { ip: '10.0.0.2' },
          });
          const why = await post(`/stores/${store}/check/explain`, {
            tuple_key: { user, relation, object },
            context: { ip: '10.0.0.2' },
          });
          expect(why.status, `${user} ${relation} ${object}`).toBe(check.status);
          expect(why.json.allowed, `${user} ${relation} ${object}`).toBe(check.json.allowed);
          cases++;
          if (check.json.allowed) allowed++;
        }
      }
    }
    expect(cases).toBe(6 * 3 * 5 + 6);
    expect(allowed).toBeGreaterThan(10);
  });

  it('an allowed Check: the chain of rewrites and tuples that grants it', async () => {
    const r = await explain('user:anne', 'can_view', 'doc:1');
    expect(r.allowed).toBe(true);
    expect(chain(r.tree)).toEqual([
      'relation doc:1#can_view',
      'exclusion but not',
      'computed viewer',
      'relation doc:1#viewer',
      'union or',
      'ttu viewer from parent',
      'tuple doc:1#parent@folder:root',
      'relation folder:root#viewer',
      'direct folder:root#viewer: tuples assigned directly',
      'tuple folder:root#viewer@group:all#member',
      'relation group:all#member',
      'direct group:all#member: tuples assigned directly',
      'tuple group:all#member@group:eng#member',
      'relation group:eng#member',
      'direct group:eng#member: tuples assigned directly',
      'tuple group:eng#member@user:anne',
    ]);
    // The subtract branch was evaluated and denied.
    const exclusion = r.tree.children?.[0] as Node;
    expect(exclusion.children?.map((c) => `${c.kind} ${c.label} ${c.outcome}`)).toEqual([
      'computed viewer allowed',
      'computed blocked denied',
    ]);
  });

  it('a denied Check: every branch tried, with the tuple that excluded the user', async () => {
    const r = await explain('user:bob', 'can_view', 'doc:1');
    expect(r.allowed).toBe(false);
    const exclusion = r.tree.children?.[0] as Node;
    expect(exclusion.outcome).toBe('denied');
    expect(exclusion.children?.map((c) => `${c.kind} ${c.label} ${c.outcome}`)).toEqual([
      'computed viewer allowed',
      'computed blocked allowed',
    ]);
    const text = JSON.stringify(r.tree);
    expect(text).toContain('doc:1#owner@user:bob');
    expect(text).toContain('doc:1#blocked@user:bob');
    // A user with no path: the branches are tried and denied, and unreachable relations are marked pruned.
    const dan = await explain('user:dan', 'viewer', 'doc:1');
    expect(dan.allowed).toBe(false);
    expect(dan.tree.children?.[0]?.kind).toBe('union');
    expect(dan.tree.children?.[0]?.children?.map((c) => `${c.kind} ${c.outcome}`)).toEqual([
      'direct denied',
      'computed denied',
      'ttu denied',
    ]);
    const group = await explain('group:eng#member', 'owner', 'doc:1');
    expect(group.tree.kind).toBe('pruned');
  });

  it('intersections, wildcards, contextual tuples and conditions', async () => {
    const audited = await explain('user:anne', 'audited', 'doc:1');
    expect(audited.allowed).toBe(true);
    expect(audited.tree.children?.[0]?.kind).toBe('intersection');
    expect(audited.tree.children?.[0]?.children?.map((c) => `${c.kind} ${c.outcome}`)).toEqual([
      'computed allowed',
      'direct allowed',
    ]);
    const notAudited = await explain('user:bob', 'audited', 'doc:1');
    expect(notAudited.allowed).toBe(false);
    expect(notAudited.tree.children?.[0]?.children?.map((c) => `${c.kind} ${c.outcome}`)).toEqual([
      'computed allowed',
      'direct denied',
    ]);
    const pub = await explain('user:zed', 'viewer', 'doc:public');
    expect(chain(pub.tree).at(-1)).toBe('tuple doc:public#viewer@user:*');
    const ctx = await explain('user:dan', 'viewer', 'doc:3', {
      contextual_tuples: { tuple_keys: [{ user: 'user:dan', relation: 'owner', object: 'doc:3' }] },
    });
    expect(ctx.allowed).toBe(true);
    expect(chain(ctx.tree).at(-1)).toBe('tuple doc:3#owner@user:dan');
    const met = await explain('user:carl', 'viewer', 'doc:2', { context: { ip: '10.0.0.1' } });
    expect(met.allowed).toBe(true);
    expect(chain(met.tree).at(-1)).toBe('tuple doc:2#viewer@user:carl (condition office)');
    // Without the condition's parameter the evaluation fails: the trace says where and why.
    const missing = await post(`/stores/${store}/check/explain`, {
      tuple_key: { user: 'user:carl', relation: 'viewer', object: 'doc:2' },
    });
    expect(missing.status).toBe(200);
    const text = JSON.stringify(missing.json.tree);
    expect(missing.json.allowed).toBe(false);
    expect(text).toContain('"outcome":"error"');
    expect(text).toMatch(/validation_error: .*ip/);
    const check = await post(`/stores/${store}/check`, {
      tuple_key: { user: 'user:carl', relation: 'viewer', object: 'doc:2' },
    });
    expect(check.status).toBe(400);
  });

  it('refuses what Check refuses, with the same status, code and message', async () => {
    for (const body of [
      { tuple_key: { user: 'user:anne', relation: 'nope', object: 'doc:1' } },
      { tuple_key: { user: 'user:anne', relation: 'viewer', object: 'nodoc:1' } },
      { tuple_key: { user: 'anne', relation: 'viewer', object: 'doc:1' } },
      { tuple_key: { user: 'user:anne', relation: 'viewer' } },
      {
        tuple_key: { user: 'user:anne', relation: 'viewer', object: 'doc:1' },
        authorization_model_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV',
      },
    ]) {
      const check = await post(`/stores/${store}/check`, body);
      const why = await post(`/stores/${store}/check/explain`, body);
      expect(check.status).toBeGreaterThanOrEqual(400);
      expect(why).toEqual(check);
    }
    const unknown = await post('/stores/01ARZ3NDEKTSV4RRFFQ69G5FAV/check/explain', {
      tuple_key: { user: 'user:anne', relation: 'viewer', object: 'doc:1' },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.json.code).toBe('store_id_not_found');
  });

  it("leaves Check's route as it was: same body, no trace", async () => {
    const r = await fetch(`${base}/stores/${store}/check`, {
      method: 'POST',
      body: JSON.stringify({ tuple_key: { user: 'user:anne', relation: 'can_view', object: 'doc:1' } }),
    });
    expect(await r.text()).toBe('{"allowed":true,"resolution":""}');
  });
});
