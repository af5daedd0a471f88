// ImpactAuthorizationModel (POST /stores/{id}/authorization-models/impact) against a real server:
// the worked example of docs/changing-models.md line by line, the assertions option, and bad
// input: an invalid candidate answers exactly as the same body written as a model, malformed
// options and an unknown base model are plain errors before any line.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, start } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;
let server: Server;

beforeAll(async () => {
  server = await start();
});
afterAll(async () => {
  await server.close();
});

const rel = (types: object[]): object => ({ directly_related_user_types: types });

/** group member: [user, group#member]; doc: owner [user], viewer [user, group#member] or owner. */
const BASE = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'group',
      relations: { member: { this: {} } },
      metadata: { relations: { member: rel([{ type: 'user' }, { type: 'group', relation: 'member' }]) } },
    },
    {
      type: 'doc',
      relations: {
        owner: { this: {} },
        viewer: { union: { child: [{ this: {} }, { computedUserset: { relation: 'owner' } }] } },
      },
      metadata: {
        relations: {
          owner: rel([{ type: 'user' }]),
          viewer: rel([{ type: 'user' }, { type: 'group', relation: 'member' }]),
        },
      },
    },
  ],
};

/** The candidate: viewers lose the group grant, gain the public wildcard; owners unchanged. */
const CANDIDATE = {
  schema_version: '1.1',
  type_definitions: [
    BASE.type_definitions[0],
    BASE.type_definitions[1],
    {
      type: 'doc',
      relations: BASE.type_definitions[2]?.relations,
      metadata: {
        relations: {
          owner: rel([{ type: 'user' }]),
          viewer: rel([{ type: 'user' }, { type: 'user', wildcard: {} }]),
        },
      },
    },
  ],
};

const TUPLES = [
  'group:eng#member@user:anne',
  'group:eng#member@group:leads#member',
  'group:leads#member@user:bob',
  'doc:1#viewer@group:eng#member',
  'doc:1#owner@user:carl',
  'doc:2#viewer@user:anne',
].map((s) => {
  const [left = '', user = ''] = s.split('@');
  const [object = '', relation = ''] = left.split('#');
  return { object, relation, user };
});

async function store(name: string): Promise<{ id: string; model: string }> {
  const id = ((await call(server.base, 'POST', '/stores', { name })).json as { id: string }).id;
  const m = await call(server.base, 'POST', `/stores/${id}/authorization-models`, BASE);
  const w = await call(server.base, 'POST', `/stores/${id}/write`, { writes: { tuple_keys: TUPLES } });
  expect(w.status).toBe(200);
  return { id, model: (m.json as { authorization_model_id: string }).authorization_model_id };
}

type Line = { result?: Record<string, unknown> & { kind: string }; error?: unknown };

function lines(text: string): Line[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);
}

const impact = (id: string, body: Record<string, unknown>): ReturnType<typeof call> =>
  call(server.base, 'POST', `/stores/${id}/authorization-models/impact`, body);

