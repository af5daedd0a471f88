// AuthZEN Authorization API 1.0 (OpenID AuthZEN; openid.net/specs/authorization-api-1_0) against a
// real server. Each test sends a request example of the specification, verbatim where the text
// gives one, over a store whose tuples make the example's response the right answer, and
// compares the reply with the example's response. Sections: §5 Information Model, §6 Access
// Evaluation, §7 Access Evaluations (§7.1.1 Default values, §7.1.2 options and semantics, §7.2
// response and errors), §8 Search APIs, §9 PDP Metadata, §10 Transport; subsections by title.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LatchChannelClient } from '../../src/client/index.js';
import { decodeMsgpack, encodeMsgpack } from '../../src/domain/msgpack.js';
import { dslToModel } from '../../src/model/dsl.js';
import { call, start } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;

const MODEL = `model
  schema 1.1
type user
type group
  relations
    define member: [user]
type account
  relations
    define can_read: [user, group#member]
    define can_write: [user]
type document
  relations
    define reader: [user, user:*]
    define read: reader
    define can_read: [user]
    define can_edit: [user]
    define dept_viewer: [user with same_department]
type todo
  relations
    define can_read: [user]
condition same_department(subject_department: string, resource_department: string) {
  subject_department == resource_department
}`;

const TUPLES = [
  // §6, §8: alice and bob read account 123; alice reads 456.
  ['user:alice@example.com', 'can_read', 'account:123'],
  ['user:bob@example.com', 'can_read', 'account:123'],
  ['user:alice@example.com', 'can_read', 'account:456'],
  // §8 Action Search: the subject "123".
  ['user:123', 'can_read', 'account:123'],
  ['user:123', 'can_write', 'account:123'],
  // §7.1: alice reads two of the three documents and edits the third.
  ['user:alice@example.com', 'can_read', 'document:boxcarring.md'],
  ['user:alice@example.com', 'can_read', 'document:subject-search.md'],
  ['user:alice@example.com', 'can_edit', 'document:resource-search.md'],
  // §7.1.2 semantics: alice reads documents 1 and 3, not 2.
  ['user:alice@example.com', 'reader', 'document:1'],
  ['user:alice@example.com', 'reader', 'document:3'],
  // §10 (HTTPS binding example): todo 1.
  ['user:alice@example.com', 'can_read', 'todo:1'],
  // Transitive search (§8 recommends it): carol reads account 789 through group sales.
  ['user:carol@example.com', 'member', 'group:sales'],
  ['group:sales#member', 'can_read', 'account:789'],
  ['user:*', 'reader', 'document:public'],
].map(([user, relation, object]) => ({ user, relation, object }));

let s: Server;
let store: string;
let firstModel: string;

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return call(s.base, 'POST', `/stores/${store}/access/v1/${path}`, body as Record<string, unknown>, headers);
}

beforeAll(async () => {
  s = await start({ authzenBaseUrl: 'https://pdp.example.com' });
  store = ((await call(s.base, 'POST', '/stores', { name: 'authzen' })).json as { id: string }).id;
  const m = await call(
    s.base,
    'POST',
    `/stores/${store}/authorization-models`,
    dslToModel(MODEL) as unknown as Record<string, unknown>,
  );
  expect(m.status, m.text).toBe(201);
  firstModel = (m.json as { authorization_model_id: string }).authorization_model_id;
  const w = await call(s.base, 'POST', `/stores/${store}/write`, { writes: { tuple_keys: TUPLES } });
  expect(w.status, w.text).toBe(200);
  const conditioned = {
    user: 'user:alice@example.com',
    relation: 'dept_viewer',
    object: 'document:forecast',
    condition: { name: 'same_department', context: {} },
  };
  const c = await call(s.base, 'POST', `/stores/${store}/write`, { writes: { tuple_keys: [conditioned] } });
  expect(c.status, c.text).toBe(200);
});

afterAll(async () => {
  await s?.close();
});

