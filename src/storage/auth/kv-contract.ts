// The contract of the auth key-value store (./kv.ts opens one): ordered text keys and values,
// atomic batches. Its own module so that each backend (./kv.ts, ../postgres/auth-kv.ts) imports
// the contract without importing the other.

import type { KvRange } from '../kv.js';

export interface AuthKvOp {
  readonly type: 'put' | 'del';
  readonly key: string;
  readonly value?: string | undefined;
}

export type AuthKvRange = KvRange;

/** Contract: `batch` is atomic; `range` yields `[key, value]` in key order (reverse on request). */
export interface AuthKv {
  get(key: string): Promise<string | undefined>;
  batch(ops: readonly AuthKvOp[], sync?: boolean): Promise<void>;
  range(range: AuthKvRange): Promise<[string, string][]>;
  close(): Promise<void>;
}
