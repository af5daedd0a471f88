// Client management on a running server (client-credentials mode): `GET /clients`,
// `POST /clients`, `POST /clients/{client_id}/rotate` and `DELETE /clients/{client_id}` (revoke)
// as entries of the API endpoint table, made per server because they act on its ClientStore. The
// scope `manage:clients` on an account-level credential (store `*`) is checked by the gate before
// `parse` runs (docs/reference/decisions.md D1): a client created with it, or the operator's `--auth-admin-key`.
// Example: POST /clients {"store_id":"01J…","scopes":["check:tuples"]} → 201 {client_id, client_secret, …}.

import { AppError } from '../../errors.js';
import type { ClientRecord, ClientStore } from '../../storage/auth/clients.js';
import { endpoint, ok, type Endpoint } from '../endpoint.js';
import { bodyObject } from '../stores.js';
import { isObj } from '../validate.js';
import { isScope } from './operations.js';

const STORE_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const CLIENT_ID = /^[A-Za-z0-9]{1,64}$/;
const MAX_NAME = 256;

/** What is shown of a client (the command line prints the same): never the secret hash. */
export function clientView(c: ClientRecord): Record<string, unknown> {
  return {
    client_id: c.id,
    store_id: c.storeId,
    scopes: c.scopes,
    name: c.name ?? '',
    private_key_jwt: c.publicKey !== undefined,
    created_at: c.createdAt,
    rotated_at: c.rotatedAt ?? null,
    revoked_at: c.revokedAt ?? null,
  };
}

interface CreateInput {
  readonly storeId: string;
  readonly scopes: string[];
  readonly name: string | undefined;
  readonly publicKey: Record<string, unknown> | undefined;
}

const bad = (message: string): AppError => new AppError('validation_error', message);

function parseCreate(body: Record<string, unknown>): CreateInput {
  const store = body.store_id;
  if (typeof store !== 'string' || (store !== '*' && !STORE_ID.test(store)))
    throw bad("'store_id' must be a store id or '*'");
  const scopes = body.scopes;
  if (
    !Array.isArray(scopes) ||
    scopes.length === 0 ||
    scopes.length > 64 ||
    !scopes.every((s) => typeof s === 'string')
  ) {
    throw bad("'scopes' must be a non-empty list of scopes");
  }
  const unknown = (scopes as string[]).filter((s) => !isScope(s));
  if (unknown.length > 0) throw bad(`unknown scopes: ${unknown.slice(0, 5).join(', ')}`);
  const name = body.name;
  if (name !== undefined && (typeof name !== 'string' || name.length > MAX_NAME))
    throw bad(`'name' must be a string of at most ${MAX_NAME} characters`);
  const key = body.public_key;
  if (key !== undefined && (!isObj(key) || typeof key.kty !== 'string')) throw bad("'public_key' must be a public JWK");
  if (isObj(key) && ('d' in key || 'k' in key))
    throw bad("'public_key' must be a public JWK (it contains private material)");
  return {
    storeId: store,
    scopes: scopes as string[],
    name: name as string | undefined,
    publicKey: key as Record<string, unknown> | undefined,
  };
}

function clientId(value: string | undefined): string {
  if (value === undefined || !CLIENT_ID.test(value)) throw bad('invalid client id');
  return value;
}

const notFound = (id: string): AppError => new AppError('resource_not_found', `no client '${id}'`);

export function clientEndpoints(clients: ClientStore): Endpoint[] {
  return [
    endpoint<Record<string, never>>({
      name: 'ListClients',
      op: 'list-clients',
      method: 'get',
      path: '/clients',
      parse: () => ({}),
      handle: async () => ok({ clients: clients.list().map(clientView) }),
    }),
    endpoint<CreateInput>({
      name: 'CreateClient',
      op: 'create-client',
      method: 'post',
      path: '/clients',
      parse: (req) => parseCreate(bodyObject(req)),
      async handle(input) {
        const { client, secret } = await clients.create(input);
        return ok({ ...clientView(client), client_secret: secret }, 201);
      },
    }),
    endpoint<string>({
      name: 'RotateClient',
      op: 'rotate-client',
      method: 'post',
      path: '/clients/:client_id/rotate',
      parse: (req) => clientId(req.params.client_id),
      async handle(id) {
        const r = await clients.rotate(id);
        if (!r) throw notFound(id);
        return ok({ ...clientView(r.client), client_secret: r.secret });
      },
    }),
    endpoint<string>({
      name: 'RevokeClient',
      op: 'revoke-client',
      method: 'del',
      path: '/clients/:client_id',
      parse: (req) => clientId(req.params.client_id),
      async handle(id) {
        const c = await clients.revoke(id);
        if (!c) throw notFound(id);
        return ok(clientView(c));
      },
    }),
  ];
}
