// The official OpenFGA JS SDK drives every one of its methods against a real latch server:
// what the SDK can do against OpenFGA it must be able to do against latch, unchanged.

import {
  ClientWriteStatus,
  ConsistencyPreference,
  CredentialsMethod,
  OpenFgaClient,
  type TupleKey,
} from '@openfga/sdk';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { dslToModel } from '../../src/model/dsl.js';
import { start } from './helpers.js';

const DSL = `model
  schema 1.1

type user

type group
  relations
    define member: [user]

type folder
  relations
    define viewer: [user, group#member]

type doc
  relations
    define parent: [folder]
    define owner: [user]
    define editor: [user] or owner
    define viewer: [user, user:*, group#member, user with office] or editor or viewer from parent

condition office(ip: string) {
  ip == "10.0.0.1"
}
`;

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;
let fga: OpenFgaClient;
let modelId = '';

beforeAll(async () => {
  server = await start();
  fga = new OpenFgaClient({ apiUrl: server.base, credentials: { method: CredentialsMethod.None } });
  const store = await fga.createStore({ name: 'sdk-test' });
  expect(store.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
  fga.storeId = store.id;
});

afterAll(async () => {
  await server.close();
});

describe('OpenFGA SDK against latch', () => {
  test('stores: create, get, list (paged, by name), delete', async () => {
    const got = await fga.getStore();
    expect(got.name).toBe('sdk-test');
    expect(got.deleted_at ?? null).toBeNull();
    const extra = await fga.createStore({ name: 'sdk-extra' });
    const page1 = await fga.listStores({ pageSize: 1 });
    expect(page1.stores).toHaveLength(1);
    expect(page1.continuation_token).not.toBe('');
    const page2 = await fga.listStores({ pageSize: 1, continuationToken: page1.continuation_token });
    expect(page2.stores?.[0]?.id).not.toBe(page1.stores?.[0]?.id);
    await fga.deleteStore({ storeId: extra.id });
    await expect(fga.getStore({ storeId: extra.id })).rejects.toMatchObject({ statusCode: 404 });
  });

  test('models written from DSL, read back, latest', async () => {
    const first = await fga.writeAuthorizationModel(
      dslToModel(DSL) as Parameters<OpenFgaClient['writeAuthorizationModel']>[0],
    );
    const second = await fga.writeAuthorizationModel(
      dslToModel(DSL) as Parameters<OpenFgaClient['writeAuthorizationModel']>[0],
    );
    expect(second.authorization_model_id > first.authorization_model_id).toBe(true);
    modelId = second.authorization_model_id;
    const read = await fga.readAuthorizationModel({ authorizationModelId: first.authorization_model_id });
    expect(read.authorization_model?.id).toBe(first.authorization_model_id);
    expect(read.authorization_model?.type_definitions.map((t) => t.type)).toEqual(['user', 'group', 'folder', 'doc']);
    expect(Object.keys(read.authorization_model?.conditions ?? {})).toEqual(['office']);
    const latest = await fga.readLatestAuthorizationModel();
    expect(latest.authorization_model?.id).toBe(modelId);
    const models = await fga.readAuthorizationModels({ pageSize: 1 });
    expect(models.authorization_models[0]?.id).toBe(modelId);
    expect(models.continuation_token).not.toBe('');
    fga.authorizationModelId = modelId;
    await fga.checkValidApiConnection();
  });

  test('writes (with conditions), deletes, non-transactional chunks', async () => {
    const tuples: TupleKey[] = [
      { user: 'user:anne', relation: 'owner', object: 'doc:1' },
      { user: 'user:bob', relation: 'viewer', object: 'doc:2', condition: { name: 'office', context: {} } },
      { user: 'group:eng#member', relation: 'viewer', object: 'doc:3' },
      { user: 'user:carl', relation: 'member', object: 'group:eng' },
      { user: 'folder:f', relation: 'parent', object: 'doc:4' },
      { user: 'user:dina', relation: 'viewer', object: 'folder:f' },
      { user: 'user:*', relation: 'viewer', object: 'doc:public' },
      { user: 'user:gone', relation: 'viewer', object: 'doc:1' },
    ];
    await fga.write({ writes: tuples });
    await fga.deleteTuples([{ user: 'user:gone', relation: 'viewer', object: 'doc:1' }]);
    const chunked = await fga.writeTuples(
      Array.from({ length: 5 }, (_, i) => ({ user: `user:n${i}`, relation: 'viewer', object: 'doc:5' })),
      { transaction: { disable: true, maxPerChunk: 2 } },
    );
    expect(chunked.writes.every((w) => w.status === ClientWriteStatus.SUCCESS)).toBe(true);
    await expect(fga.writeTuples([{ user: 'user:anne', relation: 'owner', object: 'doc:1' }])).rejects.toMatchObject({
      statusCode: 400,
    });
    await fga.writeTuples([{ user: 'user:anne', relation: 'owner', object: 'doc:1' }], {
      conflict: { onDuplicateWrites: 'ignore' as never },
    });
  });

  test('check: direct, computed, conditioned with context, contextual tuples, consistency', async () => {
    expect((await fga.check({ user: 'user:anne', relation: 'viewer', object: 'doc:1' })).allowed).toBe(true);
    expect(
      (await fga.check({ user: 'user:bob', relation: 'viewer', object: 'doc:2', context: { ip: '10.0.0.1' } })).allowed,
    ).toBe(true);
    expect(
      (await fga.check({ user: 'user:bob', relation: 'viewer', object: 'doc:2', context: { ip: '10.9.9.9' } })).allowed,
    ).toBe(false);
    expect((await fga.check({ user: 'user:carl', relation: 'viewer', object: 'doc:3' })).allowed).toBe(true);
    expect((await fga.check({ user: 'user:dina', relation: 'viewer', object: 'doc:4' })).allowed).toBe(true);
    expect((await fga.check({ user: 'user:zed', relation: 'viewer', object: 'doc:public' })).allowed).toBe(true);
    expect((await fga.check({ user: 'user:gone', relation: 'viewer', object: 'doc:1' })).allowed).toBe(false);
    const ctx = await fga.check(
      {
        user: 'user:eve',
        relation: 'viewer',
        object: 'doc:9',
        contextualTuples: [{ user: 'user:eve', relation: 'owner', object: 'doc:9' }],
      },
      { consistency: ConsistencyPreference.HigherConsistency },
    );
    expect(ctx.allowed).toBe(true);
  });

  test('batch check: client-side and server-side', async () => {
    const client = await fga.clientBatchCheck([
      { user: 'user:anne', relation: 'viewer', object: 'doc:1' },
      { user: 'user:anne', relation: 'viewer', object: 'doc:2' },
    ]);
    expect(client.result.map((r) => r.allowed)).toEqual([true, false]);
    const server = await fga.batchCheck({
      checks: [
        { user: 'user:anne', relation: 'viewer', object: 'doc:1', correlationId: 'a' },
        { user: 'user:anne', relation: 'editor', object: 'doc:2', correlationId: 'b' },
        { user: 'user:anne', relation: 'nope', object: 'doc:2', correlationId: 'c' },
      ],
    });
    const byId = Object.fromEntries(server.result.map((r) => [r.correlationId, r]));
    expect(byId.a?.allowed).toBe(true);
    expect(byId.b?.allowed).toBe(false);
    expect(byId.c?.error?.input_error).toBe('validation_error');
  });

  test('list objects, streamed list objects, list relations, list users', async () => {
    const objects = await fga.listObjects({ user: 'user:anne', relation: 'viewer', type: 'doc' });
    expect(objects.objects.sort()).toEqual(['doc:1', 'doc:public']);
    const streamed: string[] = [];
    for await (const r of fga.streamedListObjects({ user: 'user:anne', relation: 'viewer', type: 'doc' }))
      streamed.push(r.object);
    expect(streamed.sort()).toEqual(['doc:1', 'doc:public']);
    const relations = await fga.listRelations({
      user: 'user:anne',
      object: 'doc:1',
      relations: ['owner', 'editor', 'viewer', 'parent'],
    });
    expect(relations.relations.sort()).toEqual(['editor', 'owner', 'viewer']);
    const users = await fga.listUsers({
      object: { type: 'doc', id: '3' },
      relation: 'viewer',
      user_filters: [{ type: 'user' }],
    });
    expect(users.users).toEqual([{ object: { type: 'user', id: 'carl' } }]);
  });

  test('expand', async () => {
    const tree = await fga.expand({ relation: 'editor', object: 'doc:1' });
    expect(tree.tree?.root?.name).toBe('doc:1#editor');
  });

  test('read with pagination, read changes', async () => {
    const seen: string[] = [];
    let token: string | undefined;
    do {
      const page = await fga.read({}, { pageSize: 3, continuationToken: token });
      seen.push(...page.tuples.map((t) => `${t.key.object}#${t.key.relation}@${t.key.user}`));
      token = page.continuation_token || undefined;
    } while (token);
    // 8 written − 1 deleted + 5 chunked (the ignored duplicate adds nothing)
    expect(seen).toHaveLength(12);
    expect(new Set(seen).size).toBe(12);
    const filtered = await fga.read({ object: 'doc:1' });
    expect(filtered.tuples.map((t) => t.key.user)).toEqual(['user:anne']);
    const changes = await fga.readChanges({ type: 'doc' }, { pageSize: 50 });
    expect(changes.changes.length).toBeGreaterThan(0);
    expect(changes.changes.some((c) => c.operation === 'TUPLE_OPERATION_DELETE')).toBe(true);
    const since = await fga.readChanges({ type: 'doc', startTime: '2020-01-01T00:00:00Z' });
    expect(since.changes.length).toBe(changes.changes.length);
    const later = await fga.readChanges({ type: 'doc' }, { continuationToken: changes.continuation_token });
    expect(later.changes).toEqual([]);
    expect(later.continuation_token).toBe(changes.continuation_token);
  });

  test('assertions: write, read', async () => {
    await fga.writeAssertions([
      { user: 'user:anne', relation: 'viewer', object: 'doc:1', expectation: true },
      { user: 'user:zed', relation: 'owner', object: 'doc:1', expectation: false },
    ]);
    const read = await fga.readAssertions();
    expect(read.authorization_model_id).toBe(modelId);
    expect(read.assertions?.map((a) => [a.tuple_key.user, a.expectation])).toEqual([
      ['user:anne', true],
      ['user:zed', false],
    ]);
  });

  test('raw API requests through the SDK', async () => {
    const r = await fga.executeApiRequest<{ status: string }>({
      operationName: 'Health',
      method: 'GET',
      path: '/healthz',
    });
    expect(r.status).toBe('SERVING');
  });
});