describe('ImpactAuthorizationModel', () => {
  it('streams who gains and who loses, the rejected tuples and a summary', async () => {
    const s = await store('impact-example');
    const r = await impact(s.id, CANDIDATE);
    expect(r.status).toBe(200);
    const out = lines(r.text).map((l) => l.result);
    expect(out.every((l) => l !== undefined)).toBe(true);
    const kinds = out.map((l) => l?.kind);
    expect(out.find((l) => l?.kind === 'relation_changed')).toEqual({
      kind: 'relation_changed',
      object_type: 'doc',
      relation: 'viewer',
      before: '[user, group#member] or owner',
      after: '[user, user:*] or owner',
    });
    expect(out.find((l) => l?.kind === 'rejected_tuples')).toEqual({
      kind: 'rejected_tuples',
      reason: 'restriction_removed',
      count: 1,
      sample: [{ object: 'doc:1', relation: 'viewer', user: 'group:eng#member' }],
    });
    const pairs = out
      .filter((l) => l?.kind === 'gained' || l?.kind === 'lost')
      .map((l) => `${l?.kind} ${l?.object}@${l?.user}`);
    // No `user:*` tuple is stored yet: nobody gains; the members of eng (anne, bob through leads) lose doc:1.
    expect(pairs).toEqual(['lost doc:1@user:anne', 'lost doc:1@user:bob']);
    const summary = out.at(-1);
    expect(summary?.kind).toBe('summary');
    expect(summary).toMatchObject({ base_authorization_model_id: s.model, gained: 0, lost: 2, rejected_tuples: 1 });
    const relations = summary?.relations as {
      object_type: string;
      relation: string;
      evaluated: boolean;
      lost: number;
    }[];
    expect(relations.find((x) => x.relation === 'viewer')).toMatchObject({ evaluated: true, lost: 2 });
    // doc#owner and group#member read nothing that changed: proven equal, not evaluated.
    expect(relations.find((x) => x.relation === 'owner')).toMatchObject({ evaluated: false, lost: 0 });
    expect(relations.find((x) => x.relation === 'member')).toMatchObject({ evaluated: false });
    expect(kinds.indexOf('rejected_tuples')).toBeLessThan(kinds.indexOf('lost'));
  });

  it('compares against the model named by authorization_model_id', async () => {
    const s = await store('impact-base-id');
    const later = await call(server.base, 'POST', `/stores/${s.id}/authorization-models`, CANDIDATE);
    expect(later.status).toBe(201);
    // Against the latest (the candidate itself): nothing changes.
    const same = lines((await impact(s.id, CANDIDATE)).text).at(-1)?.result;
    expect(same).toMatchObject({ gained: 0, lost: 0, rejected_tuples: 0 });
    const first = lines((await impact(s.id, { ...CANDIDATE, authorization_model_id: s.model })).text).at(-1)?.result;
    expect(first).toMatchObject({ base_authorization_model_id: s.model, lost: 2 });
  });

  it('runs the assertions of the base model against the candidate and reports those that change', async () => {
    const s = await store('impact-assertions');
    const assertions = [
      { tuple_key: { object: 'doc:1', relation: 'viewer', user: 'user:anne' }, expectation: true },
      { tuple_key: { object: 'doc:1', relation: 'viewer', user: 'user:carl' }, expectation: true },
      { tuple_key: { object: 'doc:2', relation: 'viewer', user: 'user:bob' }, expectation: false },
    ];
    const put = await call(server.base, 'PUT', `/stores/${s.id}/assertions/${s.model}`, { assertions });
    expect(put.status).toBe(204);
    const out = lines((await impact(s.id, { ...CANDIDATE, options: { assertions: true } })).text).map((l) => l.result);
    expect(out.filter((l) => l?.kind === 'assertion')).toEqual([
      {
        kind: 'assertion',
        tuple_key: assertions[0]?.tuple_key,
        expectation: true,
        base: { allowed: true },
        candidate: { allowed: false },
        passes: false,
      },
    ]);
    expect(out.at(-1)).toMatchObject({ assertions_run: 3, assertions_changed: 1 });
  });

  it('an invalid candidate gets the 400 and code of the same model write', async () => {
    const s = await store('impact-invalid');
    const bad = [
      { ...BASE, schema_version: '1.0' },
      { ...BASE, type_definitions: [] },
      {
        schema_version: '1.1',
        type_definitions: [
          { type: 'user' },
          { type: 'doc', relations: { viewer: { computedUserset: { relation: 'nope' } } } },
        ],
      },
      {
        schema_version: '1.1',
        type_definitions: [
          {
            type: 'doc',
            relations: { viewer: { this: {} } },
            metadata: { relations: { viewer: rel([{ type: 'team' }]) } },
          },
        ],
      },
      'not an object',
    ];
    for (const body of bad) {
      const asWrite = await call(
        server.base,
        'POST',
        `/stores/${s.id}/authorization-models`,
        body as Record<string, unknown>,
      );
      const asImpact = await call(
        server.base,
        'POST',
        `/stores/${s.id}/authorization-models/impact`,
        body as Record<string, unknown>,
      );
      expect(asWrite.status).toBe(400);
      expect(asImpact.status).toBe(400);
      expect(asImpact.json).toEqual(asWrite.json);
    }
  });

  it('malformed options and an unknown base model are refused before any line', async () => {
    const s = await store('impact-options');
    for (const options of [
      5,
      'x',
      { sample_size: -1 },
      { sample_size: 1001 },
      { sample_size: 'ten' },
      { assertions: 'yes' },
      { other: 1 },
    ]) {
      const r = await impact(s.id, { ...CANDIDATE, options });
      expect(r.status, JSON.stringify(options)).toBe(400);
      expect((r.json as { code: string }).code).toBe('validation_error');
    }
    const badId = await impact(s.id, { ...CANDIDATE, authorization_model_id: 'nope' });
    expect(badId.status).toBe(400);
    const missing = await impact(s.id, { ...CANDIDATE, authorization_model_id: '01ARZ3NDEKTSV4RRFFQ69G5FAV' });
    const read = await call(server.base, 'GET', `/stores/${s.id}/authorization-models/01ARZ3NDEKTSV4RRFFQ69G5FAV`);
    expect(missing.status).toBe(read.status);
    expect((missing.json as { code: string }).code).toBe((read.json as { code: string }).code);
    const noStore = await impact('01ARZ3NDEKTSV4RRFFQ69G5FAV', CANDIDATE);
    expect(noStore.status).toBe(404);
    expect((noStore.json as { code: string }).code).toBe('store_id_not_found');
  });
});
