// A store's index as it was at an earlier revision: the current snapshot's base and overlay with
// the changes made since undone, published as an ordinary IndexSnapshot, so the walker, the
// ListObjects walk and the TypeScript evaluators read it exactly as they read the live one. The
// live index is never touched: the undo goes into a private copy of the overlay records, and the
// only shared state written is the dictionary, which is append-only (restored tuples may intern
// names or nodes the live index no longer holds; live snapshots never see ids above their count).
//
// Example: the live snapshot at revision 9 holds `doc:1#viewer@user:bob` (written at 8) and not
// `doc:1#viewer@user:anne` (deleted at 9). Undo {absent: [bob], present: [anne]} at revision 7
// gives a snapshot whose `users('doc:1','viewer')` yields anne only.

import type { TupleKey } from '../domain/types.js';
import { Overlay } from './overlay.js';
import { IndexSnapshot } from './snapshot.js';
import { internInto } from './store-index.js';

/** The net difference between the target revision and the snapshot's, per tuple key. */
export interface Undo {
  /** Keys that did not exist at the target (written since): removed if present. */
  readonly absent: readonly TupleKey[];
  /** Tuples as they were at the target, condition and `expires_at` included: restored. */
  readonly present: readonly TupleKey[];
}

/**
 * A snapshot of `current`'s store at `revision` (< current.revision), given the undo between them.
 * Its memory (one overlay image of the current overlay plus the undo records) is its own; it holds
 * the current base until it is collected or retired. Synchronous: call it in the macrotask that
 * obtained `current`, or with `current` pinned.
 */
export function pastSnapshot(current: IndexSnapshot, revision: number, undo: Undo): IndexSnapshot {
  const dict = current.dict;
  const overlay = Overlay.from(current.base, current.overlay);
  const k = new Uint32Array(4);
  const apply = (del: boolean): void => overlay.applyRecord(revision, del, k, 0);
  try {
    const remove = (t: TupleKey): void => {
      const hash = t.user.lastIndexOf('#');
      // A key whose strings were never interned is in neither the base nor the overlay.
      if (dict.nodes.get(t.object) === undefined) return;
      if (dict.nodes.get(hash === -1 ? t.user : t.user.slice(0, hash)) === undefined) return;
      internInto(dict, { object: t.object, relation: t.relation, user: t.user }, k, 0);
      apply(true);
    };
    for (const t of undo.absent) remove(t);
    // Delete first: the base may hold the key with a later condition or expiry.
    for (const t of undo.present) remove(t);
    for (const t of undo.present) {
      internInto(dict, t, k, 0);
      apply(false);
    }
    return new IndexSnapshot(dict, current.base, overlay.image(), revision);
  } finally {
    overlay.drop();
  }
}