describe('§6 Access Evaluation API', () => {
  it('§6 example request → the §5 Decision example {"decision": true}', async () => {
    const r = await post('evaluation', {
      subject: { type: 'user', id: 'alice@example.com' },
      resource: { type: 'account', id: '123' },
      action: { name: 'can_read', properties: { method: 'GET' } },
      context: { time: '1985-10-26T01:22-07:00' },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ decision: true });
    expect(r.headers.get('openfga-authorization-model-id')).toBe(firstModel);
  });

  it('a subject without the relation gets {"decision": false} with 200 (§10 Error Responses: a deny is not an error)', async () => {
    const r = await post('evaluation', {
      subject: { type: 'user', id: 'mallory@example.com' },
      resource: { type: 'account', id: '123' },
      action: { name: 'can_read' },
    });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ decision: false });
  });

  it('§5 Subject and Resource properties reach conditions as subject_<key> and resource_<key>', async () => {
    const ask = (dept: string) =>
      post('evaluation', {
        subject: { type: 'user', id: 'alice@example.com', properties: { department: 'Sales' } },
        resource: { type: 'document', id: 'forecast', properties: { department: dept } },
        action: { name: 'dept_viewer' },
      });
    expect((await ask('Sales')).json).toEqual({ decision: true });
    expect((await ask('Marketing')).json).toEqual({ decision: false });
    // The request context wins over a property of the same flattened name.
    const r = await post('evaluation', {
      subject: { type: 'user', id: 'alice@example.com', properties: { department: 'Sales' } },
      resource: { type: 'document', id: 'forecast', properties: { department: 'Sales' } },
      action: { name: 'dept_viewer' },
      context: { resource_department: 'Legal' },
    });
    expect(r.json).toEqual({ decision: false });
  });

  it('a wildcard grant answers for any subject of the type', async () => {
    const r = await post('evaluation', {
      subject: { type: 'user', id: 'anyone' },
      resource: { type: 'document', id: 'public' },
      action: { name: 'read' },
    });
    expect(r.json).toEqual({ decision: true });
  });
});

