// The small ordered key-value store behind the auth DB (`<dataDir>/auth`) and the store-log DB
// (`<dataDir>/logs`): LevelDB through `level` on disk, a sorted in-memory map for
// `--datastore memory`. Both keep keys in UTF-16 code-unit order for the ASCII keys used here,
// so range scans return the same rows on either backend.

import { Level } from 'level';
import { mkdir } from 'node:fs/promises';

export interface AuthKvOp {
  readonly type: 'put' | 'del';
  readonly key: string;
  readonly value?: string | undefined;
}

export interface AuthKvRange {
  readonly gte?: string | undefined;
  readonly gt?: string | undefined;
  readonly lt?: string | undefined;
  readonly lte?: string | undefined;
  readonly reverse?: boolean | undefined;
  readonly limit?: number | undefined;
}

/** Contract: `batch` is atomic; `range` yields `[key, value]` in key order (reverse on request). */
export interface AuthKv {
  get(key: string): Promise<string | undefined>;
  batch(ops: readonly AuthKvOp[], sync?: boolean): Promise<void>;
  range(range: AuthKvRange): Promise<[string, string][]>;
  close(): Promise<void>;
}

type Db = Level<string, string>;

function levelRange(r: AuthKvRange): Record<string, string | number | boolean> {
  const o: Record<string, string | number | boolean> = { reverse: r.reverse ?? false, limit: r.limit ?? -1 };
  for (const k of ['gte', 'gt', 'lt', 'lte'] as const) {
    const v = r[k];
    if (v !== undefined) o[k] = v;
  }
  return o;
}

class LevelAuthKv implements AuthKv {
  constructor(private readonly db: Db) {}

  async get(key: string): Promise<string | undefined> {
    return this.db.get(key);
  }

  async batch(ops: readonly AuthKvOp[], sync = false): Promise<void> {
    if (ops.length === 0) return;
    const b = this.db.batch();
    for (const op of ops) {
      if (op.type === 'put') b.put(op.key, op.value ?? '');
      else b.del(op.key);
    }
    await b.write({ sync });
  }

  async range(range: AuthKvRange): Promise<[string, string][]> {
    return this.db.iterator(levelRange(range)).all();
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

/** Sorted keys + a value map. Inserts are O(n) worst case but logs arrive in time order (appends). */
export class MemoryAuthKv implements AuthKv {
  readonly #keys: string[] = [];
  readonly #values = new Map<string, string>();

  #index(key: string): number {
    let lo = 0;
    let hi = this.#keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.#keys[mid] as string) < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  async get(key: string): Promise<string | undefined> {
    return this.#values.get(key);
  }

  async batch(ops: readonly AuthKvOp[]): Promise<void> {
    for (const op of ops) {
      const at = this.#index(op.key);
      const present = this.#keys[at] === op.key;
      if (op.type === 'put') {
        if (!present) this.#keys.splice(at, 0, op.key);
        this.#values.set(op.key, op.value ?? '');
      } else if (present) {
        this.#keys.splice(at, 1);
        this.#values.delete(op.key);
      }
    }
  }

  async range(r: AuthKvRange): Promise<[string, string][]> {
    let from = r.gte !== undefined ? this.#index(r.gte) : 0;
    if (r.gt !== undefined) {
      from = this.#index(r.gt);
      if (this.#keys[from] === r.gt) from++;
    }
    let to = this.#keys.length;
    if (r.lt !== undefined) to = Math.min(to, this.#index(r.lt));
    if (r.lte !== undefined) {
      const i = this.#index(r.lte);
      to = Math.min(to, this.#keys[i] === r.lte ? i + 1 : i);
    }
    const keys = this.#keys.slice(from, Math.max(from, to));
    if (r.reverse) keys.reverse();
    const limited = r.limit !== undefined && r.limit >= 0 ? keys.slice(0, r.limit) : keys;
    return limited.map((k) => [k, this.#values.get(k) ?? '']);
  }

  async close(): Promise<void> {}
}

/** Opens (creating) a LevelDB directory; fails when another process holds it. */
export async function openAuthKv(path: string | undefined): Promise<AuthKv> {
  if (path === undefined) return new MemoryAuthKv();
  await mkdir(path, { recursive: true, mode: 0o700 });
  const db: Db = new Level<string, string>(path, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
  try {
    await db.open();
  } catch (err) {
    const locked = err instanceof Error && (err as Error & { cause?: { code?: string } }).cause?.code === 'LEVEL_LOCKED';
    throw new Error(locked ? `${path} is in use by another process (stop the server first)` : `cannot open ${path}: ${String(err)}`, { cause: err });
  }
  return new LevelAuthKv(db);
}
