// Entry point of the storage layer: picks the backend from the options.

import { openLevelStorage } from './level.js';
import { openMemoryStorage } from './memory.js';
import { openPostgresStorage } from './postgres/index.js';
import type { OpenOptions, Storage } from './types.js';

export { DataDirectoryInUseError } from './lock.js';
export { openLevelKv, openLevelStorage, type LevelOptions } from './level.js';
export { MemoryKv, openMemoryStorage } from './memory.js';
export { openPostgresStorage, PostgresStartError, redactUrl, type OpenPostgresOptions } from './postgres/index.js';
export type { Kv, KvOp, KvRange } from './kv.js';
export type { KvStorage } from './kv-storage.js';
export type * from './types.js';

/** `postgres` → PostgreSQL at that URL; else `path` → LevelDB in that directory; else memory. */
export async function openStorage(options: OpenOptions): Promise<Storage> {
  if (options.postgres !== undefined) return openPostgresStorage(options.postgres);
  if (options.path !== undefined) return openLevelStorage(options.path);
  return openMemoryStorage();
}
