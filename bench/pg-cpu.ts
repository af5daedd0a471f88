// PostgreSQL's own CPU for a benchmark: the CPU time of every backend of one database, read from
// /proc (so only for a server on this machine: the embedded one). Backends come and go with the
// pools; a sampler keeps the set current every 200 ms and the total sums each backend's last
// reading, so a backend that exited keeps what it used.

import { readFileSync } from 'node:fs';
import pg from 'pg';

/** CPU time (ms) the process `pid` has used (user + system), from /proc. */
export function processCpuMs(pid: number): number {
  const fields = (readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1] ?? '').split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export interface DatabaseCpu {
  /** CPU (ms) of the database's backends so far; differences of two readings are what counts. */
  read(): number;
  /**
   * The part of `read()` spent by autovacuum workers: work a bulk delete leaves behind, which
   * lands in whichever round the daemon happens to start in.
   */
  readVacuum(): number;
  close(): Promise<void>;
}

export async function databaseCpu(dbUrl: string): Promise<DatabaseCpu> {
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  const seen = new Map<number, number>();
  const vacuum = new Set<number>();
  const sample = (pid: number): void => {
    try {
      seen.set(pid, processCpuMs(pid));
    } catch {
      // exited: its last reading stands
    }
  };
  const refresh = async (): Promise<void> => {
    const rows = await c.query<{ pid: number; backend_type: string }>(
      'SELECT pid, backend_type FROM pg_stat_activity WHERE datname = current_database()',
    );
    for (const r of rows.rows) {
      if (r.backend_type === 'autovacuum worker') vacuum.add(r.pid);
      sample(r.pid);
    }
  };
  await refresh();
  const timer = setInterval(() => void refresh().catch(() => undefined), 200);
  return {
    read() {
      for (const pid of seen.keys()) sample(pid);
      let sum = 0;
      for (const v of seen.values()) sum += v;
      return sum;
    },
    readVacuum() {
      let sum = 0;
      for (const pid of vacuum) sum += seen.get(pid) ?? 0;
      return sum;
    },
    async close() {
      clearInterval(timer);
      await c.end();
    },
  };
}