describe('§7 Access Evaluations API', () => {
  const alice = { type: 'user', id: 'alice@example.com' };
  const time = { time: '2024-05-31T15:22-07:00' };
  const doc = (id: string) => ({ type: 'document', id });

  it('§7.1 three requests with no default values', async () => {
    const r = await post('evaluations', {
      evaluations: ['boxcarring.md', 'subject-search.md', 'resource-search.md'].map((id) => ({
        subject: alice,
        action: { name: 'can_read' },
        resource: doc(id),
        context: time,
      })),
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ evaluations: [{ decision: true }, { decision: true }, { decision: false }] });
  });

  it('§7.1.1 default values: subject and context at the top level', async () => {
    const r = await post('evaluations', {
      subject: alice,
      context: time,
      evaluations: ['boxcarring.md', 'subject-search.md', 'resource-search.md'].map((id) => ({
        action: { name: 'can_read' },
        resource: doc(id),
      })),
    });
    expect(r.json).toEqual({ evaluations: [{ decision: true }, { decision: true }, { decision: false }] });
  });

  it('§7.1.1 default values: a default action overridden by the third request (also the §10 HTTPS example)', async () => {
    const r = await post(
      'evaluations',
      {
        subject: alice,
        context: time,
        action: { name: 'can_read' },
        evaluations: [
          { resource: doc('boxcarring.md') },
          { resource: doc('subject-search.md') },
          { action: { name: 'can_edit' }, resource: doc('resource-search.md') },
        ],
      },
      { 'X-Request-ID': 'bfe9eb29-ab87-4ca3-be83-a1d5d8305716' },
    );
    expect(r.json).toEqual({ evaluations: [{ decision: true }, { decision: true }, { decision: true }] });
    expect(r.headers.get('x-request-id')).toBe('bfe9eb29-ab87-4ca3-be83-a1d5d8305716');
  });

  it('§7.1 an absent or empty evaluations array is one Access Evaluation of the top-level fields', async () => {
    const one = { subject: alice, action: { name: 'can_read' }, resource: doc('boxcarring.md') };
    expect((await post('evaluations', one)).json).toEqual({ evaluations: [{ decision: true }] });
    expect((await post('evaluations', { ...one, evaluations: [] })).json).toEqual({
      evaluations: [{ decision: true }],
    });
    const r = await post('evaluations', { subject: alice, resource: doc('boxcarring.md') });
    expect(r.status).toBe(400);
    expect(r.json).toEqual({
      code: 'validation_error',
      message: 'invalid EvaluationsRequest.Action: value is required',
    });
  });

  it('§7.1.2 the options example: options are accepted, unknown ones ignored; its item without an action is refused (§7.1.1 MUST)', async () => {
    const options = { evaluations_semantic: 'execute_all', another_option: 'value' };
    const verbatim = await post('evaluations', {
      evaluations: [{ resource: { type: 'doc', id: '1' }, subject: { type: 'doc', id: '2' } }],
      options,
    });
    expect(verbatim.status).toBe(400);
    expect(verbatim.json).toEqual({ code: 'validation_error', message: 'evaluation 0: missing action' });
    const complete = await post('evaluations', {
      evaluations: [{ resource: doc('1'), subject: alice, action: { name: 'read' } }],
      options,
    });
    expect(complete.status, complete.text).toBe(200);
    expect(complete.json).toEqual({ evaluations: [{ decision: true }] });
  });

  describe('§7.1.2 evaluations semantics: read on documents 1, 2, 3', () => {
    const request = (semantic: string) => ({
      subject: { type: 'user', id: 'alice@example.com' },
      action: { name: 'read' },
      options: { evaluations_semantic: semantic },
      evaluations: [{ resource: doc('1') }, { resource: doc('2') }, { resource: doc('3') }],
    });

    it('execute_all → true, false, true', async () => {
      expect((await post('evaluations', request('execute_all'))).json).toEqual({
        evaluations: [{ decision: true }, { decision: false }, { decision: true }],
      });
    });

    it('deny_on_first_deny → true, false and stops (the context of the example is implementation-defined, §5 Decision Context; latch sends none)', async () => {
      expect((await post('evaluations', request('deny_on_first_deny'))).json).toEqual({
        evaluations: [{ decision: true }, { decision: false }],
      });
    });

    it('permit_on_first_permit → true and stops', async () => {
      expect((await post('evaluations', request('permit_on_first_permit'))).json).toEqual({
        evaluations: [{ decision: true }],
      });
    });

    it('an error counts as a denial under deny_on_first_deny and is skipped under permit_on_first_permit', async () => {
      const items = {
        evaluations: [
          { resource: doc('1') },
          { action: { name: 'no_such_relation' }, resource: doc('1') },
          { resource: doc('3') },
        ],
      };
      const deny = await post('evaluations', { ...request('deny_on_first_deny'), ...items });
      const body = deny.json as {
        evaluations: { decision: boolean; context?: { error: { status: number; message: string } } }[];
      };
      expect(body.evaluations).toHaveLength(2);
      expect(body.evaluations[0]).toEqual({ decision: true });
      expect(body.evaluations[1]?.decision).toBe(false);
      expect(body.evaluations[1]?.context?.error.status).toBe(400);
      expect(body.evaluations[1]?.context?.error.message).toContain('no_such_relation');
      const permit = await post('evaluations', {
        ...request('permit_on_first_permit'),
        evaluations: [
          { action: { name: 'no_such_relation' }, resource: doc('1') },
          { resource: doc('2') },
          { resource: doc('3') },
          { resource: doc('1') },
        ],
      });
      const p = permit.json as { evaluations: { decision: boolean; context?: unknown }[] };
      expect(p.evaluations.map((e) => e.decision)).toEqual([false, false, true]);
      expect(p.evaluations[0]?.context).toMatchObject({ error: { status: 400 } });
      expect(p.evaluations[1]).toEqual({ decision: false });
    });

    it('an unknown semantic → 400', async () => {
      const r = await post('evaluations', request('first_come'));
      expect(r.status).toBe(400);
      expect(r.json).toEqual({
        code: 'validation_error',
        message: 'invalid value for enum field evaluations_semantic: "first_come"',
      });
    });
  });

  it('§7.2 errors in individual evaluations are embedded: decision false with context.error {status, message}', async () => {
    const r = await post('evaluations', {
      subject: alice,
      action: { name: 'can_read' },
      evaluations: [
        { resource: doc('boxcarring.md') },
        { resource: { type: 'spreadsheet', id: 'q3' } },
        { resource: doc('resource-search.md') },
      ],
    });
    expect(r.status).toBe(200);
    const body = r.json as {
      evaluations: { decision: boolean; context?: { error: { status: number; message: string } } }[];
    };
    expect(body.evaluations[0]).toEqual({ decision: true });
    expect(body.evaluations[1]).toEqual({
      decision: false,
      context: { error: { status: 400, message: expect.stringContaining('spreadsheet') } },
    });
    expect(body.evaluations[2]).toEqual({ decision: false });
  });
});

