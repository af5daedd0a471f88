// Scopes of the permission index endpoints (docs/auth.md), client-credentials mode: ListIndexes
// and GetIndex need `read:indexes`, ReadExpansions `read:expansions` (store-bound tokens of the
// store may call them); CreateIndex and DeleteIndex need `manage:indexes` on an account-level
// credential — a store-bound token with the scope is refused.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, call, startAuthServer, type AuthServer, ALL_SCOPES } from '../auth/fixtures.js';

let s: AuthServer;
let store: string;
let model: string;
let admin: Record<string, string>;

const MODEL = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'doc',
      relations: { viewer: { this: {} } },
      metadata: { relations: { viewer: { directly_related_user_types: [{ type: 'user' }] } } },
    },
  ],
};

beforeAll(async () => {
  s = await startAuthServer();
  admin = bearer(await s.mint('*', ALL_SCOPES));
  store = ((await call(s.base, 'POST', '/stores', { name: 'scopes' }, admin)).json as { id: string }).id;
  model = (
    (await call(s.base, 'POST', `/stores/${store}/authorization-models`, MODEL, admin)).json as {
      authorization_model_id: string;
    }
  ).authorization_model_id;
});
afterAll(async () => s.close());

describe('permission index scopes', () => {
  it('manage:indexes on an account-level credential creates and deletes; nothing else does', async () => {
    const body = { name: 'v', relations: [{ object_type: 'doc', relation: 'viewer' }] };
    const others = ALL_SCOPES.filter((x) => x !== 'manage:indexes');
    const refused = await call(s.base, 'POST', `/stores/${store}/indexes`, body, bearer(await s.mint('*', others)));
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({ code: 'insufficient_permissions' });
    const bound = await call(
      s.base,
      'POST',
      `/stores/${store}/indexes`,
      body,
      bearer(await s.mint(store, ['manage:indexes'])),
    );
    expect(bound.status).toBe(403);
    expect(bound.json).toMatchObject({ code: 'insufficient_permissions' });
    const manager = bearer(await s.mint('*', ['manage:indexes']));
    const created = await call(s.base, 'POST', `/stores/${store}/indexes`, body, manager);
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const id = (created.json as { index_id: string }).index_id;

    // Reading: read:indexes for list/get, read:expansions for the stream; a store-bound token works.
    const reader = bearer(await s.mint(store, ['read:indexes']));
    expect((await call(s.base, 'GET', `/stores/${store}/indexes`, undefined, reader)).status).toBe(200);
    expect((await call(s.base, 'GET', `/stores/${store}/indexes/${id}`, undefined, reader)).status).toBe(200);
    const streamPath = `/stores/${store}/indexes/${id}/expansions?authorization_model_id=${model}`;
    const noStream = await call(s.base, 'GET', streamPath, undefined, reader);
    expect(noStream.status).toBe(403);
    const streamer = bearer(await s.mint(store, ['read:expansions']));
    expect((await call(s.base, 'GET', `/stores/${store}/indexes`, undefined, streamer)).status).toBe(403);
    const ac = new AbortController();
    const live = await fetch(s.base + streamPath, { headers: streamer, signal: ac.signal });
    expect(live.status).toBe(200);
    ac.abort();
    const otherStore = bearer(await s.mint('01J5Y0M8Q3ZKX7T9B2C4D6F8GH', ['read:indexes']));
    expect((await call(s.base, 'GET', `/stores/${store}/indexes`, undefined, otherStore)).status).toBe(403);

    expect((await call(s.base, 'DELETE', `/stores/${store}/indexes/${id}`, undefined, reader)).status).toBe(403);
    expect(
      (
        await call(
          s.base,
          'DELETE',
          `/stores/${store}/indexes/${id}`,
          undefined,
          bearer(await s.mint(store, ['manage:indexes'])),
        )
      ).status,
    ).toBe(403);
    expect((await call(s.base, 'DELETE', `/stores/${store}/indexes/${id}`, undefined, manager)).status).toBe(204);
  });
});
