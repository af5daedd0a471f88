// Paged ListObjects / ListUsers and the resumable StreamedListObjects on the wire (latch extension,
// docs/reference/decisions.md D15): without the page fields the replies keep OpenFGA's exact shape; with them, pages follow
// the continuation token to the end; a token only works with the request that produced it; page
// sizes outside [1, 1000] are 400 validation_error.

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LatchChannelClient } from '../../src/client/index.js';
import { listAllObjects, listAllUsers } from '../../src/latch.js';
import { latch } from '../cli/helpers.js';
import { call, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;
let store = '';
const post = (path: string, body: Record<string, unknown>) =>
  call(server.base, 'POST', `/stores/${store}${path}`, body);
const ids = Array.from({ length: 23 }, (_, i) => `doc:${String(i).padStart(2, '0')}`);

beforeAll(async () => {
  server = await start();
  store = await storeWithModel(server.base, 'list-pages');
  const writes = ids.map((object) => ({ user: 'user:anne', relation: 'owner', object }));
  expect((await post('/write', { writes: { tuple_keys: writes } })).status).toBe(200);
});

afterAll(async () => {
  await server.close();
});

const LO = { type: 'doc', relation: 'viewer', user: 'user:anne' };

describe('paged listings over HTTP', () => {
  test('no page fields: OpenFGA shape, no continuation_token', async () => {
    const r = await post('/list-objects', LO);
    expect(Object.keys(r.json as object)).toEqual(['objects']);
    expect((r.json as { objects: string[] }).objects.sort()).toEqual(ids);
    const u = await post('/list-users', {
      object: { type: 'doc', id: '00' },
      relation: 'viewer',
      user_filters: [{ type: 'user' }],
    });
    expect(u.json).toEqual({ users: [{ object: { type: 'user', id: 'anne' } }] });
  });

  test('ListObjects pages of 10 follow the token to the end, in order', async () => {
    const got: string[][] = [];
    let token = '';
    do {
      const r = await post('/list-objects', { ...LO, page_size: 10, ...(token ? { continuation_token: token } : {}) });
      expect(r.status, r.text).toBe(200);
      const body = r.json as { objects: string[]; continuation_token: string };
      got.push(body.objects);
      token = body.continuation_token;
      expect(token).toMatch(/^[A-Za-z0-9_-]*$/);
    } while (token !== '');
    expect(got.map((p) => p.length)).toEqual([10, 10, 3]);
    expect(got.flat()).toEqual(ids);
  });

  test('a token from another request, a tampered token, a bad page size → 400', async () => {
    const first = (await post('/list-objects', { ...LO, page_size: 5 })).json as { continuation_token: string };
    const other = await post('/list-objects', {
      ...LO,
      relation: 'owner',
      page_size: 5,
      continuation_token: first.continuation_token,
    });
    expect([other.status, (other.json as { code: string }).code]).toEqual([400, 'invalid_continuation_token']);
    const users = await post('/list-users', {
      object: { type: 'doc', id: '00' },
      relation: 'viewer',
      user_filters: [{ type: 'user' }],
      continuation_token: first.continuation_token,
    });
    expect((users.json as { code: string }).code).toBe('invalid_continuation_token');
    const tampered = await post('/list-objects', {
      ...LO,
      page_size: 5,
      continuation_token: `A${first.continuation_token.slice(1)}`,
    });
    expect((tampered.json as { code: string }).code).toBe('invalid_continuation_token');
    for (const page_size of [-1, 100_001]) {
      // The code Read and the other paged endpoints give a PageSize out of range (docs/reference/http-api.md §6.4).
      const r = await post('/list-objects', { ...LO, page_size });
      expect([r.status, (r.json as { code: string }).code]).toEqual([400, 'page_size_invalid']);
    }
    // A token alone pages with the default size; page_size 0 alone is the OpenFGA request.
    const resumed = (await post('/list-objects', { ...LO, continuation_token: first.continuation_token })).json as {
      objects: string[];
    };
    expect(resumed.objects).toEqual(ids.slice(5));
    expect(Object.keys((await post('/list-objects', { ...LO, page_size: 0 })).json as object)).toEqual(['objects']);
  });

  test('StreamedListObjects: a page’s last line resumes the listing; the last object carries ""', async () => {
    const lines = async (body: Record<string, unknown>): Promise<{ object: string; continuation_token?: string }[]> => {
      const r = await post('/streamed-list-objects', body);
      expect(r.status, r.text).toBe(200);
      return r.text
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { result: { object: string; continuation_token?: string } }).result);
    };
    const first = await lines({ ...LO, page_size: 7 });
    expect(first.map((l) => l.object)).toEqual(ids.slice(0, 7));
    // Below TOKEN_EVERY lines, only the page's last line carries a token.
    expect(first.map((l) => l.continuation_token === undefined)).toEqual([true, true, true, true, true, true, false]);
    expect(first[6]?.continuation_token).toMatch(/^[A-Za-z0-9_-]+$/);
    // Resume after the page (as a client cut off after its 7th line would), to the end.
    const rest = await lines({ ...LO, page_size: 1000, continuation_token: first[6]?.continuation_token });
    expect(rest.map((l) => l.object)).toEqual(ids.slice(7));
    expect(rest[rest.length - 1]?.continuation_token).toBe('');
    // The tokens are ListObjects tokens: the unary endpoint continues the same listing.
    const unary = (
      await post('/list-objects', { ...LO, page_size: 2, continuation_token: first[6]?.continuation_token })
    ).json as { objects: string[] };
    expect(unary.objects).toEqual(ids.slice(7, 9));
    // Without page fields, the stream is OpenFGA's: no token on the lines.
    const plain = await post('/streamed-list-objects', LO);
    expect(plain.text.includes('continuation_token')).toBe(false);
  });

  test('ListUsers pages', async () => {
    const writes = Array.from({ length: 12 }, (_, i) => ({
      user: `user:u${String(i).padStart(2, '0')}`,
      relation: 'owner',
      object: 'doc:00',
    }));
    expect((await post('/write', { writes: { tuple_keys: writes } })).status).toBe(200);
    const body = {
      object: { type: 'doc', id: '00' },
      relation: 'viewer',
      user_filters: [{ type: 'user' }],
      page_size: 5,
    };
    const seen: string[] = [];
    let token = '';
    do {
      const r = (await post('/list-users', token ? { ...body, continuation_token: token } : body)).json as {
        users: { object: { id: string } }[];
        continuation_token: string;
      };
      seen.push(...r.users.map((u) => u.object.id));
      token = r.continuation_token;
    } while (token !== '');
    expect(seen).toEqual(['anne', ...writes.map((w) => w.user.slice(5))]);
  });
});

