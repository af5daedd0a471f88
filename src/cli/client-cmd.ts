// `latch client create|list|rotate|revoke`: the OAuth clients of latch's built-in token issuer
// (client-credentials mode), kept in `<data-dir>/auth` by src/storage/auth. That database is
// LevelDB, one process at a time: run these with the server stopped (a running server holds the
// lock, and the command says so). With --postgres-url (LATCH_POSTGRES_URL) they work on the
// PostgreSQL datastore instead, servers running. A clear secret is printed once, on stdout, and
// never stored.

import { readFile } from 'node:fs/promises';
import { isScope, SCOPES } from '../api/auth/operations.js';
import { authDbPath } from '../api/auth/service.js';
import { ClientStore, type ClientRecord } from '../storage/auth/clients.js';
import { openAuthKv } from '../storage/auth/kv.js';
import { type Args, type FlagSpec, UsageError } from './args.js';
import { type Command, printJson } from './common.js';
import { isObject } from './tuple-file.js';

const DATA_DIR: FlagSpec = { name: 'data-dir', kind: 'string', value: '<dir>', env: 'LATCH_DATA_DIR', default: './data', help: 'Server data directory (clients live in <dir>/auth)' };
const POSTGRES_URL: FlagSpec = { name: 'postgres-url', kind: 'string', value: '<url>', env: 'LATCH_POSTGRES_URL', help: 'With --datastore postgres: the database (the servers may keep running; they see the change within a second)' };
const STORE_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** What is shown of a client: never the secret hash. */
function view(c: ClientRecord): Record<string, unknown> {
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

async function withClients<T>(args: Args, fn: (clients: ClientStore) => Promise<T>): Promise<T> {
  const url = args.string('postgres-url');
  const kv = await openAuthKv(authDbPath(args.string('data-dir') ?? './data'), url ? { options: { url, poolSize: 1 }, table: 'latch_auth' } : undefined);
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
      { name: 'store', kind: 'string', value: '<store_id|*>', help: "Store the client's tokens are bound to; * = every store (required)" },
      { name: 'scopes', kind: 'string', value: '<s1,s2,…>', help: `Comma-separated scopes (required): ${SCOPES.join(', ')}` },
      { name: 'name', kind: 'string', value: '<text>', help: 'A label' },
      { name: 'public-key', kind: 'string', value: '<jwk.json>', help: 'Public JWK for private_key_jwt client authentication' },
      DATA_DIR,
      POSTGRES_URL,
    ],
    examples: ['latch client create --store 01J… --scopes check:tuples,read:tuples --name web-app', "latch client create --store '*' --scopes create:stores,read:stores"],
  },
  async run(args, io) {
    const store = args.require('store');
    if (store !== '*' && !STORE_ID.test(store)) throw new UsageError(`--store must be a store id or *, got '${store}'`);
    const scopes = args.require('scopes').split(',').map((s) => s.trim()).filter(Boolean);
    const unknown = scopes.filter((s) => !isScope(s));
    if (scopes.length === 0 || unknown.length > 0) throw new UsageError(`--scopes needs known scopes${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`);
    let publicKey: Record<string, unknown> | undefined;
    const keyFile = args.string('public-key');
    if (keyFile !== undefined) {
      const jwk: unknown = JSON.parse(await readFile(keyFile, 'utf8'));
      if (!isObject(jwk)) throw new UsageError('--public-key must be a JWK (a JSON object)');
      if ('d' in jwk || 'k' in jwk) throw new UsageError('--public-key must be a public JWK (it contains private material)');
      publicKey = jwk;
    }
    const { client, secret } = await withClients(args, (c) => c.create({ storeId: store, scopes, name: args.string('name'), publicKey }));
    printJson(io, { ...view(client), client_secret: secret });
    return 0;
  },
};

const list: Command = {
  spec: { path: 'client list', summary: 'List the clients (without secrets)', positionals: [], flags: [DATA_DIR, POSTGRES_URL] },
  async run(args, io) {
    printJson(io, { clients: await withClients(args, async (c) => c.list().map(view)) });
    return 0;
  },
};

const rotate: Command = {
  spec: {
    path: 'client rotate',
    summary: 'Give a client a new secret; the old one stops working at once',
    positionals: [{ name: 'client_id', help: 'The client' }],
    flags: [DATA_DIR, POSTGRES_URL],
  },
  async run(args, io) {
    const id = args.arg('client_id') as string;
    const r = await withClients(args, (c) => c.rotate(id));
    if (!r) throw new Error(`no active client '${id}'`);
    printJson(io, { ...view(r.client), client_secret: r.secret });
    return 0;
  },
};

const revoke: Command = {
  spec: {
    path: 'client revoke',
    summary: 'Revoke a client: no new tokens, and its live tokens are refused',
    positionals: [{ name: 'client_id', help: 'The client' }],
    flags: [DATA_DIR, POSTGRES_URL],
  },
  async run(args, io) {
    const id = args.arg('client_id') as string;
    const c = await withClients(args, (s) => s.revoke(id));
    if (!c) throw new Error(`no client '${id}'`);
    printJson(io, view(c));
    return 0;
  },
};

export const clientCommands: readonly Command[] = [create, list, rotate, revoke];
