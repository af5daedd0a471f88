// Every bad input the HTTP layer must refuse, sent to a real server: status, code and (where the
// wire text is part of the contract) the exact message. Every response carries X-Request-Id.

import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MODEL, call, start, type Body } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;

interface Row {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly body?: Body | (() => Body);
  readonly headers?: Record<string, string>;
  readonly status: number;
  /** The error code; a number for streaming endpoints (gRPC code in `{"error":{code,message}}`). */
  readonly code: string | number;
  readonly message?: string | RegExp;
}

const UNKNOWN = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
const key = (user = 'user:anne', relation = 'viewer', object = 'doc:1') => ({ user, relation, object });
const tuples = (n: number) => Array.from({ length: n }, (_, i) => key(`user:u${i}`));
const REGEX_USER = String.raw`^[^\\s]{2,512}$`;

let server: Server;
let store = '';
let other = '';
let readToken = '';
let changesToken = '';

beforeAll(async () => {
  server = await start();
  const s = await call(server.base, 'POST', '/stores', { name: 'errors' });
  store = (s.json as { id: string }).id;
  other = ((await call(server.base, 'POST', '/stores', { name: 'other' })).json as { id: string }).id;
  for (const id of [store, other]) {
    const m = await call(server.base, 'POST', `/stores/${id}/authorization-models`, MODEL);
    expect(m.status).toBe(201);
  }
  const w = await call(server.base, 'POST', `/stores/${store}/write`, { writes: { tuple_keys: tuples(3) } });
  expect(w.status).toBe(200);
  readToken = (
    (await call(server.base, 'POST', `/stores/${store}/read`, { page_size: 1 })).json as { continuation_token: string }
  ).continuation_token;
  changesToken = (
    (await call(server.base, 'GET', `/stores/${store}/changes?type=doc&page_size=1`)).json as {
      continuation_token: string;
    }
  ).continuation_token;
  expect(readToken).not.toBe('');
  expect(changesToken).not.toBe('');
});

afterAll(async () => {
  await server.close();
});

