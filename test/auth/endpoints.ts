// One valid request per implemented endpoint, with its scope and its success status: the scope
// table of docs/reference/http-api.md §2 driven over HTTP (with the scope → success, without → 403).

export interface EndpointCase {
  readonly op: string;
  readonly scope: string;
  readonly method: string;
  /** `{S}` = the store, `{M}` = its model id, `{D}` = a store made for deletion. */
  readonly path: string;
  readonly body?: unknown;
  readonly ok: number;
  /** Store-less operations need an account-level (`*`) token. */
  readonly account?: boolean;
  /** A stream that does not end by itself (Watch): read up to its first line, then hang up. */
  readonly live?: boolean;
}

/** Streaming endpoints report every error, a refused credential included, as a stream line (§4.18). */
export const STREAMING_OPS: ReadonlySet<string> = new Set(['StreamedListObjects', 'Watch', 'ExportTuples']);

const tk = { user: 'user:anne', relation: 'viewer', object: 'doc:1' };

/** The AuthZEN endpoints (docs/authzen.md) with the scopes docs/auth.md lists for them. */
function authzenCases(): EndpointCase[] {
  const subject = { type: 'user', id: 'anne' };
  const resource = { type: 'doc', id: '1' };
  const action = { name: 'viewer' };
  return [
    {
      op: 'Evaluation',
      scope: 'check:tuples',
      method: 'POST',
      path: '/stores/{S}/access/v1/evaluation',
      body: { subject, resource, action },
      ok: 200,
    },
    {
      op: 'Evaluations',
      scope: 'check:tuples',
      method: 'POST',
      path: '/stores/{S}/access/v1/evaluations',
      body: { subject, action, evaluations: [{ resource }] },
      ok: 200,
    },
    {
      op: 'SubjectSearch',
      scope: 'list:users',
      method: 'POST',
      path: '/stores/{S}/access/v1/search/subject',
      body: { subject: { type: 'user' }, resource, action },
      ok: 200,
    },
    {
      op: 'ResourceSearch',
      scope: 'list:objects',
      method: 'POST',
      path: '/stores/{S}/access/v1/search/resource',
      body: { subject, resource: { type: 'doc' }, action },
      ok: 200,
    },
    {
      op: 'ActionSearch',
      scope: 'check:tuples',
      method: 'POST',
      path: '/stores/{S}/access/v1/search/action',
      body: { subject, resource },
      ok: 200,
    },
    {
      op: 'GetConfiguration',
      scope: 'read:stores',
      method: 'GET',
      path: '/.well-known/authzen-configuration/{S}',
      ok: 200,
    },
  ];
}

