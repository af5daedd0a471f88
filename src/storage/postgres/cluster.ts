// The placement registry on PostgreSQL (`latch_cluster_members`, schema step 1): one row per
// node with its address, capacity, lease and the stores it holds. Leases are timed by the
// database's clock (`now()`), so nodes' clocks never decide who is a member. A heartbeat is one
// statement: the upsert of this node's row and a read of every row; holdings ride in the row as
// two arrays, so a node's report is atomic and a lapsed node's holdings vanish with its lease.
//
// A node's registry has a connection of its own (`PgClusterRegistry.dedicated`), apart from the
// storage pool: a lease renewal never waits behind checkpoint reads or writes, however many
// stores the node is loading. Its commits do not wait for the WAL flush (synchronous_commit off):
// a renewal lost to a database crash is the next renewal's to make, a third of a lease later.

import type { ClusterHeartbeat, ClusterMember, ClusterRegistry } from '../types.js';
import { Db, num, type PostgresOptions, type Row } from './db.js';

const COLUMNS = `node_id, url, capacity, draining,
  (EXTRACT(EPOCH FROM (lease_until - now())) * 1000)::float8, ready, loading`;
const SELECT = `SELECT ${COLUMNS} FROM latch_cluster_members ORDER BY node_id`;
// The statement's snapshot is taken before the upsert: every other row from the table, this
// node's from the upsert's RETURNING.
const HEARTBEAT = `WITH up AS (
    INSERT INTO latch_cluster_members (node_id, url, capacity, lease_until, ready, loading)
    VALUES ($1, $2, $3, now() + make_interval(secs => $4::float8 / 1000), $5, $6)
    ON CONFLICT (node_id) DO UPDATE SET url = EXCLUDED.url, capacity = EXCLUDED.capacity,
      lease_until = EXCLUDED.lease_until, ready = EXCLUDED.ready, loading = EXCLUDED.loading
    RETURNING node_id, url, capacity, draining, lease_until, ready, loading)
  SELECT ${COLUMNS} FROM up
  UNION ALL SELECT ${COLUMNS} FROM latch_cluster_members WHERE node_id <> $1
  ORDER BY 1`;

function member(r: Row): ClusterMember {
  return {
    nodeId: r[0] as string,
    url: r[1] as string,
    capacity: num(r[2]),
    draining: r[3] === true,
    leaseLeftMs: num(r[4]),
    ready: (r[5] as string[] | null) ?? [],
    loading: (r[6] as string[] | null) ?? [],
  };
}

export class PgClusterRegistry implements ClusterRegistry {
  private opened: Db | undefined;

  /** Over `db` (the CLI's one connection), or over a connection opened on first use by `open`. */
  constructor(private readonly db: Db | (() => Db)) {}

  /**
   * A node's registry: one connection of its own to `options.url` (opened at the first call,
   * closed by `close`), commits without waiting for the WAL flush.
   */
  static dedicated(options: PostgresOptions): PgClusterRegistry {
    return new PgClusterRegistry(
      () => new Db({ ...options, poolSize: 1, connectionOptions: '-c synchronous_commit=off' }),
    );
  }

  private get conn(): Db {
    if (typeof this.db !== 'function') return this.db;
    this.opened ??= this.db();
    return this.opened;
  }

  async heartbeat(b: ClusterHeartbeat): Promise<ClusterMember[]> {
    // `draining` is left as it is: only `drain` sets it, and a restarted node registers afresh.
    return (await this.conn.rows(HEARTBEAT, [b.nodeId, b.url, b.capacity, b.leaseMs, b.ready, b.loading])).map(member);
  }

  async members(): Promise<ClusterMember[]> {
    return (await this.conn.rows(SELECT)).map(member);
  }

  async storeIds(): Promise<string[]> {
    return (await this.conn.rows('SELECT id FROM latch_stores WHERE deleted_ms IS NULL ORDER BY id')).map(
      (r) => r[0] as string,
    );
  }

  async drain(nodeId: string): Promise<boolean> {
    return (await this.conn.exec('UPDATE latch_cluster_members SET draining = true WHERE node_id = $1', [nodeId])) > 0;
  }

  async leave(nodeId: string): Promise<void> {
    await this.conn.exec('DELETE FROM latch_cluster_members WHERE node_id = $1', [nodeId]);
  }

  /** Closes the connection this registry opened (a `Db` it was given is its owner's to close). */
  async close(): Promise<void> {
    const db = this.opened;
    this.opened = undefined;
    await db?.close();
  }
}