describe('§8 Search APIs', () => {
  it('§8 Subject Search example: users who can_read account 123 (the subject id, if any, is ignored)', async () => {
    const request = {
      subject: { type: 'user' },
      action: { name: 'can_read' },
      resource: { type: 'account', id: '123' },
      context: { time: '2024-10-26T01:22-07:00' },
    };
    const r = await post('search/subject', request);
    expect(r.status, r.text).toBe(200);
    // The example's results; user 123 also reads account 123 in this store.
    expect(r.json).toEqual({
      results: [
        { type: 'user', id: '123' },
        { type: 'user', id: 'alice@example.com' },
        { type: 'user', id: 'bob@example.com' },
      ],
    });
    const paged = await post('search/subject', {
      ...request,
      subject: { type: 'user', id: 'ignored' },
      page: { next_token: 'alsehrq3495u8' },
    });
    expect(paged.json).toEqual(r.json);
  });

  it('§8 search semantics: subject search is transitive: group members are found; a typed wildcard is id "*"', async () => {
    const r = await post('search/subject', {
      subject: { type: 'user' },
      action: { name: 'can_read' },
      resource: { type: 'account', id: '789' },
    });
    expect(r.json).toEqual({ results: [{ type: 'user', id: 'carol@example.com' }] });
    const w = await post('search/subject', {
      subject: { type: 'user' },
      action: { name: 'read' },
      resource: { type: 'document', id: 'public' },
    });
    expect(w.json).toEqual({ results: [{ type: 'user', id: '*' }] });
  });

  it('§8 Resource Search example: accounts alice can_read', async () => {
    const r = await post('search/resource', {
      subject: { type: 'user', id: 'alice@example.com' },
      action: { name: 'can_read' },
      resource: { type: 'account' },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      results: [
        { type: 'account', id: '123' },
        { type: 'account', id: '456' },
      ],
    });
  });

  it('§8 Action Search example: what user 123 may do on account 123', async () => {
    const r = await post('search/action', {
      subject: { type: 'user', id: '123' },
      resource: { type: 'account', id: '123' },
      context: { time: '2024-10-26T01:22-07:00' },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ results: [{ name: 'can_read' }, { name: 'can_write' }] });
  });

  it('action search on a type the model lacks → 400', async () => {
    const r = await post('search/action', {
      subject: { type: 'user', id: '123' },
      resource: { type: 'spreadsheet', id: '1' },
    });
    expect(r.status).toBe(400);
    expect((r.json as { code: string }).code).toBe('validation_error');
  });
});

describe('§9 Policy Decision Point Metadata', () => {
  it('GET /.well-known/authzen-configuration/{store} names the store as the PDP and each endpoint under it', async () => {
    const r = await call(s.base, 'GET', `/.well-known/authzen-configuration/${store}`);
    expect(r.status, r.text).toBe(200);
    const pdp = `https://pdp.example.com/stores/${store}`;
    // Parameters with zero values are omitted (§9): no empty `capabilities`.
    expect(r.json).toEqual({
      policy_decision_point: pdp,
      access_evaluation_endpoint: `${pdp}/access/v1/evaluation`,
      access_evaluations_endpoint: `${pdp}/access/v1/evaluations`,
      search_subject_endpoint: `${pdp}/access/v1/search/subject`,
      search_resource_endpoint: `${pdp}/access/v1/search/resource`,
      search_action_endpoint: `${pdp}/access/v1/search/action`,
    });
    expect(r.headers.get('content-type')).toContain('application/json');
  });

  it('without --authzen-base-url the origin is the request Host; an unknown store is 404', async () => {
    const other = await start();
    try {
      const id = ((await call(other.base, 'POST', '/stores', { name: 'meta' })).json as { id: string }).id;
      const r = await call(other.base, 'GET', `/.well-known/authzen-configuration/${id}`);
      expect((r.json as { policy_decision_point: string }).policy_decision_point).toBe(`${other.base}/stores/${id}`);
      const missing = await call(other.base, 'GET', '/.well-known/authzen-configuration/01JAAAAAAAAAAAAAAAAAAAAAAA');
      expect(missing.status).toBe(404);
      expect((missing.json as { code: string }).code).toBe('store_id_not_found');
    } finally {
      await other.close();
    }
  });
});

