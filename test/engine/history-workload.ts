// A random history for the tests of queries at a past revision: a random model (and later
// versions of it), random writes and deletes with conditions and expiring tuples, expiry sweeps,
// and the oracle's side: the store's tuples at any revision folded from the changelog.

import type { AuthorizationModelInput, TupleKey } from '../../src/domain/types.js';
import type { Latch } from '../../src/engine/contract.js';
import { validateModel } from '../../src/model/validate.js';
import type { Storage } from '../../src/storage/types.js';
import { evolveModel, fittingTuple, randomModel, randomTuple, Rng } from '../oracle/generate.js';

export const keyOf = (t: TupleKey): string => `${t.object}#${t.relation}@${t.user}`;

/** A random model that validates (retrying the generator), and a valid later version of it. */
export function models(rng: Rng): [AuthorizationModelInput, AuthorizationModelInput] {
  for (;;) {
    const m = randomModel(rng);
    if (!valid(m)) continue;
    for (let i = 0; i < 20; i++) {
      const next = evolveModel(rng, m);
      if (valid(next)) return [m, next];
    }
    return [m, m];
  }
}

function valid(m: AuthorizationModelInput): boolean {
  try {
    validateModel(m);
    return true;
  } catch {
    return false;
  }
}

/**
 * Makes `steps` random writes (and an expiry sweep now and then); with `varied`, also deletes by
 * filter and Writes under rules 'error' (the other write paths of a datastore; off keeps the
 * random sequence other tests' workloads were chosen with).
 */
export async function randomWrites(
  latch: Latch,
  storeId: string,
  model: AuthorizationModelInput,
  rng: Rng,
  steps: number,
  varied = false,
): Promise<void> {
  let live = await liveTuples(latch, storeId);
  for (let i = 0; i < steps; i++) {
    const writes: TupleKey[] = [];
    const n = 1 + rng.int(3);
    for (let j = 0; j < n; j++) {
      const t = rng.chance(0.8) ? fittingTuple(rng, model) : randomTuple(rng, model);
      if (!t || live.has(keyOf(t)) || writes.some((w) => keyOf(w) === keyOf(t))) continue;
      // Some expire within a few milliseconds: later revisions are evaluated after their expiry.
      const expiring = rng.chance(0.25) ? { expires_at: new Date(Date.now() + 2 + rng.int(30)).toISOString() } : {};
      writes.push({ ...t, ...expiring });
    }
    if (varied && rng.chance(0.05) && live.size > 0) {
      // Delete by filter: every tuple of one object (one changelog record per request on memory
      // and LevelDB, latch_delete_matching on PostgreSQL).
      const object = (rng.pick([...live.values()]) as TupleKey).object;
      await latch.deleteTuples({ storeId, filter: { object }, dryRun: false, limit: 100 });
      for (const [k, t] of live) if (t.object === object) live.delete(k);
      continue;
    }
    const deletes = [...live.values()].filter(() => rng.chance(0.15)).slice(0, 3);
    // Rules 'error' hold (deletes of stored tuples, writes of new distinct keys): on PostgreSQL
    // such a Write goes to latch_write_all, the others to latch_write.
    const rule = varied && rng.chance(0.5) ? 'error' : 'ignore';
    let sent = writes;
    try {
      await latch.write({ storeId, writes, deletes, onDuplicate: rule, onMissing: rule });
    } catch {
      // Refused, so nothing changed (storage writes are atomic). Under load the few milliseconds
      // of an expiring tuple can pass before the write is validated ("not in the future"): sent
      // once more with those expiries a second ahead, so that the number of revisions, which the
      // tests count, does not depend on the machine's load. An invalid random tuple is refused
      // again. No random draw here: the sequence stays the same.
      if (!writes.some((w) => w.expires_at !== undefined)) continue;
      const later = new Date(Date.now() + 1000).toISOString();
      sent = writes.map((w) => (w.expires_at === undefined ? w : { ...w, expires_at: later }));
      try {
        await latch.write({ storeId, writes: sent, deletes, onDuplicate: rule, onMissing: rule });
      } catch {
        continue;
      }
    }
    for (const d of deletes) live.delete(keyOf(d));
    for (const w of sent) live.set(keyOf(w), w);
    if (rng.chance(0.1) && latch.sweepExpired) {
      await latch.sweepExpired();
      live = await liveTuples(latch, storeId);
    }
  }
}

async function liveTuples(latch: Latch, storeId: string): Promise<Map<string, TupleKey>> {
  const live = new Map<string, TupleKey>();
  let after: string | undefined;
  do {
    const page = await latch.read({ storeId, filter: {}, pageSize: 100, after, consistency: 'UNSPECIFIED' });
    for (const t of page.items) live.set(keyOf(t.key), t.key);
    after = page.next;
  } while (after);
  return live;
}

/** The store's tuples after each revision, from the changelog: `states[r]` for r in 0..head. */
export async function statesByRevision(storage: Storage, storeId: string): Promise<Map<string, TupleKey>[]> {
  const states: Map<string, TupleKey>[] = [new Map()];
  const cur = new Map<string, TupleKey>();
  let at = 0;
  for await (const c of storage.changesSince(storeId, 0)) {
    while (at < c.revision) {
      states[at] = new Map(cur);
      at++;
    }
    if (c.operation === 'delete') cur.delete(keyOf(c.tuple));
    else cur.set(keyOf(c.tuple), c.tuple);
  }
  states[at] = new Map(cur);
  return states;
}
