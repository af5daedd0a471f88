// The LevelDB backend (the project's only importer of `level`): a Kv over classic-level with
// binary keys and values, every batch synced when asked, and exclusive use of the directory.

import { Level } from 'level';
import { mkdir } from 'node:fs/promises';
import { KvStorage } from './kv-storage.js';
import type { Kv, KvOp, KvRange } from './kv.js';
import { clearHolderPid, DataDirectoryInUseError, isLockedError, readHolderPid, writeHolderPid } from './lock.js';

type Db = Level<Buffer, Uint8Array>;

const bin = (k: string): Buffer => Buffer.from(k, 'latin1');
const ROWS_PER_READ = 256;

/** classic-level range options; undefined bounds must be left out, not passed as undefined. */
function levelRange(r: KvRange): { gt?: Buffer; gte?: Buffer; lt?: Buffer; reverse: boolean; limit: number } {
  const o: { gt?: Buffer; gte?: Buffer; lt?: Buffer; reverse: boolean; limit: number } = { reverse: r.reverse ?? false, limit: r.limit ?? -1 };
  if (r.gt !== undefined) o.gt = bin(r.gt);
  if (r.gte !== undefined) o.gte = bin(r.gte);
  if (r.lt !== undefined) o.lt = bin(r.lt);
  return o;
}

class LevelKv implements Kv {
  constructor(private readonly db: Db) {}

  async get(key: string): Promise<Uint8Array | undefined> {
    return this.db.get(bin(key));
  }

  async getMany(keys: readonly string[]): Promise<(Uint8Array | undefined)[]> {
    return keys.length === 0 ? [] : this.db.getMany(keys.map(bin));
  }

  async batch(ops: readonly KvOp[], sync: boolean): Promise<void> {
    const levelOps = ops.map((op) => (op.type === 'put' ? { type: 'put' as const, key: bin(op.key), value: op.value } : { type: 'del' as const, key: bin(op.key) }));
    await this.db.batch(levelOps, { sync });
  }

  /** The iterator (and so its snapshot) is created now, not at the first `next()`. */
  entries(range: KvRange): AsyncIterable<readonly [string, Uint8Array]> {
    const it = this.db.iterator(levelRange(range));
    return {
      async *[Symbol.asyncIterator]() {
        try {
          for (let rows = await it.nextv(ROWS_PER_READ); rows.length > 0; rows = await it.nextv(ROWS_PER_READ)) {
            for (const [k, v] of rows) yield [k.toString('latin1'), v] as const;
          }
        } finally {
          await it.close();
        }
      },
    };
  }

  keys(range: KvRange): AsyncIterable<string> {
    const it = this.db.keys(levelRange(range));
    return {
      async *[Symbol.asyncIterator]() {
        try {
          for (let rows = await it.nextv(ROWS_PER_READ); rows.length > 0; rows = await it.nextv(ROWS_PER_READ)) {
            for (const k of rows) yield k.toString('latin1');
          }
        } finally {
          await it.close();
        }
      },
    };
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

export interface LevelOptions {
  /** Background reclamation of deleted stores (default true). */
  readonly reclaim?: boolean | undefined;
}

/**
 * Opens (creating if needed) the LevelDB directory at `path`. Fails fast with
 * DataDirectoryInUseError when another process (or another handle) holds it.
 */
export async function openLevelStorage(path: string, options: LevelOptions = {}): Promise<KvStorage> {
  await mkdir(path, { recursive: true });
  const db: Db = new Level<Buffer, Uint8Array>(path, { keyEncoding: 'buffer', valueEncoding: 'view' });
  try {
    await db.open();
  } catch (err) {
    if (isLockedError(err)) throw new DataDirectoryInUseError(path, await readHolderPid(path));
    throw err;
  }
  await writeHolderPid(path);
  const storage = new KvStorage('leveldb', new LevelKv(db), { reclaim: options.reclaim, onClose: () => clearHolderPid(path) });
  return storage.init();
}