describe('§10 Transport (HTTPS binding)', () => {
  it('the Access Evaluation example over HTTP, with its X-Request-ID echoed (§10 Request Identification)', async () => {
    const r = await post(
      'evaluation',
      {
        subject: { type: 'user', id: 'alice@example.com' },
        resource: { type: 'todo', id: '1' },
        action: { name: 'can_read' },
        context: { time: '1985-10-26T01:22-07:00' },
      },
      { 'Content-Type': 'application/json', 'X-Request-ID': 'bfe9eb29-ab87-4ca3-be83-a1d5d8305716' },
    );
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ decision: true });
    expect(r.headers.get('x-request-id')).toBe('bfe9eb29-ab87-4ca3-be83-a1d5d8305716');
    // Without one, latch's own id; an unusable one (too long) is replaced by latch's own.
    const own = await post(
      'evaluation',
      {
        subject: { type: 'user', id: 'alice@example.com' },
        resource: { type: 'todo', id: '1' },
        action: { name: 'can_read' },
      },
      { 'X-Request-ID': 'x'.repeat(200) },
    );
    expect(own.headers.get('x-request-id')).not.toBe('x'.repeat(200));
    expect(own.headers.get('x-request-id')).toBeTruthy();
  });

  it.each([
    [
      'no subject',
      { resource: { type: 'todo', id: '1' }, action: { name: 'can_read' } },
      'invalid EvaluationRequest.Subject: value is required',
    ],
    [
      'no resource',
      { subject: { type: 'user', id: 'a' }, action: { name: 'can_read' } },
      'invalid EvaluationRequest.Resource: value is required',
    ],
    [
      'no action',
      { subject: { type: 'user', id: 'a' }, resource: { type: 'todo', id: '1' } },
      'invalid EvaluationRequest.Action: value is required',
    ],
    [
      'a subject without id',
      { subject: { type: 'user' }, resource: { type: 'todo', id: '1' }, action: { name: 'can_read' } },
      'invalid Subject.Id: value is required',
    ],
    [
      'an id with a colon',
      { subject: { type: 'user', id: 'a:b' }, resource: { type: 'todo', id: '1' }, action: { name: 'can_read' } },
      'invalid Subject.Id: value does not match regex pattern "^[^:#\\\\s]{1,500}$"',
    ],
    [
      'a type with @',
      { subject: { type: 'us@er', id: 'a' }, resource: { type: 'todo', id: '1' }, action: { name: 'can_read' } },
      'invalid Subject.Type: value does not match regex pattern "^[^:#@\\\\s]{1,50}$"',
    ],
    [
      'properties not an object',
      {
        subject: { type: 'user', id: 'a', properties: [1] },
        resource: { type: 'todo', id: '1' },
        action: { name: 'can_read' },
      },
      'invalid value for google.protobuf.Struct field properties: [1]',
    ],
    [
      'a relation the type lacks',
      { subject: { type: 'user', id: 'a' }, resource: { type: 'todo', id: '1' }, action: { name: 'can_fly' } },
      undefined,
    ],
  ])('Error Responses (§10): %s → 400 with an error message', async (_name, body, message) => {
    const r = await post('evaluation', body);
    expect(r.status).toBe(400);
    const err = r.json as { code: string; message: string };
    expect(err.code).toBe('validation_error');
    if (message !== undefined) expect(err.message).toBe(message);
    else expect(err.message).toContain('can_fly');
  });

  it('Error Responses (§10): an unauthenticated caller gets 401 with an error message', async () => {
    const key = 'k'.repeat(24);
    const authed = await start({ auth: { mode: 'preshared', presharedKeys: [key] } });
    try {
      const id = (
        (await call(authed.base, 'POST', '/stores', { name: 'authzen-auth' }, { authorization: `Bearer ${key}` }))
          .json as { id: string }
      ).id;
      const body = {
        subject: { type: 'user', id: 'a' },
        resource: { type: 'todo', id: '1' },
        action: { name: 'can_read' },
      };
      const r = await call(authed.base, 'POST', `/stores/${id}/access/v1/evaluation`, body);
      expect(r.status).toBe(401);
      expect(typeof (r.json as { message: string }).message).toBe('string');
    } finally {
      await authed.close();
    }
  });
});

