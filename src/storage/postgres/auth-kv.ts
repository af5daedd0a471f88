// The auth DB and the store-log DB of src/storage/auth on PostgreSQL: the same ordered
// key-value contract (AuthKv) as on LevelDB, one table each (latch_auth, latch_store_logs, latch_decisions), so
// every node reads and writes one authentication state. Keys are stored with the NUL-free code
// of ./db.ts (`enc`), which keeps their byte order; a batch is one transaction.

import type { AuthKv, AuthKvOp, AuthKvRange } from '../auth/kv-contract.js';
import { dec, Db, enc, q, type PostgresOptions } from './db.js';

export type AuthTable = 'latch_auth' | 'latch_store_logs' | 'latch_decisions';

export class PgAuthKv implements AuthKv {
  private readonly db: Db;

  constructor(
    options: PostgresOptions,
    private readonly table: AuthTable,
  ) {
    this.db = new Db({ ...options, poolSize: 2 });
  }

  async get(key: string): Promise<string | undefined> {
    const v = await this.db.value(`SELECT value FROM ${this.table} WHERE key = $1`, [enc(key)]);
    return typeof v === 'string' ? v : undefined;
  }

  /** One transaction; puts replace. `sync` is implied (every commit is durable). */
  async batch(ops: readonly AuthKvOp[]): Promise<void> {
    if (ops.length === 0) return;
    const puts = new Map<string, string>();
    const dels = new Set<string>();
    for (const op of ops) {
      const k = enc(op.key);
      if (op.type === 'put') {
        puts.set(k, op.value ?? '');
        dels.delete(k);
      } else {
        dels.add(k);
        puts.delete(k);
      }
    }
    await this.db.tx(async (c) => {
      if (dels.size > 0) await q(c, `DELETE FROM ${this.table} WHERE key = ANY ($1::text[])`, [[...dels]]);
      if (puts.size > 0) {
        await q(
          c,
          `INSERT INTO ${this.table} (key, value) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`,
          [[...puts.keys()], [...puts.values()]],
        );
      }
    });
  }

  async range(r: AuthKvRange): Promise<[string, string][]> {
    const where: string[] = [];
    const values: unknown[] = [];
    const bound = (op: string, v: string | undefined): void => {
      if (v === undefined) return;
      values.push(enc(v));
      where.push(`key ${op} $${values.length}`);
    };
    bound('>', r.gt);
    bound('>=', r.gte);
    bound('<', r.lt);
    const limit = r.limit !== undefined && r.limit >= 0 ? ` LIMIT ${Math.floor(r.limit)}` : '';
    const rows = await this.db.rows(
      `SELECT key, value FROM ${this.table}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY key${r.reverse ? ' DESC' : ''}${limit}`,
      values,
    );
    return rows.map((row) => [dec(row[0] as string), row[1] as string]);
  }

  close(): Promise<void> {
    return this.db.close();
  }
}