export const ENDPOINT_CASES: readonly EndpointCase[] = [
  { op: 'ListStores', scope: 'read:stores', method: 'GET', path: '/stores', ok: 200, account: true },
  {
    op: 'CreateStore',
    scope: 'create:stores',
    method: 'POST',
    path: '/stores',
    body: { name: 'made-by-scope-test' },
    ok: 201,
    account: true,
  },
  { op: 'GetStore', scope: 'read:stores', method: 'GET', path: '/stores/{S}', ok: 200 },
  { op: 'DeleteStore', scope: 'delete:stores', method: 'DELETE', path: '/stores/{D}', ok: 204 },
  {
    op: 'ReadAuthorizationModels',
    scope: 'read:authorization_models',
    method: 'GET',
    path: '/stores/{S}/authorization-models',
    ok: 200,
  },
  {
    op: 'WriteAuthorizationModel',
    scope: 'write:authorization_models',
    method: 'POST',
    path: '/stores/{S}/authorization-models',
    body: {
      schema_version: '1.1',
      type_definitions: [
        { type: 'user' },
        {
          type: 'doc',
          relations: { viewer: { this: {} } },
          metadata: { relations: { viewer: { directly_related_user_types: [{ type: 'user' }] } } },
        },
      ],
    },
    ok: 201,
  },
  {
    op: 'ReadAuthorizationModel',
    scope: 'read:authorization_models',
    method: 'GET',
    path: '/stores/{S}/authorization-models/{M}',
    ok: 200,
  },
  {
    op: 'ImpactAuthorizationModel',
    scope: 'read:tuples',
    method: 'POST',
    path: '/stores/{S}/authorization-models/impact',
    body: {
      schema_version: '1.1',
      type_definitions: [
        { type: 'user' },
        {
          type: 'doc',
          relations: { viewer: { this: {} } },
          metadata: {
            relations: { viewer: { directly_related_user_types: [{ type: 'user' }, { type: 'user', wildcard: {} }] } },
          },
        },
      ],
    },
    ok: 200,
  },
  { op: 'ReadShadowModel', scope: 'read:authorization_models', method: 'GET', path: '/stores/{S}/shadow', ok: 200 },
  {
    op: 'DeleteShadowModel',
    scope: 'write:authorization_models',
    method: 'DELETE',
    path: '/stores/{S}/shadow',
    ok: 204,
  },
  { op: 'ReadShadowReport', scope: 'read:tuples', method: 'GET', path: '/stores/{S}/shadow/report', ok: 200 },
  { op: 'ReadAssertions', scope: 'read:assertions', method: 'GET', path: '/stores/{S}/assertions/{M}', ok: 200 },
  {
    op: 'WriteAssertions',
    scope: 'write:assertions',
    method: 'PUT',
    path: '/stores/{S}/assertions/{M}',
    body: { assertions: [{ tuple_key: tk, expectation: true }] },
    ok: 204,
  },
  {
    op: 'Write',
    scope: 'write:tuples',
    method: 'POST',
    path: '/stores/{S}/write',
    body: {
      writes: {
        tuple_keys: [{ user: 'user:scope-test', relation: 'viewer', object: 'doc:9' }],
        on_duplicate: 'ignore',
      },
    },
    ok: 200,
  },
  { op: 'Read', scope: 'read:tuples', method: 'POST', path: '/stores/{S}/read', body: {}, ok: 200 },
  { op: 'ReadChanges', scope: 'read:changes', method: 'GET', path: '/stores/{S}/changes', ok: 200 },
  { op: 'Watch', scope: 'read:changes', method: 'GET', path: '/stores/{S}/watch', ok: 200, live: true },
  { op: 'Check', scope: 'check:tuples', method: 'POST', path: '/stores/{S}/check', body: { tuple_key: tk }, ok: 200 },
  {
    op: 'ExplainCheck',
    scope: 'check:tuples',
    method: 'POST',
    path: '/stores/{S}/check/explain',
    body: { tuple_key: tk },
    ok: 200,
  },
  {
    op: 'BatchCheck',
    scope: 'check:tuples',
    method: 'POST',
    path: '/stores/{S}/batch-check',
    body: { checks: [{ tuple_key: tk, correlation_id: 'c1' }] },
    ok: 200,
  },
  {
    op: 'Expand',
    scope: 'expand:tuples',
    method: 'POST',
    path: '/stores/{S}/expand',
    body: { tuple_key: { relation: 'viewer', object: 'doc:1' } },
    ok: 200,
  },
  {
    op: 'ListObjects',
    scope: 'list:objects',
    method: 'POST',
    path: '/stores/{S}/list-objects',
    body: { type: 'doc', relation: 'viewer', user: 'user:anne' },
    ok: 200,
  },
  {
    op: 'StreamedListObjects',
    scope: 'list:objects',
    method: 'POST',
    path: '/stores/{S}/streamed-list-objects',
    body: { type: 'doc', relation: 'viewer', user: 'user:anne' },
    ok: 200,
  },
  {
    op: 'ListUsers',
    scope: 'list:users',
    method: 'POST',
    path: '/stores/{S}/list-users',
    body: { object: { type: 'doc', id: '1' }, relation: 'viewer', user_filters: [{ type: 'user' }] },
    ok: 200,
  },
  {
    op: 'DeleteTuples',
    scope: 'write:tuples',
    method: 'POST',
    path: '/stores/{S}/delete-tuples',
    body: { filter: { object: 'doc:scope-delete' } },
    ok: 200,
  },
  {
    op: 'ImportTuples',
    scope: 'write:tuples',
    method: 'POST',
    path: '/stores/{S}/tuples/import',
    body: { tuple_keys: [{ user: 'user:scope-import', relation: 'viewer', object: 'doc:scope-import' }] },
    ok: 200,
  },
  { op: 'ExportTuples', scope: 'read:tuples', method: 'GET', path: '/stores/{S}/tuples/export', ok: 200 },
  {
    op: 'MigrateRelations',
    scope: 'write:tuples',
    method: 'POST',
    path: '/stores/{S}/migrate-relations',
    body: {
      maps: ['doc#viewer=doc#reader'],
      mode: 'dry_run',
      candidate: {
        schema_version: '1.1',
        type_definitions: [
          { type: 'user' },
          {
            type: 'doc',
            relations: { reader: { this: {} } },
            metadata: { relations: { reader: { directly_related_user_types: [{ type: 'user' }] } } },
          },
        ],
      },
    },
    ok: 200,
  },
  ...authzenCases(),
  { op: 'SearchStoreLogs', scope: 'search:logs', method: 'GET', path: '/stores/{S}/logs', ok: 200 },
];
