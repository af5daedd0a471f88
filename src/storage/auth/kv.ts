// The small ordered key-value store behind the auth DB (`<dataDir>/auth`) and the store-log DB
// (`<dataDir>/logs`): a text view over the storage layer's Kv — LevelDB through `openLevelKv`
// (level.ts stays the one importer of `level`, with its exclusive lock and holder pid file) or
// `MemoryKv` for `--datastore memory` — or, for `--datastore postgres`, a table of PostgreSQL
// (../postgres/auth-kv.ts) shared by every node. Keys here are ASCII, so both backends return range scans
// in the same order; values are UTF-8 text.

import { mkdir } from 'node:fs/promises';
import type { Kv, KvOp } from '../kv.js';
import type { AuthKv, AuthKvOp, AuthKvRange } from './kv-contract.js';
import { openLevelKv } from '../level.js';
import { MemoryKv } from '../memory.js';
import { PgAuthKv, type AuthTable } from '../postgres/auth-kv.js';
import type { PostgresOptions } from '../postgres/db.js';

export type { AuthKv, AuthKvOp, AuthKvRange } from './kv-contract.js';

const utf8 = new TextDecoder();

const text = (v: Uint8Array): string => utf8.decode(v);

class TextKv implements AuthKv {
  constructor(private readonly kv: Kv) {}

  async get(key: string): Promise<string | undefined> {
    const v = await this.kv.get(key);
    return v === undefined ? undefined : text(v);
  }

  async batch(ops: readonly AuthKvOp[], sync = false): Promise<void> {
    if (ops.length === 0) return;
    const out: KvOp[] = ops.map((op) =>
      op.type === 'put'
        ? { type: 'put', key: op.key, value: Buffer.from(op.value ?? '', 'utf8') }
        : { type: 'del', key: op.key },
    );
    await this.kv.batch(out, sync);
  }

  async range(range: AuthKvRange): Promise<[string, string][]> {
    const rows: [string, string][] = [];
    for await (const batch of this.kv.textBatches(range)) for (const [k, v] of batch) rows.push([k, v]);
    return rows;
  }

  close(): Promise<void> {
    return this.kv.close();
  }
}

/**
 * Opens the table of PostgreSQL when `postgres` is given (shared by every node), else (creating,
 * mode 0700: the auth DB holds private signing keys) the LevelDB directory at `path`, or an
 * in-memory store when `path` is undefined. Fails with the storage layer's
 * DataDirectoryInUseError when another process holds the directory (stop the server first).
 */
export async function openAuthKv(
  path: string | undefined,
  postgres?: { readonly options: PostgresOptions; readonly table: AuthTable },
): Promise<AuthKv> {
  if (postgres) return new PgAuthKv(postgres.options, postgres.table);
  if (path === undefined) return new TextKv(new MemoryKv());
  await mkdir(path, { recursive: true, mode: 0o700 });
  return new TextKv(await openLevelKv(path));
}