describe('transparent paging past the server cap (listObjectsMaxResults 5)', () => {
  let capped: Server;
  let id = '';
  beforeAll(async () => {
    capped = await start({ engine: { listObjectsMaxResults: 5, listUsersMaxResults: 5 } });
    id = await storeWithModel(capped.base, 'capped');
    const writes = ids.map((object) => ({ user: 'user:anne', relation: 'owner', object }));
    expect((await call(capped.base, 'POST', `/stores/${id}/write`, { writes: { tuple_keys: writes } })).status).toBe(
      200,
    );
  });
  afterAll(async () => {
    await capped.close();
  });

  test('the plain request is capped; the CLI --all, latch/client and the embedded API get everything', async () => {
    const plain = (await call(capped.base, 'POST', `/stores/${id}/list-objects`, LO)).json as { objects: string[] };
    expect(plain.objects).toHaveLength(5);
    const env = { LATCH_API_URL: capped.base };
    const cli = await latch(['query', 'list-objects', 'user:anne', 'viewer', 'doc', '--store-id', id, '--all'], env);
    expect(cli.code, cli.err).toBe(0);
    expect((JSON.parse(cli.out) as { objects: string[] }).objects).toEqual(ids);
    const cliCapped = await latch(['query', 'list-objects', 'user:anne', 'viewer', 'doc', '--store-id', id], env);
    expect((JSON.parse(cliCapped.out) as { objects: string[] }).objects).toHaveLength(5);
    const client = await LatchChannelClient.connect(`ws://127.0.0.1:${capped.port}/stream`);
    try {
      const got: string[] = [];
      for await (const o of client.listAllObjects(id, LO, 4)) got.push(o);
      expect(got).toEqual(ids);
    } finally {
      await client.close();
    }
    const embedded: string[] = [];
    for await (const o of listAllObjects(
      capped.latch,
      { storeId: id, contextualTuples: [], consistency: 'UNSPECIFIED', ...LO },
      6,
    ))
      embedded.push(o);
    expect(embedded).toEqual(ids);
    const users: string[] = [];
    for await (const u of listAllUsers(
      capped.latch,
      {
        storeId: id,
        contextualTuples: [],
        consistency: 'UNSPECIFIED',
        object: { type: 'doc', id: '00' },
        relation: 'viewer',
        userFilters: [{ type: 'user' }],
      },
      1,
    )) {
      users.push('object' in u ? u.object.id : '?');
    }
    expect(users).toEqual(['anne']);
  });
});
