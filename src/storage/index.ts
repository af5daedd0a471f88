// Entry point of the storage layer: picks the backend from the options.

import { openLevelStorage } from './level.js';
import { openMemoryStorage } from './memory.js';
import type { OpenOptions, Storage } from './types.js';

export { DataDirectoryInUseError } from './lock.js';
export { openLevelKv, openLevelStorage, type LevelOptions } from './level.js';
export { MemoryKv, openMemoryStorage } from './memory.js';
export type { Kv, KvOp, KvRange } from './kv.js';
export type { KvStorage } from './kv-storage.js';
export type * from './types.js';

/** `path` → LevelDB in that directory; no path → a fresh in-memory store. */
export async function openStorage(options: OpenOptions): Promise<Storage> {
  if (options.path !== undefined) return openLevelStorage(options.path);
  return openMemoryStorage();
}
