// `latch cluster status` and `latch cluster drain NODE`: the placement registry of nodes started
// with `latch serve --placement` (docs/deployment.md), read and changed in PostgreSQL directly,
// so they work whichever nodes are up.

import { Db, describeStartError, PgClusterRegistry } from '../storage/postgres/index.js';
import type { ClusterMember } from '../storage/types.js';
import { type Args, type FlagSpec, UsageError } from './args.js';
import { type CliIo, type Command, postgresUrl, printJson } from './common.js';

const URL_FLAG: FlagSpec = {
  name: 'postgres-url',
  kind: 'string',
  value: '<url>',
  env: 'LATCH_POSTGRES_URL',
  help: 'postgres://user:password@host:port/database (the nodes’ database)',
};

/** The registry of `--postgres-url` for `fn`; a database that cannot be reached fails with its cause. */
async function withRegistry(
  args: Args,
  io: CliIo,
  what: string,
  fn: (r: PgClusterRegistry) => Promise<number>,
): Promise<number> {
  const url = postgresUrl(args);
  const db = new Db({ url, poolSize: 1 });
  try {
    return await fn(new PgClusterRegistry(db));
  } catch (err) {
    io.err(`latch cluster ${what}: ${describeStartError(url, err).message}\n`);
    return 1;
  } finally {
    await db.close();
  }
}

/** A member as status prints it. */
function memberView(m: ClusterMember): Record<string, unknown> {
  return {
    node_id: m.nodeId,
    url: m.url,
    capacity: m.capacity,
    live: m.leaseLeftMs > 0,
    draining: m.draining,
    lease_left_ms: Math.round(m.leaseLeftMs),
    stores_ready: m.ready.length,
    stores_loading: m.loading.length,
    ready: [...m.ready].sort(),
    loading: [...m.loading].sort(),
  };
}

const status: Command = {
  spec: {
    path: 'cluster status',
    summary: 'Members, leases, and the stores each holds (ready or loading)',
    positionals: [],
    flags: [
      URL_FLAG,
      {
        name: 'replicas',
        kind: 'string',
        value: '<k>',
        help: 'The nodes’ --replicas, to list stores served by fewer (default 2)',
      },
    ],
    examples: ['LATCH_POSTGRES_URL=postgres://latch:secret@db:5432/latch latch cluster status'],
  },
  run: (args, io) =>
    withRegistry(args, io, 'status', async (r) => {
      const k = Number(args.string('replicas') ?? 2);
      if (!Number.isInteger(k) || k < 1) throw new UsageError('--replicas must be a whole number ≥ 1');
      const members = await r.members();
      const stores = await r.storeIds();
      const held = new Map<string, number>();
      for (const m of members) if (m.leaseLeftMs > 0) for (const s of m.ready) held.set(s, (held.get(s) ?? 0) + 1);
      printJson(io, {
        members: members.map(memberView),
        stores: stores.length,
        under_replicated: stores.filter((s) => (held.get(s) ?? 0) < k),
      });
      return 0;
    }),
};

const drain: Command = {
  spec: {
    path: 'cluster drain',
    summary: 'Move every store off a node before it is removed (it keeps forwarding)',
    positionals: [{ name: 'node_id', help: 'The node, as `latch cluster status` names it' }],
    flags: [URL_FLAG],
    details:
      'The node stops owning stores: their other owners and the nodes that take its share load them,\n' +
      'and it drops each once its new owners serve it. `latch cluster status` shows it emptied\n' +
      '(stores_ready 0); then stop it. A drained node that restarts registers afresh and owns stores again.',
    examples: ['latch cluster drain 10.0.0.7:8080 --postgres-url postgres://latch:secret@db:5432/latch'],
  },
  run: (args, io) =>
    withRegistry(args, io, 'drain', async (r) => {
      const id = args.arg('node_id') as string;
      if (!(await r.drain(id))) {
        io.err(`latch cluster drain: no member '${id}'\n`);
        return 1;
      }
      io.out(`draining ${id}\n`);
      return 0;
    }),
};

export const clusterCommands: readonly Command[] = [status, drain];
