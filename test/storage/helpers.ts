// Small helpers shared by the storage tests: tuple literals, error assertions, collectors.

import { expect } from 'vitest';
import { AppError, type ErrorCode } from '../../src/errors.js';
import type { TupleKey } from '../../src/domain/types.js';
import type { Storage, TupleWrite } from '../../src/storage/types.js';

/** A backend under test: the contract plus the two probes the suite needs. */
export interface TestStorage extends Storage {
  /** Resolves once background reclamation has caught up. */
  settled(): Promise<void>;
  /** Keys (LevelDB, memory) or rows (PostgreSQL) the store occupies, its record included. */
  countStoreKeys(storeId: string): Promise<number>;
}

/** `doc:1#viewer@user:anne` → a TupleKey (the user may itself contain `#`). */
export const tk = (s: string, condition?: TupleKey['condition']): TupleKey => {
  const m = /^([^#]+)#([^@]+)@(.+)$/.exec(s);
  if (!m) throw new Error(`bad tuple ${s}`);
  return {
    object: m[1] as string,
    relation: m[2] as string,
    user: m[3] as string,
    ...(condition ? { condition } : {}),
  };
};
export const str = (t: TupleKey): string => `${t.object}#${t.relation}@${t.user}`;

export const writes = (...ts: string[]): TupleWrite => ({
  deletes: [],
  writes: ts.map((t) => tk(t)),
  onDuplicate: 'error',
  onMissing: 'error',
});
export const deletes = (...ts: string[]): TupleWrite => ({
  deletes: ts.map((t) => tk(t)),
  writes: [],
  onDuplicate: 'error',
  onMissing: 'error',
});

export async function rejectsWith(p: Promise<unknown>, code: ErrorCode): Promise<AppError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  expect((err as AppError).code).toBe(code);
  return err as AppError;
}

export async function collect<T>(it: AsyncIterable<T> | Iterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

export async function allTuples(s: Storage, storeId: string): Promise<string[]> {
  return (await s.readTuples(storeId, {}, { pageSize: 100 })).items.map((t) => str(t.key));
}
