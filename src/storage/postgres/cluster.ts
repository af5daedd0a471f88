// The placement registry on PostgreSQL (`latch_cluster_members`, schema step 4): one row per
// node with its address, capacity, lease and the stores it holds. Leases are timed by the
// database's clock (`now()`), so nodes' clocks never decide who is a member. A heartbeat is one
// upsert and one read of every row; holdings ride in the row as two arrays, so a node's report
// is atomic and a lapsed node's holdings vanish with its lease.

import type { ClusterHeartbeat, ClusterMember, ClusterRegistry } from '../types.js';
import { num, type Db, type Row } from './db.js';

const SELECT = `SELECT node_id, url, capacity, draining,
  (EXTRACT(EPOCH FROM (lease_until - now())) * 1000)::float8, ready, loading
  FROM latch_cluster_members ORDER BY node_id`;

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
  constructor(private readonly db: Db) {}

  async heartbeat(b: ClusterHeartbeat): Promise<ClusterMember[]> {
    // `draining` is left as it is: only `drain` sets it, and a restarted node registers afresh.
    await this.db.exec(
      `INSERT INTO latch_cluster_members (node_id, url, capacity, lease_until, ready, loading)
       VALUES ($1, $2, $3, now() + make_interval(secs => $4::float8 / 1000), $5, $6)
       ON CONFLICT (node_id) DO UPDATE SET url = EXCLUDED.url, capacity = EXCLUDED.capacity,
         lease_until = EXCLUDED.lease_until, ready = EXCLUDED.ready, loading = EXCLUDED.loading`,
      [b.nodeId, b.url, b.capacity, b.leaseMs, b.ready, b.loading],
    );
    return this.members();
  }

  async members(): Promise<ClusterMember[]> {
    return (await this.db.rows(SELECT)).map(member);
  }

  async storeIds(): Promise<string[]> {
    return (await this.db.rows('SELECT id FROM latch_stores WHERE deleted_ms IS NULL ORDER BY id')).map(
      (r) => r[0] as string,
    );
  }

  async drain(nodeId: string): Promise<boolean> {
    return (await this.db.exec('UPDATE latch_cluster_members SET draining = true WHERE node_id = $1', [nodeId])) > 0;
  }

  async leave(nodeId: string): Promise<void> {
    await this.db.exec('DELETE FROM latch_cluster_members WHERE node_id = $1', [nodeId]);
  }
}