describe('model selection', () => {
  it('Openfga-Authorization-Model-Id selects a model; a malformed one is ignored (latest)', async () => {
    const next = await call(
      s.base,
      'POST',
      `/stores/${store}/authorization-models`,
      dslToModel(
        'model\n  schema 1.1\ntype user\ntype account\n  relations\n    define can_read: [user]\n',
      ) as unknown as Record<string, unknown>,
    );
    expect(next.status).toBe(201);
    const body = {
      subject: { type: 'user', id: 'alice@example.com' },
      resource: { type: 'todo', id: '1' },
      action: { name: 'can_read' },
    };
    const latest = await post('evaluation', body);
    expect(latest.status).toBe(400); // the latest model has no type todo
    const pinned = await post('evaluation', body, { 'Openfga-Authorization-Model-Id': firstModel });
    expect(pinned.json).toEqual({ decision: true });
    expect(pinned.headers.get('openfga-authorization-model-id')).toBe(firstModel);
    const malformed = await post('evaluation', body, { 'Openfga-Authorization-Model-Id': 'not-a-ulid' });
    expect(malformed.status).toBe(400);
  });
});

describe('the endpoint table: msgpack bodies and the /stream channel answer as JSON does', () => {
  const body = {
    subject: { type: 'user', id: 'alice@example.com' },
    resource: { type: 'account', id: '123' },
    action: { name: 'can_read' },
  };

  it('application/msgpack on the HTTP route', async () => {
    const r = await fetch(`${s.base}/stores/${store}/access/v1/evaluation`, {
      method: 'POST',
      headers: { 'content-type': 'application/msgpack', accept: 'application/msgpack' },
      body: encodeMsgpack(body),
    });
    expect(r.status).toBe(200);
    expect(decodeMsgpack(new Uint8Array(await r.arrayBuffer()))).toEqual({ decision: true });
  });

  it('channel ops evaluation, evaluations, subject-search, resource-search, action-search, get-configuration', async () => {
    const client = await LatchChannelClient.connect(`ws://127.0.0.1:${s.port}/stream`);
    try {
      const answers = await client.batch([
        { op: 'evaluation', store_id: store, body },
        {
          op: 'evaluations',
          store_id: store,
          body: { ...body, evaluations: [{}, { resource: { type: 'account', id: '999' } }] },
        },
        { op: 'subject-search', store_id: store, body: { ...body, subject: { type: 'user' } } },
        { op: 'resource-search', store_id: store, body: { ...body, resource: { type: 'account' } } },
        { op: 'action-search', store_id: store, body: { subject: body.subject, resource: body.resource } },
        { op: 'get-configuration', store_id: store },
      ]);
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 200]);
      expect(answers[0]?.body).toEqual({ decision: true });
      expect(answers[1]?.body).toEqual({ evaluations: [{ decision: true }, { decision: false }] });
      expect(answers[2]?.body).toEqual({
        results: [
          { type: 'user', id: '123' },
          { type: 'user', id: 'alice@example.com' },
          { type: 'user', id: 'bob@example.com' },
        ],
      });
      expect(answers[3]?.body).toEqual({
        results: [
          { type: 'account', id: '123' },
          { type: 'account', id: '456' },
        ],
      });
      // The latest model (written by 'model selection' above) defines only can_read on account.
      expect(answers[4]?.body).toEqual({ results: [{ name: 'can_read' }] });
      expect((answers[5]?.body as { policy_decision_point: string }).policy_decision_point).toBe(
        `https://pdp.example.com/stores/${store}`,
      );
      // No headers on the channel: the body's authorization_model_id (the channel's path
      // parameter) selects the model.
      const todo = { subject: body.subject, resource: { type: 'todo', id: '1' }, action: { name: 'can_read' } };
      const pinned = await client.batch([
        { op: 'evaluation', store_id: store, body: { ...todo, authorization_model_id: firstModel } },
        { op: 'evaluation', store_id: store, body: todo },
      ]);
      expect(pinned[0]?.body).toEqual({ decision: true });
      expect(pinned[1]?.status).toBe(400); // the latest model has no type todo
    } finally {
      await client.close();
    }
  });
});
