// Delete by filter on the key-value backends: one iterator over the filter's key range (the same
// scan Read uses, tuples.ts) collects the first `limit` matches with their stored values, and
// write-plan.ts turns them into the one batch — no second read of the keys it just saw. The
// caller holds the store's mutex from the scan until the batch has committed.

import { decodeTupleText, key, prefixEnd } from './codec.js';
import type { Kv } from './kv.js';
import { scanFor } from './tuples.js';
import type { TupleFilter } from './types.js';
import type { FoundTuple } from './write-plan.js';

export interface Matches {
  readonly found: FoundTuple[];
  readonly more: boolean;
}

/** The first `limit` tuples `filter` selects (Read order) with their stored state, and whether more match. */
export async function findMatching(kv: Kv, storeId: string, filter: TupleFilter, limit: number): Promise<Matches> {
  const scan = scanFor(filter);
  const base = scan.tag === 't' ? key.tuples(storeId) : key.byUser(storeId);
  const from = base + scan.prefix;
  const found: FoundTuple[] = [];
  const batches = kv.textBatches({ gte: from, lt: prefixEnd(from) })[Symbol.asyncIterator]();
  try {
    for (let b = await batches.next(); !b.done; b = await batches.next()) {
      for (const [k, v] of b.value) {
        const t = scan.decode(k.slice(base.length));
        if (!t || !scan.match(t)) continue;
        if (found.length === limit) return { found, more: true };
        const value = decodeTupleText(v);
        const stored = { condition: value.condition, expires_at: value.expires_at };
        // Field order as write-plan.ts `clean` gives it: the changelog entry is byte-identical.
        const tuple = { user: t.user, relation: t.relation, object: t.object };
        found.push({ key: scan.tag === 't' ? k : key.tuple(storeId, t), tuple, stored });
      }
    }
    return { found, more: false };
  } finally {
    await batches.return?.();
  }
}
