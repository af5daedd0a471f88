// Client management on a running server (client-credentials mode): `GET /clients`,
// `POST /clients`, `POST /clients/{client_id}/rotate` and `DELETE /clients/{client_id}` (revoke)
// as entries of the API endpoint table, made per server because they act on its ClientStore. The
// scope `manage:clients` on an account-level credential (store `*`) is checked by the gate before
// `parse` runs (docs/reference/decisions.md D1): a client created with it, or the operator's `--auth-admin-key`. A manager
// grants at most the scopes it holds itself, and rotates or revokes only clients whose scopes it
// holds (so it can neither mint nor take over a stronger client); `admin:clients` (the admin key)
// lifts that bound: the account administrator may mint any scopes (docs/auth.md).
// Example: POST /clients {"store_id":"01J…","scopes":["check:tuples"]} → 201 {client_id, client_secret, …}.

import { AppError } from '../../errors.js';
import { publicJwkProblem, type ClientRecord, type ClientStore } from '../../storage/auth/clients.js';
import { endpoint, ok, type Endpoint } from '../endpoint.js';
import { bodyObject } from '../stores.js';
import { isObj } from '../validate.js';
import { isScope } from './operations.js';
import type { Principal } from './principal.js';

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
  const problem = isObj(key) ? publicJwkProblem(key) : undefined;
  if (problem !== undefined) throw bad(`'public_key' must be a public JWK (${problem})`);
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

/** Refuses unless `p` may hand out (or take over) every one of `scopes` (see the file's header). */
function assertMayGrant(p: Principal | undefined, scopes: readonly string[]): void {
  if (p === undefined)
    throw new AppError('insufficient_permissions', 'client management needs an authenticated caller');
  if (p.scopes === 'all' || p.scopes.has('admin:clients')) return;
  const held = p.scopes;
  const missing = scopes.filter((s) => !held.has(s));
  if (missing.length > 0)
    throw new AppError(
      'insufficient_permissions',
      `a client may grant only scopes it holds itself (not: ${missing.slice(0, 5).join(', ')}); admin:clients grants any`,
    );
}

/** Replies that carry a client secret (RFC 6749 §5.1's rule for token replies). */
const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' } as const;

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
      async handle(input, ctx) {
        assertMayGrant(ctx.principal, input.scopes);
        const { client, secret } = await clients.create(input);
        // A private_key_jwt client has no secret; a reply with one is never stored by a cache.
        if (secret === undefined) return ok(clientView(client), 201);
        return { ...ok({ ...clientView(client), client_secret: secret }, 201), headers: NO_STORE };
      },
    }),
    endpoint<string>({
      name: 'RotateClient',
      op: 'rotate-client',
      method: 'post',
      path: '/clients/:client_id/rotate',
      parse: (req) => clientId(req.params.client_id),
      async handle(id, ctx) {
        const target = clients.get(id);
        assertMayGrant(ctx.principal, target?.scopes ?? []);
        if (target?.publicKey !== undefined && !target.revokedAt)
          throw bad('a private_key_jwt client authenticates with its key: it has no secret to rotate');
        const r = await clients.rotate(id);
        if (!r) throw notFound(id);
        return { ...ok({ ...clientView(r.client), client_secret: r.secret }), headers: NO_STORE };
      },
    }),
    endpoint<string>({
      name: 'RevokeClient',
      op: 'revoke-client',
      method: 'del',
      path: '/clients/:client_id',
      parse: (req) => clientId(req.params.client_id),
      async handle(id, ctx) {
        assertMayGrant(ctx.principal, clients.get(id)?.scopes ?? []);
        const c = await clients.revoke(id);
        if (!c) throw notFound(id);
        return ok(clientView(c));
      },
    }),
  ];
}
