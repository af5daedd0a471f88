// Helpers shared by the index tests: a snapshot's whole content as strings, to compare indexes
// (and storage) tuple by tuple rather than by counts.

import type { TupleKey } from '../../src/domain/types.js';
import type { IndexSnapshot } from '../../src/index/store-index.js';

/** A stored tuple as `doc:1#viewer@user:anne`, followed by its condition as JSON when it has one. */
export const stored = (t: TupleKey): string =>
  `${t.object}#${t.relation}@${t.user}${t.condition ? JSON.stringify(t.condition) : ''}`;

/** Every tuple a snapshot holds (each node × each name through `users`), sorted, as `stored` strings. */
export function everyTuple(s: IndexSnapshot): string[] {
  const out: string[] = [];
  for (let n = 0; n < s.nodeCount; n++) {
    for (let r = 0; r < s.nameCount; r++) {
      for (const e of s.users(s.nodeOf(n), s.nameOf(r)))
        out.push(
          stored({
            object: e.object,
            relation: e.relation,
            user: e.user,
            ...(e.condition ? { condition: e.condition } : {}),
          }),
        );
    }
  }
  return out.sort();
}

/** A deterministic stream of u32s (xorshift), so a failure reproduces. */
export function numbers(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x;
  };
}