function rows(): Row[] {
  const big = JSON.stringify({ tuple_key: key(), pad: 'x'.repeat(1024 * 1024 + 10) });
  const tampered = readToken.slice(0, -2) + (readToken.endsWith('A') ? 'BB' : 'AA');
  return [
    { name: 'unknown path', method: 'GET', path: '/nope', status: 404, code: 'undefined_endpoint' },
    {
      name: 'unknown nested path',
      method: 'POST',
      path: `/stores/${store}/nope`,
      body: {},
      status: 404,
      code: 'undefined_endpoint',
    },
    {
      name: 'wrong method',
      method: 'PUT',
      path: `/stores/${store}/check`,
      body: {},
      status: 404,
      code: 'unimplemented',
    },
    { name: 'wrong method on /stores', method: 'DELETE', path: '/stores', status: 404, code: 'unimplemented' },
    {
      name: 'UpdateStore',
      method: 'PATCH',
      path: `/stores/${store}`,
      body: { name: 'x' },
      status: 404,
      code: 'unimplemented',
      message: 'method UpdateStore not implemented',
    },
    {
      name: 'invalid JSON',
      method: 'POST',
      path: `/stores/${store}/check`,
      body: '{bad',
      status: 400,
      code: 'validation_error',
    },
    {
      name: 'truncated JSON',
      method: 'POST',
      path: `/stores/${store}/check`,
      body: '{"tuple_key":',
      status: 400,
      code: 'validation_error',
      message: 'malformed JSON',
    },
    {
      name: 'invalid UTF-8',
      method: 'POST',
      path: `/stores/${store}/check`,
      body: new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]),
      status: 400,
      code: 'validation_error',
    },
    {
      name: 'UTF-8 with an encoded surrogate',
      method: 'POST',
      path: `/stores/${store}/check`,
      body: new Uint8Array([0x7b, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x3a, 0x31, 0x7d]),
      status: 400,
      code: 'validation_error',
    },
    {
      name: 'JSON after a UTF-8 byte-order mark',
      method: 'POST',
      path: `/stores/${store}/check`,
      body: new Uint8Array([
        0xef,
        0xbb,
        0xbf,
        ...Buffer.from('{"tuple_key":{"user":"user:a","relation":"viewer","object":"doc:1"}}'),
      ]),
      status: 400,
      code: 'validation_error',
    },
    {
      name: 'body not an object',
      method: 'POST',
      path: `/stores/${store}/check`,
      body: '[1,2]',
      status: 400,
      code: 'validation_error',
    },
    {
      name: 'body over the limit',
      method: 'POST',
      path: `/stores/${store}/check`,
      body: big,
      status: 400,
      code: 'validation_error',
      message: /1048576/,
    },
    {
      name: 'chunked body over the limit',
      method: 'POST',
      path: `/stores/${store}/check`,
      status: 400,
      code: 'validation_error',
      message: /1048576/,
      body: () =>
        new ReadableStream<Uint8Array>({
          start(c) {
            for (let i = 0; i < 20; i++) c.enqueue(new Uint8Array(128 * 1024).fill(0x20));
            c.close();
          },
        }),
    },
    {
      name: 'empty POST body is {}',
      method: 'POST',
      path: `/stores/${store}/check`,
      body: '',
      status: 400,
      code: 'tuple_key_value_not_specified',
      message: 'invalid CheckRequest.TupleKey: value is required',
    },
    {
      name: 'store id not a ULID',
      method: 'POST',
      path: '/stores/abc/check',
      body: { tuple_key: key() },
      status: 400,
      code: 'validation_error',
      message: 'invalid CheckRequest.StoreId: value does not match regex pattern "^[ABCDEFGHJKMNPQRSTVWXYZ0-9]{26}$"',
    },
    {
      name: 'unknown store: check',
      method: 'POST',
      path: `/stores/${UNKNOWN}/check`,
      body: { tuple_key: key() },
      status: 404,
      code: 'store_id_not_found',
    },
    { name: 'unknown store: get', method: 'GET', path: `/stores/${UNKNOWN}`, status: 404, code: 'store_id_not_found' },
    {
      name: 'unknown store: delete',
      method: 'DELETE',
      path: `/stores/${UNKNOWN}`,
      status: 404,
      code: 'store_id_not_found',
    },
    {
      name: 'unknown store: read',
      method: 'POST',
      path: `/stores/${UNKNOWN}/read`,
      body: {},
      status: 404,
      code: 'store_id_not_found',
    },
    {
      name: 'unknown store: write',
      method: 'POST',
      path: `/stores/${UNKNOWN}/write`,
      body: { writes: { tuple_keys: [key()] } },
      status: 404,
      code: 'store_id_not_found',
    },
    {
      name: 'unknown store: changes',
      method: 'GET',
      path: `/stores/${UNKNOWN}/changes`,
      status: 404,
      code: 'store_id_not_found',
    },
    {
      name: 'unknown store: models',
      method: 'GET',
      path: `/stores/${UNKNOWN}/authorization-models`,
      status: 404,
      code: 'store_id_not_found',
    },
    {
      name: 'unknown store: write model',
      method: 'POST',
      path: `/stores/${UNKNOWN}/authorization-models`,
      body: MODEL,
      status: 404,
      code: 'store_id_not_found',
    },
    {
      name: 'unknown store: assertions',
      method: 'GET',
      path: `/stores/${UNKNOWN}/assertions/${UNKNOWN}`,
      status: 404,
      code: 'store_id_not_found',
    },
    {
      name: 'unknown store: list-objects',
      method: 'POST',
      path: `/stores/${UNKNOWN}/list-objects`,
      body: { type: 'doc', relation: 'viewer', user: 'user:anne' },
      status: 404,
      code: 'store_id_not_found',
    },
    {
      name: 'unknown store: streamed-list-objects',
      method: 'POST',
      path: `/stores/${UNKNOWN}/streamed-list-objects`,
      body: { type: 'doc', relation: 'viewer', user: 'user:anne' },
      status: 404,
      code: 5,
      message: 'Store ID not found',
    },
    {
      name: 'streamed-list-objects parse error',
      method: 'POST',
      path: `/stores/${store}/streamed-list-objects`,
      body: { type: 'doc', relation: 'viewer' },
      status: 400,
      code: 3,
      message: /StreamedListObjectsRequest\.User/,
    },
    {
      name: 'unknown store: list-users',
      method: 'POST',
      path: `/stores/${UNKNOWN}/list-users`,
      body: { object: { type: 'doc', id: '1' }, relation: 'viewer', user_filters: [{ type: 'user' }] },
      status: 404,
      code: 'store_id_not_found',
    },
    {
      name: 'unknown store: expand',
      method: 'POST',
      path: `/stores/${UNKNOWN}/expand`,
      body: { tuple_key: { object: 'doc:1', relation: 'viewer' } },
      status: 404,
      code: 'store_id_not_found',
    },
    {
      name: 'unknown store: batch-check',
      method: 'POST',
      path: `/stores/${UNKNOWN}/batch-check`,
      body: { checks: [{ tuple_key: key(), correlation_id: 'a' }] },
      status: 404,
      code: 'store_id_not_found',
    },
    {
      name: 'check user with a space',
      method: 'POST',
      path: `/stores/${store}/check`,
      body: { tuple_key: key('user anne') },
      status: 400,
      code: 'validation_error',
      message: `invalid CheckRequestTupleKey.User: value does not match regex pattern "${REGEX_USER}"`,
    },
    {
      name: 'check user of 513 chars',
      method: 'POST',
      path: `/stores/${store}/check`,
      body: { tuple_key: key(`user:${'a'.repeat(508)}`) },
      status: 400,
      code: 'validation_error',
      message: /CheckRequestTupleKey\.User/,
    },
    {
      name: 'relation of 51 chars',
      method: 'POST',
      path: `/stores/${store}/check`,
      body: { tuple_key: key('user:anne', 'r'.repeat(51)) },
      status: 400,
      code: 'validation_error',
      message: /CheckRequestTupleKey\.Relation/,
    },
    {
      name: 'object of 257 chars',
      method: 'POST',
      path: `/stores/${store}/check`,
      body: { tuple_key: key('user:anne', 'viewer', `doc:${'o'.repeat(253)}`) },
      status: 400,
      code: 'validation_error',
      message: /CheckRequestTupleKey\.Object/,
    },
    {
      name: 'user field not a string',
      method: 'POST',
      path: `/stores/${store}/check`,
      body: { tuple_key: { user: 7, relation: 'viewer', object: 'doc:1' } },
      status: 400,
      code: 'validation_error',
    },
    {
      name: 'written user over 512 bytes',
      method: 'POST',
      path: `/stores/${store}/write`,
      body: { writes: { tuple_keys: [key(`user:${'é'.repeat(300)}`)] } },
      status: 400,
      code: 'validation_error',
      message: 'invalid TupleKey.User: value length must be at most 512 bytes',
    },
    {
      name: 'condition name of 257 chars',
      method: 'POST',
      path: `/stores/${store}/write`,
      body: { writes: { tuple_keys: [{ ...key(), condition: { name: 'c'.repeat(257) } }] } },
      status: 400,
      code: 'validation_error',
      message: /RelationshipCondition\.Name/,
    },
    {
      name: 'duplicate tuples in one write',
      method: 'POST',
      path: `/stores/${store}/write`,
      body: { writes: { tuple_keys: [key('user:dup')] }, deletes: { tuple_keys: [key('user:dup')] } },
      status: 400,
      code: 'cannot_allow_duplicate_tuples_in_one_request',
      message: "duplicate tuple in write: user: 'user:dup', relation: 'viewer', object: 'doc:1'",
    },
    {
      name: '101 tuples in one write',
      method: 'POST',
      path: `/stores/${store}/write`,
      body: { writes: { tuple_keys: tuples(101) } },
      status: 400,
      code: 'exceeded_entity_limit',
      message: 'The number of write operations exceeds the allowed limit of 100',
    },
    {
      name: 'write without writes and deletes',
      method: 'POST',
      path: `/stores/${store}/write`,
      body: {},
      status: 400,
      code: 'invalid_write_input',
    },
    {
      name: 'write with empty tuple_keys',
      method: 'POST',
      path: `/stores/${store}/write`,
      body: { writes: { tuple_keys: [] } },
      status: 400,
      code: 'validation_error',
      message: 'invalid WriteRequestWrites.TupleKeys: value must contain at least 1 item(s)',
    },
    {
      name: 'bad on_duplicate',
      method: 'POST',
      path: `/stores/${store}/write`,
      body: { writes: { tuple_keys: [key()], on_duplicate: 'overwrite' } },
      status: 400,
      code: 'validation_error',
      message: 'invalid on_duplicate option: overwrite',
    },
    {
      name: '101 contextual tuples',
      method: 'POST',
      path: `/stores/${store}/check`,
      body: { tuple_key: key(), contextual_tuples: { tuple_keys: tuples(101) } },
      status: 400,
      code: 'validation_error',
      message: 'invalid ContextualTupleKeys.TupleKeys: value must contain no more than 100 item(s)',
    },
    {
      name: '101 assertions',
      method: 'PUT',
      path: `/stores/${store}/assertions/${UNKNOWN}`,
      body: { assertions: Array.from({ length: 101 }, () => ({ tuple_key: key(), expectation: true })) },
      status: 400,
      code: 'assertions_too_many_items',
    },
    {
      name: '51 batch checks',
      method: 'POST',
      path: `/stores/${store}/batch-check`,
      body: { checks: Array.from({ length: 51 }, (_, i) => ({ tuple_key: key(), correlation_id: `c${i}` })) },
      status: 400,
      code: 'validation_error',
      message: 'batchCheck received 51 checks, the maximum allowed is 50',
    },
    {
      name: 'duplicate correlation id',
      method: 'POST',
      path: `/stores/${store}/batch-check`,
      body: {
        checks: [
          { tuple_key: key(), correlation_id: 'c1' },
          { tuple_key: key(), correlation_id: 'c1' },
        ],
      },
      status: 400,
      code: 'validation_error',
      message: 'received duplicate correlation id: c1',
    },
    {
      name: 'bad correlation id',
      method: 'POST',
      path: `/stores/${store}/batch-check`,
      body: { checks: [{ tuple_key: key(), correlation_id: 'a b' }] },
      status: 400,
      code: 'validation_error',
      message: /BatchCheckItem\.CorrelationId/,
    },
    {
      name: 'unknown consistency number',
      method: 'POST',
      path: `/stores/${store}/check`,
      body: { tuple_key: key(), consistency: 7 },
      status: 400,
      code: 'validation_error',
      message: 'invalid CheckRequest.Consistency: value must be one of the defined enum values',
    },
    {
      name: 'unknown consistency name',
      method: 'POST',
      path: `/stores/${store}/check`,
      body: { tuple_key: key(), consistency: 'FASTEST' },
      status: 400,
      code: 'validation_error',
    },
    {
      name: 'model id not a ULID',
      method: 'POST',
      path: `/stores/${store}/check`,
      body: { tuple_key: key(), authorization_model_id: 'x' },
      status: 400,
      code: 'validation_error',
      message: /CheckRequest\.AuthorizationModelId/,
    },
    {
      name: 'unknown model id',
      method: 'POST',
      path: `/stores/${store}/check`,
      body: { tuple_key: key(), authorization_model_id: UNKNOWN },
      status: 400,
      code: 'authorization_model_not_found',
    },
    {
      name: 'read page_size 0',
      method: 'POST',
      path: `/stores/${store}/read`,
      body: { page_size: 0 },
      status: 400,
      code: 'page_size_invalid',
      message: 'invalid ReadRequest.PageSize: value must be inside range [1, 100]',
    },
    {
      name: 'read page_size 101',
      method: 'POST',
      path: `/stores/${store}/read`,
      body: { page_size: 101 },
      status: 400,
      code: 'page_size_invalid',
    },
    {
      name: 'list stores page_size 101',
      method: 'GET',
      path: '/stores?page_size=101',
      status: 400,
      code: 'page_size_invalid',
    },
    {
      name: 'models page_size 0',
      method: 'GET',
      path: `/stores/${store}/authorization-models?page_size=0`,
      status: 400,
      code: 'page_size_invalid',
    },
    {
      name: 'changes page_size 101',
      method: 'GET',
      path: `/stores/${store}/changes?page_size=101`,
      status: 400,
      code: 'page_size_invalid',
      message: 'invalid ReadChangesRequest.PageSize: value must be inside range [1, 100]',
    },
    {
      name: 'changes page_size 0',
      method: 'GET',
      path: `/stores/${store}/changes?page_size=0`,
      status: 400,
      code: 'validation_error',
      message: 'invalid ReadChangesRequest.PageSize: value must be greater than or equal to 1',
    },
    {
      name: 'token failing the regex',
      method: 'POST',
      path: `/stores/${store}/read`,
      body: { continuation_token: 'a+b/c' },
      status: 400,
      code: 'validation_error',
      message: /ReadRequest\.ContinuationToken/,
    },
    {
      name: 'token that is not ours',
      method: 'POST',
      path: `/stores/${store}/read`,
      body: { continuation_token: 'MDFKNVk2UUg4VlRSMk00V1pCMEMzRDVFN0Z8' },
      status: 400,
      code: 'invalid_continuation_token',
      message: 'Invalid continuation token',
    },
    {
      name: 'tampered token',
      method: 'POST',
      path: `/stores/${store}/read`,
      body: () => ({ continuation_token: tampered }),
      status: 400,
      code: 'invalid_continuation_token',
    },
    {
      name: 'token of another store',
      method: 'POST',
      path: `/stores/${other}/read`,
      body: () => ({ continuation_token: readToken }),
      status: 400,
      code: 'invalid_continuation_token',
    },
    {
      name: 'token with another filter',
      method: 'POST',
      path: `/stores/${store}/read`,
      body: () => ({ tuple_key: { object: 'doc:1' }, continuation_token: readToken }),
      status: 400,
      code: 'invalid_continuation_token',
    },
    {
      name: 'read token used on changes',
      method: 'GET',
      path: `/stores/${store}/changes?continuation_token=__READ__`,
      status: 400,
      code: 'invalid_continuation_token',
    },
    {
      name: 'changes token with another type',
      method: 'GET',
      path: `/stores/${store}/changes?type=group&continuation_token=__CHANGES__`,
      status: 400,
      code: 'query_string_type_continuation_token_mismatch',
      message: "The type in the querystring and the continuation token don't match",
    },
    {
      name: 'start_time in the future',
      method: 'GET',
      path: `/stores/${store}/changes?start_time=2999-01-01T00:00:00Z`,
      status: 400,
      code: 'validation_error',
      message: 'invalid ReadChangesRequest.StartTime: value must be less than now',
    },
    {
      name: 'start_time before the epoch',
      method: 'GET',
      path: `/stores/${store}/changes?start_time=1969-01-01T00:00:00Z`,
      status: 400,
      code: 'invalid_start_time',
    },
    {
      name: 'changes type with #',
      method: 'GET',
      path: `/stores/${store}/changes?type=a%23b`,
      status: 400,
      code: 'type_invalid_pattern',
    },
    {
      name: 'read filter without object type',
      method: 'POST',
      path: `/stores/${store}/read`,
      body: { tuple_key: { object: 'doc:' } },
      status: 400,
      code: 'validation_error',
      message: /object type field is required/,
    },
    {
      name: 'list-objects bad type',
      method: 'POST',
      path: `/stores/${store}/list-objects`,
      body: { type: 'a:b', relation: 'viewer', user: 'user:anne' },
      status: 400,
      code: 'type_invalid_pattern',
    },
    {
      name: 'list-objects empty user',
      method: 'POST',
      path: `/stores/${store}/list-objects`,
      body: { type: 'doc', relation: 'viewer', user: '' },
      status: 400,
      code: 'validation_error',
      message: 'invalid ListObjectsRequest.User: value length must be between 1 and 512 bytes, inclusive',
    },
    {
      name: 'list-users two filters',
      method: 'POST',
      path: `/stores/${store}/list-users`,
      body: {
        object: { type: 'doc', id: '1' },
        relation: 'viewer',
        user_filters: [{ type: 'user' }, { type: 'group' }],
      },
      status: 400,
      code: 'validation_error',
      message: 'invalid ListUsersRequest.UserFilters: value must contain exactly 1 item(s)',
    },
    {
      name: 'list-users without object',
      method: 'POST',
      path: `/stores/${store}/list-users`,
      body: { relation: 'viewer', user_filters: [{ type: 'user' }] },
      status: 400,
      code: 'validation_error',
      message: 'invalid ListUsersRequest.Object: value is required',
    },
    {
      name: 'expand without relation',
      method: 'POST',
      path: `/stores/${store}/expand`,
      body: { tuple_key: { object: 'doc:1' } },
      status: 400,
      code: 'invalid_expand_input',
    },
    {
      name: 'create store bad name',
      method: 'POST',
      path: '/stores',
      body: { name: 'a' },
      status: 400,
      code: 'validation_error',
      message: /CreateStoreRequest\.Name/,
    },
    {
      name: 'model without types',
      method: 'POST',
      path: `/stores/${store}/authorization-models`,
      body: { schema_version: '1.1', type_definitions: [] },
      status: 400,
      code: 'type_definitions_too_few_items',
    },
    {
      name: 'model bad schema version',
      method: 'POST',
      path: `/stores/${store}/authorization-models`,
      body: { schema_version: '2.0', type_definitions: [{ type: 'user' }] },
      status: 400,
      code: 'validation_error',
      message: 'invalid WriteAuthorizationModelRequest.SchemaVersion: value must be in list [1.0 1.1 1.2]',
    },
    {
      name: 'model bad relation key',
      method: 'POST',
      path: `/stores/${store}/authorization-models`,
      body: { schema_version: '1.1', type_definitions: [{ type: 'doc', relations: { 'can:view': { this: {} } } }] },
      status: 400,
      code: 'relations_invalid_pattern',
    },
    {
      name: 'unknown model on read',
      method: 'GET',
      path: `/stores/${store}/authorization-models/${UNKNOWN}`,
      status: 400,
      code: 'authorization_model_not_found',
    },
  ];
}

describe('HTTP errors', () => {
  test('every bad input gets its status and code, never a 500', async () => {
    const failures: string[] = [];
    for (const row of rows()) {
      const body = typeof row.body === 'function' ? row.body() : row.body;
      const path = row.path.replace('__READ__', readToken).replace('__CHANGES__', changesToken);
      const r = await call(server.base, row.method, path, body, row.headers);
      const json = r.json as { code?: string; message?: string; error?: { code: number; message: string } } | undefined;
      const got = json?.error ?? json;
      const messageOk =
        row.message === undefined ||
        (typeof row.message === 'string' ? got?.message === row.message : row.message.test(got?.message ?? ''));
      if (r.status !== row.status || got?.code !== row.code || !messageOk || !r.headers.get('x-request-id')) {
        failures.push(`${row.name}: got ${r.status} ${r.text.slice(0, 200)}`);
      }
    }
    expect(failures).toEqual([]);
    // The server is still healthy after all of that.
    expect((await call(server.base, 'GET', '/healthz')).json).toEqual({ status: 'SERVING' });
  });
});
