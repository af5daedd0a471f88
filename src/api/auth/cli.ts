// `latch client …`: manage the built-in issuer's OAuth clients in `<data-dir>/auth`.
// The auth DB is LevelDB (one process at a time): run these with the server stopped; a running
// server holds the lock and the command says so. The clear secret is printed once, on stdout.

import { readFile } from 'node:fs/promises';
import { ClientStore, type ClientRecord } from '../../storage/auth/clients.js';
import { openAuthKv } from '../../storage/auth/kv.js';
import { isScope, SCOPES } from './operations.js';
import { authDbPath } from './service.js';

export const CLIENT_HELP = `Usage: latch client <command> [options]

Commands:
  create --store <store_id|*> --scopes <s1,s2,…> [--name <text>] [--public-key <jwk.json>]
  list
  rotate <client_id>     New secret; the old one stops working at once
  revoke <client_id>     Refuse new tokens and every live token of the client

Options:
  --data-dir <dir>       Server data directory (default ./data)

Scopes: ${SCOPES.join(', ')}
A store of '*' makes an account-level client (every store, and ListStores/CreateStore).
`;

function flags(args: readonly string[]): { values: Map<string, string>; rest: string[] } {
  const values = new Map<string, string>();
  const rest: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (!a.startsWith('--')) {
      rest.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq === -1 ? a : a.slice(0, eq);
    const value = eq === -1 ? args[++i] : a.slice(eq + 1);
    if (value === undefined) throw new Error(`option ${name} needs a value`);
    values.set(name, value);
  }
  return { values, rest };
}

/** Public view of a record: never the hash. */
function view(c: ClientRecord): Record<string, unknown> {
  return {
    client_id: c.id, store_id: c.storeId, scopes: c.scopes, name: c.name ?? '', private_key_jwt: c.publicKey !== undefined,
    created_at: c.createdAt, rotated_at: c.rotatedAt ?? null, revoked_at: c.revokedAt ?? null,
  };
}

async function run(args: readonly string[], out: (s: string) => void): Promise<number> {
  const [command, ...restArgs] = args;
  const { values, rest } = flags(restArgs);
  const kv = await openAuthKv(authDbPath(values.get('--data-dir') ?? './data'));
  try {
    const clients = await ClientStore.open(kv);
    if (command === 'list') {
      out(JSON.stringify(clients.list().map(view), null, 2));
      return 0;
    }
    if (command === 'create') {
      const store = values.get('--store');
      const scopes = (values.get('--scopes') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
      if (!store || !(store === '*' || /^[0-9A-HJKMNP-TV-Z]{26}$/.test(store))) throw new Error('--store must be a store id or *');
      const unknown = scopes.filter((s) => !isScope(s));
      if (scopes.length === 0 || unknown.length > 0) throw new Error(`--scopes needs known scopes${unknown.length ? `; unknown: ${unknown.join(', ')}` : ''}`);
      const keyFile = values.get('--public-key');
      const publicKey = keyFile ? (JSON.parse(await readFile(keyFile, 'utf8')) as Record<string, unknown>) : undefined;
      if (publicKey && ('d' in publicKey || 'k' in publicKey)) throw new Error('--public-key must be a public JWK (it contains private material)');
      const { client, secret } = await clients.create({ storeId: store, scopes, name: values.get('--name'), publicKey });
      out(JSON.stringify({ ...view(client), client_secret: secret }, null, 2));
      return 0;
    }
    if (command === 'rotate' || command === 'revoke') {
      const id = rest[0];
      if (!id) throw new Error(`${command} needs a client id`);
      if (command === 'rotate') {
        const r = await clients.rotate(id);
        if (!r) throw new Error(`no active client '${id}'`);
        out(JSON.stringify({ ...view(r.client), client_secret: r.secret }, null, 2));
      } else {
        const c = await clients.revoke(id);
        if (!c) throw new Error(`no client '${id}'`);
        out(JSON.stringify(view(c), null, 2));
      }
      return 0;
    }
    throw new Error(`unknown client command '${command ?? ''}'`);
  } finally {
    await kv.close();
  }
}

/** Entry point of `latch client`; returns the exit code (0 ok, 1 failure, 2 usage). */
export async function clientCommand(args: readonly string[]): Promise<number> {
  if (args.length === 0 || args.includes('--help') || args.includes('-h')) {
    process.stdout.write(CLIENT_HELP);
    return args.length === 0 ? 2 : 0;
  }
  try {
    return await run(args, (s) => process.stdout.write(s + '\n'));
  } catch (err) {
    process.stderr.write(`latch client: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
