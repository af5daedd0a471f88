// Every authenticated operation of the API, the OAuth scope it needs (docs/reference/http-api.md §2, §5), whether
// it is bound to a store, and its rate-limit class (docs/reference/decisions.md D7). Operation names are the endpoint names
// of src/api (`Check`, `Write`, …), so the HTTP layer passes `endpoint.name` as is.
// Example: a token with scope `check:tuples` bound to store S may call Check on S only.

export const SCOPES = [
  'admin:clients',
  'check:tuples',
  'create:stores',
  'delete:stores',
  'expand:tuples',
  'list:objects',
  'list:users',
  'manage:clients',
  'manage:decisions',
  'manage:indexes',
  'read:assertions',
  'read:authorization_models',
  'read:changes',
  'read:expansions',
  'read:indexes',
  'read:stores',
  'read:tuples',
  'search:decisions',
  'search:logs',
  'write:assertions',
  'write:authorization_models',
  'write:tuples',
] as const;

export type Scope = (typeof SCOPES)[number];

export function isScope(s: string): s is Scope {
  return (SCOPES as readonly string[]).includes(s);
}

export type OpClass =
  | 'stores'
  | 'model-read'
  | 'model-write'
  | 'assertions'
  | 'read'
  | 'write'
  | 'read-changes'
  | 'check'
  | 'expand'
  | 'list-objects'
  | 'list-users'
  | 'logs'
  | 'indexes';

export interface OperationRule {
  /** Scope required; `null` = any authenticated caller (only the unimplemented UpdateStore). */
  readonly scope: Scope | null;
  /** True when the path carries `{store_id}` and a token's store binding applies. */
  readonly storeScoped: boolean;
  readonly opClass: OpClass;
  /** Only an account-level credential (store `*`) may call it, though the path names a store. */
  readonly accountLevel?: boolean;
}

const rule = (scope: Scope | null, opClass: OpClass, storeScoped = true, accountLevel = false): OperationRule => ({
  scope,
  storeScoped,
  opClass,
  ...(accountLevel ? { accountLevel } : {}),
});

export const OPERATIONS = {
  ListStores: rule('read:stores', 'stores', false),
  CreateStore: rule('create:stores', 'stores', false),
  GetStore: rule('read:stores', 'stores'),
  DeleteStore: rule('delete:stores', 'stores'),
  UpdateStore: rule(null, 'stores'),
  ReadAuthorizationModels: rule('read:authorization_models', 'model-read'),
  WriteAuthorizationModel: rule('write:authorization_models', 'model-write'),
  ReadAuthorizationModel: rule('read:authorization_models', 'model-read'),
  // latch's impact of a candidate model: it shows who holds which relation on every object.
  ImpactAuthorizationModel: rule('read:tuples', 'read'),
  // latch's shadow evaluation (docs/changing-models.md): setting or clearing the shadow changes
  // which model sampled requests are also evaluated under, like a model write; the report names
  // users and objects with their answers, so it needs what Read needs.
  WriteShadowModel: rule('write:authorization_models', 'model-write'),
  DeleteShadowModel: rule('write:authorization_models', 'model-write'),
  ReadShadowModel: rule('read:authorization_models', 'model-read'),
  ReadShadowReport: rule('read:tuples', 'read'),
  ReadAssertions: rule('read:assertions', 'assertions'),
  WriteAssertions: rule('write:assertions', 'assertions'),
  Write: rule('write:tuples', 'write'),
  DeleteTuples: rule('write:tuples', 'write'),
  // latch's relation migrations: ordinary tuple writes, in steps.
  MigrateRelations: rule('write:tuples', 'write'),
  // latch's bulk import and export (docs/operations.md): a tuple write, and a read of every tuple.
  ImportTuples: rule('write:tuples', 'write'),
  ExportTuples: rule('read:tuples', 'read'),
  Read: rule('read:tuples', 'read'),
  ReadChanges: rule('read:changes', 'read-changes'),
  Watch: rule('read:changes', 'read-changes'),
  Check: rule('check:tuples', 'check'),
  BatchCheck: rule('check:tuples', 'check'),
  ExplainCheck: rule('check:tuples', 'check'),
  Expand: rule('expand:tuples', 'expand'),
  ListObjects: rule('list:objects', 'list-objects'),
  StreamedListObjects: rule('list:objects', 'list-objects'),
  ListUsers: rule('list:users', 'list-users'),
  Evaluation: rule('check:tuples', 'check'),
  Evaluations: rule('check:tuples', 'check'),
  SubjectSearch: rule('list:users', 'list-users'),
  ResourceSearch: rule('list:objects', 'list-objects'),
  ActionSearch: rule('check:tuples', 'check'),
  GetConfiguration: rule('read:stores', 'stores'),
  SearchStoreLogs: rule('search:logs', 'logs'),
  // latch's decision log (docs/audit.md): the recorded requests hold tuple keys and contexts.
  SearchDecisions: rule('search:decisions', 'logs'),
  ExplainDecision: rule('search:decisions', 'logs'),
  ReadDecisionLog: rule('search:decisions', 'logs'),
  WriteDecisionLog: rule('manage:decisions', 'logs'),
  ListIndexes: rule('read:indexes', 'indexes'),
  GetIndex: rule('read:indexes', 'indexes'),
  ReadExpansions: rule('read:expansions', 'indexes'),
  // latch's permission index management: account-level credentials only (docs/auth.md).
  CreateIndex: rule('manage:indexes', 'indexes', true, true),
  DeleteIndex: rule('manage:indexes', 'indexes', true, true),
  // latch's client management (client-credentials mode): account-level credentials only.
  ListClients: rule('manage:clients', 'stores', false),
  CreateClient: rule('manage:clients', 'stores', false),
  RotateClient: rule('manage:clients', 'stores', false),
  RevokeClient: rule('manage:clients', 'stores', false),
} as const satisfies Record<string, OperationRule>;

export type Operation = keyof typeof OPERATIONS;

/** Routes that never authenticate: health probes, the token endpoint and the JWKS. */
export const PUBLIC_ROUTES: ReadonlySet<string> = new Set(['Health', 'Ready', 'Token', 'Jwks']);

export function isOperation(name: string): name is Operation {
  return Object.prototype.hasOwnProperty.call(OPERATIONS, name);
}

/** The msgpack channel's op names (`check`, `read-changes`, …) → operation. */
export function operationOfChannelOp(op: string): Operation | undefined {
  const name = op
    .split('-')
    .map((w) => (w[0] ?? '').toUpperCase() + w.slice(1))
    .join('');
  return isOperation(name) ? name : undefined;
}
