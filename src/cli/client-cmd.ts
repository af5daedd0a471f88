// `latch client create|list|rotate|revoke`: the OAuth clients of latch's built-in token issuer
// (client-credentials mode). With `--api-url` they go to the running server's `/clients`
// endpoints, authenticated by an account-level credential with the scope `manage:clients` (a
// client's token, or the operator's `--auth-admin-key` as `--api-token`): this works with
// `--datastore memory` too. Otherwise they work on the auth database itself: `<data-dir>/auth`
// (LevelDB, one process at a time, so only while the server is stopped: a running server holds
// the lock, and the command says so), or with --postgres-url (LATCH_POSTGRES_URL) the PostgreSQL
// datastore, servers running. A clear secret is printed once, on stdout, and never stored.

import { readFile } from 'node:fs/promises';
import { clientView } from '../api/auth/clients-endpoint.js';
import { isScope, SCOPES } from '../api/auth/operations.js';
import { authDbPath } from '../api/auth/service.js';
import { ClientStore, publicJwkProblem, type ClientRecord } from '../storage/auth/clients.js';
import { openAuthKv } from '../storage/auth/kv.js';
import { type Args, type FlagSpec, UsageError } from './args.js';
import { type Command, SERVER_FLAGS, clientFrom, printJson } from './common.js';
import type { FgaHttpClient } from './http-client.js';
import { isObject } from './tuple-file.js';

const DATA_DIR: FlagSpec = {
  name: 'data-dir',
  kind: 'string',
  value: '<dir>',
  env: 'LATCH_DATA_DIR',
  default: './data',
  help: 'Server data directory (clients live in <dir>/auth); used without --api-url, server stopped',
};
const POSTGRES_URL: FlagSpec = {
  name: 'postgres-url',
  kind: 'string',
  value: '<url>',
  env: 'LATCH_POSTGRES_URL',
  help: 'With --datastore postgres: the database (the servers may keep running; they see the change within a second)',
};
/** Where the clients are: a running server (`--api-url`, its credentials), or the auth database. */
const WHERE: readonly FlagSpec[] = [DATA_DIR, POSTGRES_URL, ...SERVER_FLAGS];
const STORE_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

const view = (c: ClientRecord): Record<string, unknown> => clientView(c);

/** The running server's client API when `--api-url` is given, else undefined (offline). */
function server(args: Args): FgaHttpClient | undefined {
  return args.has('api-url') ? clientFrom(args) : undefined;
}

async function withClients<T>(args: Args, fn: (clients: ClientStore) => Promise<T>): Promise<T> {
  const url = args.string('postgres-url');
  const kv = await openAuthKv(
    authDbPath(args.string('data-dir') ?? './data'),
    url ? { options: { url, poolSize: 1 }, table: 'latch_auth' } : undefined,
  );
  try {
    return await fn(await ClientStore.open(kv));
  } finally {
    await kv.close();
  }
}

const create: Command = {
  spec: {
    path: 'client create',
    summary: 'Register a client; prints its id and its secret (shown once)',
    positionals: [],
    flags: [
      {
        name: 'store',
        kind: 'string',
        value: '<store_id|*>',
        help: "Store the client's tokens are bound to; * = every store (required)",
      },
      {
        name: 'scopes',
        kind: 'string',
        value: '<s1,s2,…>',
        help: `Comma-separated scopes (required): ${SCOPES.join(', ')}`,
      },
      { name: 'name', kind: 'string', value: '<text>', help: 'A label' },
      {
        name: 'public-key',
        kind: 'string',
        value: '<jwk.json>',
        help: 'Public JWK for private_key_jwt client authentication',
      },
      ...WHERE,
    ],
    examples: [
      'latch client create --store 01J… --scopes check:tuples,read:tuples --name web-app',
      "latch client create --store '*' --scopes create:stores,read:stores",
      'latch client create --api-url http://127.0.0.1:8080 --api-token $LATCH_AUTH_ADMIN_KEY --store 01J… --scopes check:tuples',
    ],
  },
  async run(args, io) {
    const store = args.require('store');
    if (store !== '*' && !STORE_ID.test(store)) throw new UsageError(`--store must be a store id or *, got '${store}'`);
    const scopes = args
      .require('scopes')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const unknown = scopes.filter((s) => !isScope(s));
    if (scopes.length === 0 || unknown.length > 0)
      throw new UsageError(`--scopes needs known scopes${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`);
    let publicKey: Record<string, unknown> | undefined;
    const keyFile = args.string('public-key');
    if (keyFile !== undefined) {
      const jwk: unknown = JSON.parse(await readFile(keyFile, 'utf8'));
      if (!isObject(jwk)) throw new UsageError('--public-key must be a JWK (a JSON object)');
      const problem = publicJwkProblem(jwk);
      if (problem !== undefined) throw new UsageError(`--public-key must be a public JWK (${problem})`);
      publicKey = jwk;
    }
    const name = args.string('name');
    const remote = server(args);
    if (remote) {
      printJson(
        io,
        await remote.createClient({
          store_id: store,
          scopes,
          ...(name !== undefined ? { name } : {}),
          ...(publicKey ? { public_key: publicKey } : {}),
        }),
      );
      return 0;
    }
    const { client, secret } = await withClients(args, (c) => c.create({ storeId: store, scopes, name, publicKey }));
    printJson(io, secret === undefined ? view(client) : { ...view(client), client_secret: secret });
    return 0;
  },
};

const list: Command = {
  spec: { path: 'client list', summary: 'List the clients (without secrets)', positionals: [], flags: [...WHERE] },
  async run(args, io) {
    const remote = server(args);
    printJson(io, {
      clients: remote ? await remote.listClients() : await withClients(args, async (c) => c.list().map(view)),
    });
    return 0;
  },
};

/**
 * A command on one named client: through the server with --api-url, else on the auth database;
 * `local` answers undefined when there is no such client, and `missing` says so.
 */
function oneClient(
  path: string,
  summary: string,
  missing: string,
  remote: (api: FgaHttpClient, id: string) => Promise<unknown>,
  local: (clients: ClientStore, id: string) => Promise<Record<string, unknown> | undefined>,
): Command {
  return {
    spec: { path, summary, positionals: [{ name: 'client_id', help: 'The client' }], flags: [...WHERE] },
    async run(args, io) {
      const id = args.arg('client_id') as string;
      const api = server(args);
      printJson(
        io,
        api
          ? await remote(api, id)
          : await withClients(args, async (c) => {
              const r = await local(c, id);
              if (!r) throw new Error(`${missing} '${id}'`);
              return r;
            }),
      );
      return 0;
    },
  };
}

const rotate = oneClient(
  'client rotate',
  'Give a client a new secret; the old one stops working at once',
  'no active client',
  (api, id) => api.rotateClient(id),
  async (c, id) => {
    const r = await c.rotate(id);
    return r && { ...view(r.client), client_secret: r.secret };
  },
);

const revoke = oneClient(
  'client revoke',
  'Revoke a client: no new tokens, and its live tokens are refused',
  'no client',
  (api, id) => api.revokeClient(id),
  async (c, id) => {
    const r = await c.revoke(id);
    return r && view(r);
  },
);

export const clientCommands: readonly Command[] = [create, list, rotate, revoke];
